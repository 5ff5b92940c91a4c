// Shapes drawn from a case's seed around the boundaries kernels have (row
// blocks of 64 and 128 above 4096 and 65536 rows, widths off every vector
// width), besides the listed ones: the next kernel's boundaries are not
// always the ones someone thought of. Replayable from the printed seed.
#pragma once

#include <cstdint>
#include <string>

#include "ln_case.h"

namespace layernorm {

// The kinds of drawn case, and their names in case ids (edge.drawn.<name>).
enum class Drawn { large_rows, huge_rows, odd_width };
const Drawn kDrawnKinds[] = {Drawn::large_rows, Drawn::huge_rows, Drawn::odd_width};

std::string drawn_name(Drawn kind);
Drawn drawn_from_name(const std::string& name);

// large_rows: 4096 < rows < 8192, rows % 64 != 0, a small width;
// huge_rows: 65536 < rows < 66560, rows % 64 != 0, a width of 1 to 17;
// odd_width: an odd width within 7 of a power of two (64 to 8192), 1 to 200 rows.
LnCase draw_shape(Drawn kind, uint64_t seed);

}  // namespace layernorm
