// "27 pass, 1 unsupported": how an entry's cases ended, for every text output.
#pragma once

#include <optional>
#include <string>

#include "harness/results/results.h"

namespace harness {

// Counts per verdict, sorted by verdict name; only `suite` when given.
// "no cases" when there are none.
std::string verdict_counts(const EntryResult& entry, std::optional<Suite> suite = std::nullopt);

// Whether any case of the entry ran: not every one `unavailable` (a
// submission whose interpreter or device this machine lacks).
bool ran_any_case(const EntryResult& entry);

}  // namespace harness
