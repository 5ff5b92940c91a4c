// The parameters of one softmax_topk case and the case matrix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/challenge_api/case_spec.h"

namespace softmax_topk {

// How the logits of a case are drawn (see data.cpp).
enum class Data {
  normal,         // N(0, 2^2)
  ties,           // integers in {0, 1, 2, 3}: many exact ties at the k-th place
  equal,          // every entry of a row equal
  masked,         // normal, each entry -inf with probability `amount` (at least one finite per row)
  offset,         // normal around `amount`: +85 overflows float exp, -100 underflows it
  uniform,        // uniform in [-amount, amount]
  dominant,       // normal, one random column `amount` above the row's maximum
  one_finite,     // every entry -inf but one
  dominant_late,  // normal, one column past the first kTile columns `amount` above the row's maximum
  small_terms,    // one column in the first kTile at a random value, every other exactly `amount` below it
  // Structural (structural_data.cpp): the top k in one warp's aligned slice
  // of 32 columns, in one tile past the first, or in the last k columns;
  // rows sorted ascending or descending; integer ties for the top on both
  // sides of every tile boundary; the whole first tile -inf.
  cluster_warp,
  cluster_tile,
  cluster_end,
  ascending,
  descending,
  tile_ties,
  masked_first_tile,
};

// The column tile that blocked kernels commonly take first (4096 floats =
// 16 KiB); the late-dominant data puts its extreme value past it.
constexpr int64_t kTile = 4096;

struct TopkCase {
  int64_t rows = 0;
  int64_t vocab = 0;
  int64_t k = 0;
  Data data = Data::normal;
  double amount = 0;  // the data kind's parameter
};

std::string data_name(Data data);
Data data_from_name(const std::string& name);

// The case's parameters; a drawn case's shape comes from `shape_seed`
// (drawn_shapes.h), which a listed case ignores.
TopkCase topk_case_of(const harness::CaseSpec& spec, uint64_t shape_seed);
harness::CaseSpec make_case_spec(harness::Suite suite, const TopkCase& c, bool quick);
std::vector<harness::CaseSpec> case_matrix();

// rows*V*4 (read the logits once) + rows*K*8 (write probs and indices).
harness::ByteModel byte_model(const TopkCase& c);

}  // namespace softmax_topk
