// One case's result and an entry's scores <-> JSON (results.json's
// "results"), timing and witness figures included.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace harness {

nlohmann::json to_json(const CaseResult& c);
CaseResult case_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Scores& scores);
Scores scores_from_json(const nlohmann::json& j);

}  // namespace harness
