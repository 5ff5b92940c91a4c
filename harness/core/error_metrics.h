// Comparing a float32 result with its float64 reference, element by
// element: the errors to report and whether every element is within
//   |got - ref| <= scale_atol * S + rtol * |ref|  (+ a Conditioning's allowance),
// S = max|ref| by default, so that the absolute part scales with the tensor. A
// NaN or inf where the reference is finite always fails.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace harness {

struct Tolerance {
  double rtol = 0;
  double scale_atol = 0;
  double float32_factor = 0;  // times eps32 * sensitivity, where the check passes a Conditioning
};

inline constexpr double kFloat32Epsilon = 1.1920928955078125e-07;  // 2^-23

// For inputs ill-conditioned for float32 itself (a layer norm of rows far
// from zero): how far, in the result's units, a relative rounding of eps32 of
// the inputs' troublesome magnitude moves the result (first order, computed in
// float64). The bound grows by float32_factor * eps32 * sensitivity, what a
// sound float32 implementation can reach (docs/ARCHITECTURE.md, Tolerances).
struct Conditioning {
  double sensitivity = 0;
  std::string label;  // what it is, for messages: "max|gamma| * max(|mean| * rstd)"
};

// The S of the bound, when it is not max|ref|; S is max(value, max|ref|). For
// a result formed by cancellation, whose float32 rounding is of the size of
// the terms, not of the result.
struct ErrorScale {
  double value = 0;
  std::string label;  // what S is, for messages: "max(rstd*|dy*gamma|)"
};

struct Comparison {
  size_t elements = 0;
  size_t violations = 0;  // elements beyond the tolerance (non-finite included)
  size_t non_finite = 0;  // NaN or inf where the reference is finite
  double max_abs_error = 0;
  double max_reference = 0;  // max |ref|
  double scale = 0;          // S of the bound
  std::string scale_label = "max|ref|";
  double max_scaled_error = 0;  // max_abs_error / S (max_abs_error itself when S is 0)
  double normwise_error = 0;    // ||got - ref||_2 / ||ref||_2 (or ||got||_2 when the reference is zero)
  size_t worst_index = 0;       // where |got - ref| - bound is largest
  float worst_got = 0;
  double worst_reference = 0;
  double worst_bound = 0;
  double float32_allowance = 0;  // float32_factor * eps32 * sensitivity (absolute); 0 without a Conditioning
  double sensitivity = 0;
  std::string conditioning_label;
  double allowed_absolute_error = 0;  // scale_atol * S + float32_allowance (the bound where ref is 0)
  // The largest |got - ref| / bound over the elements: how much of its
  // tolerance the result used (beyond 1: violated). What `harness selftest`
  // quotes when it shows a tolerance's justification.
  double tolerance_used = 0;

  bool ok() const { return violations == 0; }
  // "dx: 3 of 65536 elements beyond 1e-04*max|ref| + 1e-04*|ref|; worst at [12, 7]:
  //  -0.25 vs float64 -0.2506 (allowed 1.2e-04)"
  // (with an ErrorScale: "... beyond 1e-04*S + 1e-04*|ref| (S = max(max|ref|, <label>) = 3.2); ...")
  std::string describe(const std::string& name, const std::vector<int64_t>& shape, const Tolerance& tolerance) const;
  // {"<name>_max_abs_error", "<name>_max_scaled_error", "<name>_normwise_error", "<name>_violations",
  // "<name>_tolerance_used"}; with a Conditioning also "<name>_sensitivity" and "precision_loss" (the
  // worst over every comparison folded in): where the error sits, on a log scale, between eps32 * S, the
  // rounding of the result itself (0), and the allowed error, what sound float32 arithmetic can reach on
  // this input (1).
  void add_metrics(nlohmann::json& metrics, const std::string& name) const;
};

Comparison compare_to_reference(const float* got, const double* reference, size_t n, const Tolerance& tolerance,
                                const ErrorScale* scale = nullptr, const Conditioning* conditioning = nullptr);

}  // namespace harness
