// A peak cached while the machine was busy: planted at a tenth of what this
// machine measures, every perf case of our fast CPU kernels is beyond its
// roofline at the cached figures. The run measures the ceilings again before
// calling any speed impossible, passes every case, and corrects the cache.
// Serial: it measures bandwidth, and compares figures measured in one run.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "harness/core/files.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::run_cli;
using testing::TempFolder;

constexpr const char* kCeilings[] = {"copy_bytes_per_second", "read_bytes_per_second", "write_bytes_per_second"};

TEST(BusyPeakCli, APeakPlantedAtATenthGivesNoHonestKernelImpossibleSpeedAndIsCorrected) {
  TempFolder tmp;
  const std::string env = "HARNESS_CACHE_DIR=" + tmp.path("cache");
  const std::string cache_path = tmp.path("cache/peaks.json");
  ASSERT_EQ(run_cli("peak --device cpu --quick", env).exit_code, 0);
  nlohmann::json cache = nlohmann::json::parse(read_text_file(cache_path));
  ASSERT_EQ(cache["entries"].size(), 1u);
  nlohmann::json& entry = cache["entries"].begin().value();
  double planted_read = 0;
  for (const char* ceiling : kCeilings) entry[ceiling] = entry[ceiling].get<double>() / 10;
  planted_read = entry["read_bytes_per_second"].get<double>();
  std::ofstream(cache_path, std::ios::trunc) << cache.dump();

  const auto run = run_cli("run -s cpu-fast --device cpu --suite perf --quick --seed 3 -o " + tmp.path("r.json"), env);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("cpu peak measured again during the run"), std::string::npos) << run.output;
  const nlohmann::json results = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  size_t perf_cases = 0;
  for (const auto& e : results["results"]) {
    for (const auto& c : e["cases"]) {
      ++perf_cases;
      EXPECT_EQ(c["verdict"], "pass") << e["challenge"] << " " << c["id"] << ": " << c["message"];
      // Every case's figures are against the corrected peak.
      EXPECT_LT(c["peak_fraction"].get<double>(), 1.1) << e["challenge"] << " " << c["id"];
    }
  }
  EXPECT_GE(perf_cases, 3u);
  const double corrected = nlohmann::json::parse(read_text_file(cache_path))["entries"]
                               .begin()
                               .value()["read_bytes_per_second"]
                               .get<double>();
  EXPECT_GT(corrected, 5 * planted_read) << "the cache kept the planted figure";
  EXPECT_EQ(results["devices"][0]["peak"]["read_bytes_per_second"].get<double>(), corrected);
}

}  // namespace
}  // namespace harness
