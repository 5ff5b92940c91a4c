#include "harness/core/error_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/core/tensor.h"

namespace harness {

Comparison compare_to_reference(const float* got, const double* reference, size_t n, const Tolerance& tolerance,
                                const ErrorScale* scale, const Conditioning* conditioning) {
  Comparison c;
  c.elements = n;
  double squared_error = 0, squared_reference = 0, squared_got = 0;
  for (size_t i = 0; i < n; ++i) c.max_reference = std::max(c.max_reference, std::fabs(reference[i]));
  c.scale = c.max_reference;
  if (scale) {
    c.scale = std::max(c.scale, scale->value);
    c.scale_label = scale->label;
  }
  if (conditioning && tolerance.float32_factor > 0) {
    c.sensitivity = conditioning->sensitivity;
    c.conditioning_label = conditioning->label;
    c.float32_allowance = tolerance.float32_factor * kFloat32Epsilon * conditioning->sensitivity;
  }
  const double absolute = tolerance.scale_atol * c.scale + c.float32_allowance;
  c.allowed_absolute_error = absolute;
  double worst_excess = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    const double g = got[i];
    const double r = reference[i];
    const double bound = absolute + tolerance.rtol * std::fabs(r);
    double error;
    if (!std::isfinite(g) && std::isfinite(r)) {
      ++c.non_finite;
      error = INFINITY;
    } else {
      error = std::fabs(g - r);
      if (std::isnan(error)) error = 0;  // inf == inf: both references and results agree
    }
    if (error > bound) ++c.violations;
    if (error > 0) c.tolerance_used = std::max(c.tolerance_used, bound > 0 ? error / bound : INFINITY);
    if (std::isfinite(error)) {
      c.max_abs_error = std::max(c.max_abs_error, error);
      squared_error += error * error;
    }
    squared_reference += r * r;
    squared_got += g * g;
    const double excess = error - bound;
    if (excess > worst_excess) {
      worst_excess = excess;
      c.worst_index = i;
      c.worst_got = got[i];
      c.worst_reference = r;
      c.worst_bound = bound;
    }
  }
  if (c.non_finite) c.max_abs_error = INFINITY;
  c.max_scaled_error = c.scale > 0 ? c.max_abs_error / c.scale : c.max_abs_error;
  c.normwise_error = squared_reference > 0 ? std::sqrt(squared_error / squared_reference) : std::sqrt(squared_got);
  return c;
}

std::string Comparison::describe(const std::string& name, const std::vector<int64_t>& shape, const Tolerance& t) const {
  const bool own_scale = scale_label != "max|ref|";
  const std::string conditioned = float32_allowance > 0 ? fmt::format(" + {:g}*eps32*F (F = {} = {:.3g})",
                                                                      t.float32_factor, conditioning_label, sensitivity)
                                                        : "";
  return fmt::format(
      "{}: {} of {} elements beyond {:g}*{}{} + {:g}*|ref|{}{}; worst at {}: {:.9g} vs float64 {:.9g} (allowed {:.3g})",
      name, violations, elements, t.scale_atol, own_scale ? "S" : "max|ref|", conditioned, t.rtol,
      own_scale ? fmt::format(" (S = max(max|ref|, {}) = {:.3g})", scale_label, scale) : "",
      non_finite ? fmt::format(" ({} NaN or inf)", non_finite) : "", format_index(worst_index, shape), worst_got,
      worst_reference, worst_bound);
}

void Comparison::add_metrics(nlohmann::json& metrics, const std::string& name) const {
  // JSON has no infinity: a non-finite result is reported as a huge error.
  auto finite = [](double v) { return std::isfinite(v) ? v : 1e300; };
  metrics[name + "_max_abs_error"] = finite(max_abs_error);
  metrics[name + "_max_scaled_error"] = finite(max_scaled_error);
  metrics[name + "_normwise_error"] = finite(normwise_error);
  metrics[name + "_violations"] = violations;
  metrics[name + "_tolerance_used"] = finite(tolerance_used);
  if (float32_allowance > 0) {
    metrics[name + "_sensitivity"] = finite(sensitivity);
    // Both ends in absolute units: a zero reference (constant rows) has no S.
    const double ideal = std::max(kFloat32Epsilon * scale, 1e-300);
    const double allowed = allowed_absolute_error;
    double loss = 1;
    if (allowed > ideal) loss = std::log(std::max(max_abs_error, ideal) / ideal) / std::log(allowed / ideal);
    loss = std::clamp(std::isfinite(loss) ? loss : 1.0, 0.0, 1.0);
    metrics["precision_loss"] = std::max(metrics.value("precision_loss", 0.0), loss);
  }
}

}  // namespace harness
