// Options that CLI11 would accept too readily (a seed of -1 wraps to 2^64-1,
// a timeout of nan never fires) and output paths that would fail only after
// the run: checked here, before the first case, each a UsageError naming
// the option and the value.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace harness {

// The longest call timeout accepted: one day. A larger one is indistinguishable
// from none against a hanging submission.
inline constexpr double kMaxTimeoutSeconds = 86400;

// Decimal digits only, within 0 .. 2^64-1.
uint64_t parse_seed(const std::string& text);
// A finite number of seconds in (0, kMaxTimeoutSeconds].
double parse_timeout_seconds(const std::string& text);
// The file `path`, named by `option`, can be written where it is: not a
// folder, and its nearest existing folder takes new files (probed with a
// file that is removed at once).
void check_output_path(const std::string& option, const std::string& path);
// No two (option, path) pairs name the same file.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace harness
