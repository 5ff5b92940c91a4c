#include "harness/device/peak_json.h"

namespace harness {

using nlohmann::json;

json to_json(const PeakBandwidth& p) {
  return json{{"method", p.method},
              {"copy_bytes_per_second", p.copy_bytes_per_second},
              {"read_bytes_per_second", p.read_bytes_per_second},
              {"write_bytes_per_second", p.write_bytes_per_second},
              {"ceiling_bytes_per_second", p.ceiling_bytes_per_second()},
              {"buffer_bytes", p.buffer_bytes},
              {"repetitions", p.repetitions},
              {"threads", p.threads},
              {"quick", p.quick},
              {"measured_at", p.measured_at},
              {"cached_from", p.cached_from},
              {"measurements", p.measurements}};
}

PeakBandwidth peak_from_json(const json& j) {
  PeakBandwidth p;
  p.method = j.at("method").get<std::string>();
  p.copy_bytes_per_second = j.at("copy_bytes_per_second").get<double>();
  p.read_bytes_per_second = j.at("read_bytes_per_second").get<double>();
  p.write_bytes_per_second = j.value("write_bytes_per_second", 0.0);
  p.buffer_bytes = j.value("buffer_bytes", 0.0);
  p.repetitions = j.value("repetitions", 0);
  p.threads = j.value("threads", 0);
  p.quick = j.value("quick", false);
  p.measured_at = j.value("measured_at", "");
  p.cached_from = j.value("cached_from", "");
  p.measurements = j.value("measurements", 1);
  return p;
}

}  // namespace harness
