#include "harness/challenge_api/check_report.h"

#include <algorithm>

namespace harness {

void compare_into(CheckReport& report, const std::string& name, const float* got, const double* reference, size_t n,
                  const std::vector<int64_t>& shape, const Tolerance& tolerance, const ErrorScale* scale,
                  const Conditioning* conditioning) {
  const Comparison c = compare_to_reference(got, reference, n, tolerance, scale, conditioning);
  c.add_metrics(report.metrics, name);
  const double worst = report.metrics.value("worst_scaled_error", 0.0);
  report.metrics["worst_scaled_error"] = std::max(worst, report.metrics[name + "_max_scaled_error"].get<double>());
  if (!c.ok()) {
    report.ok = false;
    report.message += (report.message.empty() ? "" : "; ") + c.describe(name, shape, tolerance);
  }
}

}  // namespace harness
