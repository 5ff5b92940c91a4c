// New inputs between timed rounds, made cheaply in place.
#pragma once

#include <cstdint>
#include <vector>

namespace harness {

// In every row of `rows` ([count, width]) two elements, drawn from `seed`
// (each row its own draw), trade places; nothing where width < 2. A row's
// sum and spread stay, so what an earlier op derived from the row still
// fits, while whatever reads those two columns changes. With `changed`, the
// flat indices of the elements written, ascending (see swapped_in_each_row).
void swap_two_in_each_row(float* rows, int64_t count, int64_t width, uint64_t seed,
                          std::vector<int64_t>* changed = nullptr);

// Where a refresh swaps two elements in every row: row r's columns a and b
// (a != b) recorded at [2r, 2r + 1] of a vector of 2 * count flat indices,
// ascending. Row tasks record side by side.
class SwapRecord {
 public:
  SwapRecord(std::vector<int64_t>* changed, int64_t count, int64_t width);
  void row(int64_t r, int64_t a, int64_t b) const;

 private:
  std::vector<int64_t>* changed_;
  int64_t width_;
};

}  // namespace harness
