// The process protocol's table of ops, rendered from the declarations
// (`harness ops`, docs/PROCESS_PROTOCOL.md).
#pragma once

#include <string>
#include <vector>

#include "harness/definitions/op_declaration.h"

namespace harness {

// One Markdown table: a row per op of each challenge, in declaration order.
std::string op_table_markdown(const std::vector<const ChallengeOps*>& challenges);

}  // namespace harness
