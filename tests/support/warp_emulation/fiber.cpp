#include "warp_emulation/fiber.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__)

// switch(save, load): pushes the callee-saved registers and the SSE and x87
// control words on the caller's stack, stores its stack pointer in *save,
// and pops the same from `load`. A new fiber's stack is laid out as if it
// had called switch itself, returning into fiber_entry, which calls the
// entry function held in r13 on a 16-byte aligned stack.
asm(R"(
  .text
  .p2align 4
  .globl warp_emulation_switch_stacks
  .hidden warp_emulation_switch_stacks
  .type warp_emulation_switch_stacks, @function
warp_emulation_switch_stacks:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size warp_emulation_switch_stacks, .-warp_emulation_switch_stacks

  .p2align 4
  .globl warp_emulation_fiber_entry
  .hidden warp_emulation_fiber_entry
  .type warp_emulation_fiber_entry, @function
warp_emulation_fiber_entry:
  .cfi_startproc
  .cfi_undefined rip
  callq *%r13
  ud2
  .cfi_endproc
  .size warp_emulation_fiber_entry, .-warp_emulation_fiber_entry
)");

extern "C" void warp_emulation_switch_stacks(void** save, void* load);
extern "C" void warp_emulation_fiber_entry();

namespace warp_emulation {

void prepare_fiber(Fiber& fiber, char* stack, size_t bytes, void (*entry)()) {
  const auto top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t{15};
  // The return address sits 8 bytes below a 16-byte boundary, so that
  // fiber_entry's call finds the stack as a call expects it.
  auto* slot = reinterpret_cast<uint64_t*>(top - 24);
  slot[0] = reinterpret_cast<uint64_t>(&warp_emulation_fiber_entry);
  slot[-1] = 0;                                  // rbp
  slot[-2] = 0;                                  // rbx
  slot[-3] = 0;                                  // r12
  slot[-4] = reinterpret_cast<uint64_t>(entry);  // r13
  slot[-5] = 0;                                  // r14
  slot[-6] = 0;                                  // r15
  uint32_t control[2];                           // the caller's rounding and exception masks
  asm volatile("stmxcsr %0" : "=m"(control[0]));
  asm volatile("fnstcw %0" : "=m"(*reinterpret_cast<uint16_t*>(&control[1])));
  control[1] &= 0xffffu;
  slot[-7] = uint64_t{control[0]} | (uint64_t{control[1]} << 32);
  fiber.stack_pointer = &slot[-7];
}

void switch_fiber(Fiber& from, Fiber& to) { warp_emulation_switch_stacks(&from.stack_pointer, to.stack_pointer); }

}  // namespace warp_emulation

#else

namespace warp_emulation {

void prepare_fiber(Fiber& fiber, char* stack, size_t bytes, void (*entry)()) {
  fiber = Fiber{};
  if (getcontext(&fiber.context) != 0) {
    std::perror("warp emulation: getcontext");
    std::abort();
  }
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = bytes;
  fiber.context.uc_link = nullptr;
  makecontext(&fiber.context, entry, 0);
}

void switch_fiber(Fiber& from, Fiber& to) {
  swapcontext(&from.context, &to.context);
  // AddressSanitizer's swapcontext clears the shadow of the whole stack a
  // context names at every switch into it: at its start is enough.
  to.context.uc_stack.ss_sp = nullptr;
  to.context.uc_stack.ss_size = 0;
}

}  // namespace warp_emulation

#endif
