// What the sections of the Markdown report share (internal to
// harness/report): the challenge's report settings, lookups of cases and
// dimensions across a group, and the header row of a table with one column
// per submission.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/report/markdown_sections.h"

namespace harness::markdown {

// The challenge's "report" settings from its challenge.json, or {} for a
// challenge this harness does not know.
nlohmann::json report_settings(const std::string& challenge);
// Ids of the ranked submissions' cases of one suite, in order of appearance.
std::vector<std::string> case_ids(const Group& g, Suite suite);
// Dimensions that any ranked submission has, in the report's order.
std::vector<std::string> dimension_names(const Group& g);
// "| first | a | b (mutant) |" and its alignment row.
void header_row(std::string& out, const std::string& first, const std::vector<const EntryResult*>& columns,
                const std::string& alignment = "---:");

}  // namespace harness::markdown
