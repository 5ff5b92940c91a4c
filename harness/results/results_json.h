// results.json <-> RunResults. Reading checks the schema and names what is
// wrong, so that `report`, `gate` and `merge` can answer bad input clearly.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "harness/device/peak_json.h"
#include "harness/results/case_json.h"
#include "harness/results/results.h"

namespace harness {

nlohmann::json to_json(const RunResults& results);
// Throws UsageError naming the problem (not JSON, another schema, a missing
// field) and `origin` (usually the file name).
RunResults results_from_json(const nlohmann::json& document, const std::string& origin);
RunResults load_results(const std::string& path);

nlohmann::json to_json(const DeviceInfo& device);
DeviceInfo device_from_json(const nlohmann::json& j);

}  // namespace harness
