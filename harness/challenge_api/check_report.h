// What a challenge's check of one op's outputs reports, and the comparison
// of one tensor with its float64 reference folded into it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/error_metrics.h"

namespace harness {

struct CheckReport {
  bool ok = true;
  std::string message;  // what is wrong, with the first offending elements
  // Error metrics; for numbers, larger is worse (the worst over the input
  // sets is recorded).
  nlohmann::json metrics = nlohmann::json::object();
};

// Compares `got` with `reference` (n elements of a tensor of `shape` named
// `name`) and folds the result in: its metrics ("<name>_..."), the report's
// "worst_scaled_error", and where it fails, its description in the message.
void compare_into(CheckReport& report, const std::string& name, const float* got, const double* reference, size_t n,
                  const std::vector<int64_t>& shape, const Tolerance& tolerance, const ErrorScale* scale = nullptr,
                  const Conditioning* conditioning = nullptr);

}  // namespace harness
