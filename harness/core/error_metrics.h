// Comparing a float32 result with its float64 reference, element by
// element: the errors to report and whether every element is within
//   |got - ref| <= scale_atol * S + rtol * |ref|,   S = max|ref| by default.
// The absolute part scales with the tensor (a gradient of 1e-18 and one of
// 1e3 get the same relative treatment), the relative part keeps large
// elements to float32-level precision. A NaN or inf where the reference is
// finite always fails.
//
// A result formed by cancellation (a difference of terms much larger than
// itself) carries float32 rounding of the size of those terms, not of the
// result: such a check passes an ErrorScale naming the terms' magnitude.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness {

struct Tolerance {
  double rtol = 0;
  double scale_atol = 0;
};

// The S of the bound, when it is not max|ref|; S is max(value, max|ref|).
struct ErrorScale {
  double value = 0;
  std::string label;  // what S is, for messages: "max(rstd*|dy*gamma|)"
};

struct Comparison {
  size_t elements = 0;
  size_t violations = 0;     // elements beyond the tolerance (non-finite included)
  size_t non_finite = 0;     // NaN or inf where the reference is finite
  double max_abs_error = 0;
  double max_reference = 0;  // max |ref|
  double scale = 0;          // S of the bound
  std::string scale_label = "max|ref|";
  double max_scaled_error = 0;    // max_abs_error / S (max_abs_error itself when S is 0)
  double normwise_error = 0;      // ||got - ref||_2 / ||ref||_2 (or ||got||_2 when the reference is zero)
  size_t worst_index = 0;         // where |got - ref| - bound is largest
  float worst_got = 0;
  double worst_reference = 0;
  double worst_bound = 0;

  bool ok() const { return violations == 0; }
  // "dx: 3 of 65536 elements beyond 1e-04*max|ref| + 1e-04*|ref|; worst at [12, 7]: -0.25 vs float64 -0.2506 (allowed 1.2e-04)"
  // (with an ErrorScale: "... beyond 1e-04*S + 1e-04*|ref| (S = max(max|ref|, <label>) = 3.2); ...")
  std::string describe(const std::string& name, const std::vector<int64_t>& shape, const Tolerance& tolerance) const;
  // {"<name>_max_abs_error", "<name>_max_scaled_error", "<name>_normwise_error", "<name>_violations"}
  void add_metrics(nlohmann::json& metrics, const std::string& name) const;
};

Comparison compare_to_reference(const float* got, const double* reference, size_t n, const Tolerance& tolerance,
                                const ErrorScale* scale = nullptr);

}  // namespace harness
