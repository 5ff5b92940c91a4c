// A fiber: a stack and the registers of code paused on it. The emulator
// switches fibers at every collective of every thread, so a switch is a
// handful of instructions on x86-64 (the registers the calling convention
// preserves, the floating-point control words); elsewhere it is ucontext's
// swapcontext, which also saves the signal mask (a system call each switch).
#pragma once

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace warp_emulation {

struct Fiber {
#if defined(__x86_64__)
  void* stack_pointer = nullptr;
#else
  ucontext_t context{};
  bool started = false;
#endif
};

// `fiber`, when first switched to, runs entry() on [stack, stack + bytes).
// entry never returns: it switches away for good.
void prepare_fiber(Fiber& fiber, char* stack, size_t bytes, void (*entry)());

// Pauses the caller in `from` and runs `to` until something switches back.
void switch_fiber(Fiber& from, Fiber& to);

}  // namespace warp_emulation
