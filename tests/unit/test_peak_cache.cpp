// The per-host peak cache: what it serves, what it refuses, and that a run
// uses it instead of measuring.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

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
  remember_peak(path, "host-a | cpu", made_up_peak(false));
  remember_peak(path, "host-b | cpu", made_up_peak(true));
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
  remember_peak(path, "k", made_up_peak(false));
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
  entry["read_bytes_per_second"] = 1.25e6;
  std::ofstream(tmp.path("cache/peaks.json"), std::ios::trunc) << cache.dump();

  const auto run =
      run_cli("run softmax_topk -s cpu-fast --device cpu --quick --case correctness.normal.r64.v1024.k10 --seed 1 -o " +
                  tmp.path("r.json"),
              env);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("read 1.2 MB/s"), std::string::npos) << run.output;
  const nlohmann::json results = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  EXPECT_EQ(results["devices"][0]["peak"]["read_bytes_per_second"].get<double>(), 1.25e6);
  EXPECT_EQ(results["devices"][0]["peak"]["cached_from"], tmp.path("cache/peaks.json"));

  const auto fresh = run_cli(
      "run softmax_topk -s cpu-fast --device cpu --quick --measure-peak --case correctness.normal.r64.v1024.k10 "
      "--seed 1 -o " +
          tmp.path("r2.json"),
      env);
  ASSERT_EQ(fresh.exit_code, 0) << fresh.output;
  // Measured again, the figure is the best of both: a real read sweep beats the planted one.
  const nlohmann::json measured = nlohmann::json::parse(read_text_file(tmp.path("r2.json")));
  EXPECT_GT(measured["devices"][0]["peak"]["read_bytes_per_second"].get<double>(), 1.25e6);
  EXPECT_EQ(measured["devices"][0]["peak"]["measurements"].get<int>(), 2);
  EXPECT_EQ(measured["devices"][0]["peak"]["cached_from"], "");
}

TEST(PeakCache, StoredCeilingsAreTheBestOfEveryMeasurementAndOnlyRise) {
  TempFolder tmp;
  const std::string path = tmp.path("peaks.json");
  PeakBandwidth busy = made_up_peak(false);  // copy 31, read 17, write 13 GB/s
  busy.read_bytes_per_second = 8e9;          // a busy moment
  remember_peak(path, "k", made_up_peak(false));
  const PeakBandwidth stored = remember_peak(path, "k", busy);
  EXPECT_EQ(stored.read_bytes_per_second, 17e9) << "a lower measurement lowered the stored ceiling";
  EXPECT_EQ(stored.copy_bytes_per_second, 31e9);
  EXPECT_EQ(stored.measurements, 2);
  PeakBandwidth quiet = made_up_peak(false);
  quiet.write_bytes_per_second = 20e9;
  EXPECT_EQ(remember_peak(path, "k", quiet).write_bytes_per_second, 20e9);
  std::string problem;
  EXPECT_EQ(read_cached_peak(path, "k", true, problem)->measurements, 3);
  // A quick measurement neither joins nor replaces a full one.
  PeakBandwidth quick = made_up_peak(true);
  quick.read_bytes_per_second = 99e9;
  EXPECT_EQ(remember_peak(path, "k", quick).read_bytes_per_second, 17e9);
  EXPECT_FALSE(read_cached_peak(path, "k", true, problem)->quick);
}

}  // namespace
}  // namespace harness
