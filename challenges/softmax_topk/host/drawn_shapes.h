// Shapes drawn from a case's seed around the boundaries kernels have (a
// vocabulary one off a multiple of 32, 128, 256, 1024 or 4096; rows above
// 4096 and 65536 off every block of 64; k at or next to the vocabulary or
// one off a power of two), besides the listed ones. Replayable from the
// printed seed.
#pragma once

#include <cstdint>
#include <string>

#include "topk_case.h"

namespace softmax_topk {

enum class Drawn { vocab_edges, many_rows, k_edges };
const Drawn kDrawnKinds[] = {Drawn::vocab_edges, Drawn::many_rows, Drawn::k_edges};

std::string drawn_name(Drawn kind);
Drawn drawn_from_name(const std::string& name);

// vocab_edges: vocab = 32, 128, 256, 1024 or 4096 times 1 to 8, plus or
//   minus 1; k one off a power of two (or 1, 2), at most 256 and the vocab.
// many_rows: 4096 < rows < 8192 or 65536 < rows < 66560, rows % 64 != 0,
//   a vocab of 1 to 65, k at most 16.
// k_edges: k one off a power of two or at it (1 to 256); vocab k, k + 1,
//   k + 31 or 2k + 1.
TopkCase draw_shape(Drawn kind, uint64_t seed);

}  // namespace softmax_topk
