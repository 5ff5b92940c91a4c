// Repeated, timed calls of one op over several input sets.
#pragma once

#include <utility>
#include <vector>

#include "harness/ipc/protocol.h"
#include "harness/worker/abi_adapter.h"
#include "harness/worker/device_backend.h"

namespace harness {

struct TimedSet {
  BoundCall call;
  // Outputs to re-poison before every call, so that a call that skips its
  // work (returning what an earlier call left behind) leaves poison that
  // the harness finds.
  std::vector<std::pair<MappedBuffer*, protocol::TensorBinding>> outputs;
};

// Warm-up (every set at least once), then timed calls rotating through the
// sets until the policy says stop. Stops at the first status other than OK
// and reports it. DeviceFault propagates.
protocol::TimeReply run_timing_loop(DeviceBackend& backend, std::vector<TimedSet>& sets,
                                    const protocol::TimingPolicy& policy);

}  // namespace harness
