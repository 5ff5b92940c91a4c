// Which element of a warp-level m16n8k8 TF32 product each lane holds in
// each register (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32), as
// plain functions the host can run too: tests/attention/test_mma_layout.cpp
// plays a warp's fragments through them on the CPU.
//
// Lane l of a warp is in group g = l / 4, at t = l % 4 within it.
//   A (16 x 8, row-major), registers 0..3: row g + 8 (r % 2), column t + 4 (r / 2)
//   B (8 x 8, k by n),     registers 0..1: row t + 4 r, column g
//   C/D (16 x 8),          registers 0..3: row g + 8 (r / 2), column 2 t + r % 2
#ifndef ATTENTION_CUDA_MMA_TF32_LAYOUT_H
#define ATTENTION_CUDA_MMA_TF32_LAYOUT_H

#if defined(__CUDACC__)
#define ATTENTION_HOST_DEVICE __host__ __device__
#else
#define ATTENTION_HOST_DEVICE
#endif

#include <cmath>
#include <cstdint>

namespace attention::cuda::mma {

// The bits of float `bits` rounded to TF32 (10 mantissa bits), to nearest
// with ties away from zero, by integer operations alone. A NaN stays a NaN
// (its quiet bit set), an infinity stays one, and a finite value within half
// a TF32 step of FLT_MAX is truncated instead of rounded up to infinity.
ATTENTION_HOST_DEVICE constexpr uint32_t round_to_tf32_bits(uint32_t bits) {
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return (bits | 0x00400000u) & 0xffffe000u;
  if (magnitude >= 0x7f7ff000u) return bits & 0xffffe000u;
  return (bits + 0x1000u) & 0xffffe000u;
}

// round_to_tf32_bits(bits of x) by a compare of |x| and a select, an add
// and a mask (four instructions on a GPU, where the exact form takes about
// eight): the same value for every input but signalling NaNs, which it does
// not quiet (one whose payload lies wholly in the 13 bits dropped becomes
// an infinity). Float32 arithmetic makes only quiet NaNs.
ATTENTION_HOST_DEVICE inline uint32_t round_to_tf32_bits_fast(float x, uint32_t bits) {
  constexpr float kLargestRoundedUp = 0x1.ffdffep127f;  // bits 0x7f7fefff: from the next up, rounding overflows
  const uint32_t half_step = fabsf(x) <= kLargestRoundedUp ? 0x1000u : 0u;
  return (bits + half_step) & 0xffffe000u;
}

ATTENTION_HOST_DEVICE constexpr int a_row(int lane, int r) { return lane / 4 + 8 * (r % 2); }
ATTENTION_HOST_DEVICE constexpr int a_col(int lane, int r) { return lane % 4 + 4 * (r / 2); }
ATTENTION_HOST_DEVICE constexpr int b_row(int lane, int r) { return lane % 4 + 4 * r; }
ATTENTION_HOST_DEVICE constexpr int b_col(int lane) { return lane / 4; }
ATTENTION_HOST_DEVICE constexpr int c_row(int lane, int r) { return lane / 4 + 8 * (r / 2); }
ATTENTION_HOST_DEVICE constexpr int c_col(int lane, int r) { return 2 * (lane % 4) + r % 2; }

// A product's C tile read as the A operand of the next product (the
// probabilities of a tile of keys times V): A register r of `lane` is C
// register c_source_register(lane, r) of lane c_source_lane(lane, r), the
// lane of the same group that holds its column.
ATTENTION_HOST_DEVICE constexpr int c_source_lane(int lane, int r) { return (lane & ~3) | (a_col(lane, r) / 2); }
ATTENTION_HOST_DEVICE constexpr int c_source_register(int lane, int r) { return 2 * (r % 2) + a_col(lane, r) % 2; }

}  // namespace attention::cuda::mma

#endif  // ATTENTION_CUDA_MMA_TF32_LAYOUT_H
