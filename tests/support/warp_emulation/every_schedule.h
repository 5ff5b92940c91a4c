// For emulated tests: `check()` under each of the emulator's schedules
// (Schedule, stand_in/cuda_runtime.h), its name traced in any failure; the
// emulator is left in lockstep.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <utility>

namespace warp_emulation {

template <class Check>
void for_every_schedule(const Check& check) {
  const std::pair<Schedule, const char*> schedules[] = {
      {Schedule::lockstep, "lockstep"},
      {Schedule::warp_by_warp_ascending, "warp by warp, ascending"},
      {Schedule::warp_by_warp_descending, "warp by warp, descending"}};
  for (const auto& [schedule, name] : schedules) {
    SCOPED_TRACE(name);
    set_schedule(schedule);
    check();
  }
  set_schedule(Schedule::lockstep);
}

}  // namespace warp_emulation
