// A measured peak <-> JSON, for the results and the per-host peak cache.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/device/device_info.h"

namespace harness {

nlohmann::json to_json(const PeakBandwidth& peak);
PeakBandwidth peak_from_json(const nlohmann::json& j);

}  // namespace harness
