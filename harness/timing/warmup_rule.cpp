#include "harness/timing/warmup_rule.h"

#include <algorithm>
#include <cmath>

namespace harness {

size_t WarmupRule::more_calls(size_t calls, double elapsed_ns) const {
  if (calls < sets_) return sets_ - calls;
  if (!wants_more(calls, elapsed_ns)) return 0;
  const double per_call = elapsed_ns / static_cast<double>(std::max<size_t>(calls, 1));
  const auto wanted = static_cast<size_t>(std::ceil((warmup_ns_ - elapsed_ns) / std::max(per_call, 1.0)));
  return std::min(wanted, most_calls() - calls);
}

}  // namespace harness
