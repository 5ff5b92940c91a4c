// PTX ISA, "Matrix Fragments for mma.m16n8k8" (.tf32 operands), with
// groupID = laneid >> 2 and threadID_in_group = laneid % 4:
//   A (16 x 8): a0 (groupID, tig), a1 (groupID + 8, tig),
//               a2 (groupID, tig + 4), a3 (groupID + 8, tig + 4)
//   B (8 x 8):  b0 (tig, groupID), b1 (tig + 4, groupID)
//   C, D (16 x 8): c0, c1 (groupID, 2 tig + {0, 1}),
//                  c2, c3 (groupID + 8, 2 tig + {0, 1})
// Below, the other way round: which lane and register holds an element.
#include "warp_emulation/mma_model.h"

#include <cstring>

namespace warp_emulation {
namespace {

struct Holder {
  int lane;
  int reg;
};

Holder a_holder(int row, int k) { return {4 * (row % 8) + k % 4, (row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0)}; }
Holder b_holder(int k, int col) { return {4 * col + k % 4, k >= 4 ? 1 : 0}; }
Holder c_holder(int row, int col) { return {4 * (row % 8) + col / 2, (row >= 8 ? 2 : 0) + col % 2}; }

double tf32_operand(uint32_t bits) {
  const uint32_t kept = bits & 0xffffe000u;
  float x;
  std::memcpy(&x, &kept, sizeof x);
  return x;
}

}  // namespace

void mma_m16n8k8_tf32_lane(const MmaOperands (&warp)[32], int lane, float (&d)[4]) {
  for (int r = 0; r < 4; ++r) {
    // The element this register holds, found by searching the layout, so
    // that D's placement rests on the same statement as C's.
    int row = -1, col = -1;
    for (int i = 0; i < 16 && row < 0; ++i) {
      for (int j = 0; j < 8; ++j) {
        const Holder h = c_holder(i, j);
        if (h.lane == lane && h.reg == r) {
          row = i;
          col = j;
          break;
        }
      }
    }
    const Holder c = c_holder(row, col);
    double sum = warp[c.lane].c[c.reg];
    for (int k = 0; k < 8; ++k) {
      const Holder a = a_holder(row, k), b = b_holder(k, col);
      sum += tf32_operand(warp[a.lane].a[a.reg]) * tf32_operand(warp[b.lane].b[b.reg]);
    }
    d[r] = static_cast<float>(sum);
  }
}

}  // namespace warp_emulation
