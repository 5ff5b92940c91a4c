// New inputs between timed rounds, made cheaply in place.
#pragma once

#include <cstdint>

namespace harness {

// In every row of `rows` ([count, width]) two elements, drawn from `seed`
// (each row its own draw), trade places; nothing where width < 2. A row's
// sum and spread stay, so what an earlier op derived from the row still
// fits, while whatever reads those two columns changes.
void swap_two_in_each_row(float* rows, int64_t count, int64_t width, uint64_t seed);

}  // namespace harness
