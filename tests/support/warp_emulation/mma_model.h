// The emulator's model of the warp-level TF32 product: what each lane's
// registers hold is the PTX ISA's statement of the fragments of
// mma.m16n8k8 with .tf32 operands, written here apart from the kernels'
// own (kernels/attention/cuda/mma_tf32_layout.h), so that a kernel built on
// a wrong layout fails on the emulator rather than agreeing with itself.
#ifndef WARP_EMULATION_MMA_MODEL_H
#define WARP_EMULATION_MMA_MODEL_H

#include <cstdint>

namespace warp_emulation {

// One lane's operands as it enters the instruction.
struct MmaOperands {
  uint32_t a[4];
  uint32_t b[2];
  float c[4];
};

// D = A B + C for the registers of `lane`, from every lane's operands. A
// TF32 operand is the top 19 bits of its register (the rest ignored, as by
// the hardware); the products are exact and summed with C in double,
// rounded once to float32.
void mma_m16n8k8_tf32_lane(const MmaOperands (&warp)[32], int lane, float (&d)[4]);

}  // namespace warp_emulation

#endif  // WARP_EMULATION_MMA_MODEL_H
