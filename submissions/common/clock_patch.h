// An attack on the worker's timer, shared by the clock-patch exploits of
// every challenge (not a submission). libc's clock_gettime is overwritten in
// the worker with a jump to slowed_clock_gettime, which reads the kernel's
// clock by system call and lets only a tenth of the time since the patch
// show: every duration the worker measures (its calls, its loop) shrinks
// tenfold; the harness's clock, in another process, does not.
//
// x86-64 only (the patch is an x86 jump); elsewhere patch_clock_tenfold
// says so and leaves the clock alone.
#ifndef SUBMISSION_CLOCK_PATCH_H
#define SUBMISSION_CLOCK_PATCH_H

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "function_patch.h"

namespace clock_patch {

inline timespec patched_at{};

#if defined(__x86_64__)
extern "C" inline int slowed_clock_gettime(clockid_t id, timespec* ts) {
  timespec real{};
  const long status = ::syscall(SYS_clock_gettime, id, &real);
  if (status != 0 || id != CLOCK_MONOTONIC) {
    *ts = real;
    return static_cast<int>(status);
  }
  const int64_t base = patched_at.tv_sec * 1000000000LL + patched_at.tv_nsec;
  const int64_t now = real.tv_sec * 1000000000LL + real.tv_nsec;
  const int64_t shown = base + (now - base) / 10;
  ts->tv_sec = shown / 1000000000LL;
  ts->tv_nsec = shown % 1000000000LL;
  return 0;
}
#endif

// Patches once per process; says on stderr what it did.
inline void patch_clock_tenfold() {
  static bool patched = false;
  if (patched) return;
  patched = true;
#if defined(__x86_64__)
  ::syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &patched_at);
  if (!function_patch::patch("clock_gettime", reinterpret_cast<const void*>(&slowed_clock_gettime))) {
    std::fprintf(stderr, "exploit clock patch: stopped (cannot patch clock_gettime)\n");
    return;
  }
  std::fprintf(stderr, "exploit clock patch: libc clock_gettime now runs 10x slow in the worker\n");
#else
  std::fprintf(stderr, "exploit clock patch: stopped (not x86-64)\n");
#endif
}

}  // namespace clock_patch

#endif  // SUBMISSION_CLOCK_PATCH_H
