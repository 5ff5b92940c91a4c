// The parameters of one layernorm_backward case and the case matrix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/challenge_api/case_spec.h"

namespace layernorm {

// How x is drawn (gamma ~ N(1, 0.1^2), beta ~ N(0, 0.1^2), dy ~ N(0, 1) always).
enum class Data {
  normal,    // N(0, 1)
  zero,      // every x 0: variance 0, eps alone keeps rstd finite
  constant,  // every row one value: variance 0
  tiny,      // N(0, 1e-4^2): variance far below eps
  offset,    // N(amount, 1): E[x^2] - E[x]^2 collapses as amount grows
  huge,      // N(0, 1) * 1e18: squares near float's limit
  scaled,    // N(0, 1) * 1000
};

// Which ops a case runs and times.
enum class Ops { both, forward, backward };

struct LnCase {
  int64_t rows = 0;
  int64_t dim = 0;
  Data data = Data::normal;
  double amount = 0;  // offset of Data::offset
  float eps = 1e-5f;
  Ops ops = Ops::both;  // perf cases time one op
};

std::string data_name(Data data);
// The case's parameters; a drawn case's shape comes from `shape_seed`
// (drawn_shapes.h), which a listed case ignores.
LnCase ln_case_of(const harness::CaseSpec& spec, uint64_t shape_seed);
harness::CaseSpec make_case_spec(harness::Suite suite, const LnCase& c, bool quick);
std::vector<harness::CaseSpec> case_matrix();

// The fewest bytes any implementation moves (saved state: 2 floats per row).
//   forward:  x + gamma + beta read, y written, 8 bytes per row saved
//   backward: dy + x + gamma + 8 bytes per row read, dx + dgamma + dbeta written
harness::ByteModel forward_bytes(const LnCase& c);
harness::ByteModel backward_bytes(const LnCase& c);
inline int64_t minimum_saved_bytes(int64_t rows) { return 8 * rows; }

}  // namespace layernorm
