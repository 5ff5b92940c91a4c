// The per-host peak cache: what it serves, what it refuses, and that a run
// uses it instead of measuring.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/core/files.h"
#include "harness/device/peak_cache.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::run_cli;
using testing::TempFolder;

PeakBandwidth made_up_peak(bool quick) {
  PeakBandwidth p;
  p.method = "made up";
  p.copy_bytes_per_second = 31e9;
  p.read_bytes_per_second = 17e9;
  p.write_bytes_per_second = 13e9;
  p.quick = quick;
  p.measured_at = "2026-01-02T03:04:05Z";
  return p;
}

TEST(PeakCache, ServesTheStoredPeakOfThisDeviceOnly) {
  TempFolder tmp;
  const std::string path = tmp.path("cache/peaks.json");
  std::string problem;
  EXPECT_FALSE(read_cached_peak(path, "k", false, problem)) << "no file yet";
  store_cached_peak(path, "host-a | cpu", made_up_peak(false));
  store_cached_peak(path, "host-b | cpu", made_up_peak(true));
  const auto a = read_cached_peak(path, "host-a | cpu", true, problem);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->read_bytes_per_second, 17e9);
  EXPECT_EQ(a->write_bytes_per_second, 13e9);
  EXPECT_EQ(a->measured_at, "2026-01-02T03:04:05Z");
  EXPECT_EQ(a->cached_from, path);
  EXPECT_FALSE(read_cached_peak(path, "host-c | cpu", false, problem)) << "another host's figure never serves";
  EXPECT_TRUE(read_cached_peak(path, "host-b | cpu", false, problem)) << "a quick figure serves a quick run";
  EXPECT_FALSE(read_cached_peak(path, "host-b | cpu", true, problem)) << "but not a full one";
  EXPECT_TRUE(problem.empty()) << problem;
}

TEST(PeakCache, AnUnreadableCacheCostsAMeasurementNotTheRun) {
  TempFolder tmp;
  const std::string path = tmp.path("peaks.json");
  std::ofstream(path) << "{ not json";
  std::string problem;
  EXPECT_FALSE(read_cached_peak(path, "k", false, problem));
  EXPECT_NE(problem.find("ignoring the peak cache " + path), std::string::npos) << problem;
  store_cached_peak(path, "k", made_up_peak(false));
  problem.clear();
  EXPECT_TRUE(read_cached_peak(path, "k", false, problem)) << problem;

  nlohmann::json zero = nlohmann::json::parse(read_text_file(path));
  zero["entries"]["k"]["read_bytes_per_second"] = 0;
  std::ofstream(path, std::ios::trunc) << zero.dump();
  EXPECT_FALSE(read_cached_peak(path, "k", false, problem));
  EXPECT_NE(problem.find("not a positive bandwidth"), std::string::npos) << problem;
}

TEST(PeakCache, TheKeyNamesHostDeviceAndMethod) {
  DeviceInfo d;
  d.id = "cpu";
  d.name = "Intel(R) Xeon(R) Processor";
  d.compute_units = 2;
  d.memory_bytes = 1 << 30;
  HostInfo h;
  h.hostname = "runner-1";
  const std::string key = peak_cache_key(d, h);
  h.hostname = "runner-2";
  EXPECT_NE(peak_cache_key(d, h), key);
  d.name = "AMD EPYC";
  h.hostname = "runner-1";
  EXPECT_NE(peak_cache_key(d, h), key);
}

TEST(PeakCacheCli, PeakStoresARunUsesAndReportsIt) {
  TempFolder tmp;
  const std::string env = "HARNESS_CACHE_DIR=" + tmp.path("cache");
  const auto peak = run_cli("peak --device cpu --quick", env);
  ASSERT_EQ(peak.exit_code, 0) << peak.output;
  EXPECT_NE(peak.output.find("stored in " + tmp.path("cache/peaks.json")), std::string::npos) << peak.output;

  // Plant a recognisable figure: the run must use it rather than measure.
  nlohmann::json cache = nlohmann::json::parse(read_text_file(tmp.path("cache/peaks.json")));
  ASSERT_EQ(cache["entries"].size(), 1u);
  auto& entry = cache["entries"].begin().value();
  entry["read_bytes_per_second"] = 123.25e9;
  std::ofstream(tmp.path("cache/peaks.json"), std::ios::trunc) << cache.dump();

  const auto run = run_cli("run softmax_topk -s cpu-fast --device cpu --quick --case correctness.normal.r64.v1024.k10 --seed 1 -o " +
                               tmp.path("r.json"),
                           env);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("read 123.2 GB/s"), std::string::npos) << run.output;
  const nlohmann::json results = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  EXPECT_EQ(results["devices"][0]["peak"]["read_bytes_per_second"].get<double>(), 123.25e9);
  EXPECT_EQ(results["devices"][0]["peak"]["cached_from"], tmp.path("cache/peaks.json"));

  const auto fresh = run_cli("run softmax_topk -s cpu-fast --device cpu --quick --measure-peak --case correctness.normal.r64.v1024.k10 "
                             "--seed 1 -o " + tmp.path("r2.json"),
                             env);
  ASSERT_EQ(fresh.exit_code, 0) << fresh.output;
  const nlohmann::json measured = nlohmann::json::parse(read_text_file(tmp.path("r2.json")));
  EXPECT_NE(measured["devices"][0]["peak"]["read_bytes_per_second"].get<double>(), 123.25e9);
  EXPECT_EQ(measured["devices"][0]["peak"]["cached_from"], "");
}

}  // namespace
}  // namespace harness
