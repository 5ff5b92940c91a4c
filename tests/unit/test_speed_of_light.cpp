// impossible_speed against a peak measured on a busy moment: the device is
// measured again before the verdict, its peak only rises, and a speed
// beyond even the new ceilings still gets the verdict, naming both.
#include <gtest/gtest.h>

#include "harness/device/roofline.h"
#include "harness/runner/speed_of_light.h"

namespace harness {
namespace {

PeakBandwidth peak_of(double gbps) {
  PeakBandwidth p;
  p.method = "made up";
  p.copy_bytes_per_second = p.read_bytes_per_second = p.write_bytes_per_second = gbps * 1e9;
  return p;
}

// A timed, cold case reading 1 GB in `ms` milliseconds.
CaseResult timed_case(double ms) {
  CaseResult c;
  c.bytes = ByteModel{1e9, 0};
  TimingResult t;
  t.samples_ns = {ms * 1e6};
  t.summary.median = ms * 1e6;
  t.summary.count = 1;
  t.cache_cold = true;
  c.timing = t;
  c.bandwidth = 1e9 / (ms * 1e-3);
  return c;
}

struct Machine {
  DeviceInfo device;
  double real_gbps = 20;
  int measurements = 0;
  std::optional<PeakBandwidth> remembered;
  SpeedOfLight judge{[this](const DeviceInfo&) {
                       ++measurements;
                       return peak_of(real_gbps);
                     },
                     [this](const DeviceInfo&, const PeakBandwidth& best) {
                       remembered = best;
                       return best;
                     }};
  explicit Machine(double cached_gbps) {
    device.id = device.kind = "cpu";
    device.peak = peak_of(cached_gbps);
  }
};

// The cache says 10 GB/s (measured while the machine was busy), the machine
// does 20: an honest kernel at 18 GB/s is beyond the cached roofline plus
// 10%, which alone would have called it impossible; measured again, it is not.
TEST(SpeedOfLight, APeakMeasuredOnABusyMomentIsMeasuredAgainBeforeTheVerdict) {
  Machine m(10);
  CaseResult honest = timed_case(1e3 / 18);
  ASSERT_GT(*honest.bandwidth, roofline_ceiling_bytes_per_second(*m.device.peak, honest.bytes))
      << "judged against the cached peak alone, the honest kernel would be impossible";
  EXPECT_EQ(m.judge.judge(honest, m.device), std::nullopt);
  EXPECT_EQ(m.measurements, 1);
  ASSERT_TRUE(m.remembered);
  EXPECT_EQ(m.remembered->read_bytes_per_second, 20e9) << "the cache is corrected";
  ASSERT_TRUE(m.judge.peak(m.device));
  EXPECT_EQ(m.judge.peak(m.device)->read_bytes_per_second, 20e9);
  ASSERT_TRUE(honest.peak_fraction);
  EXPECT_NEAR(*honest.peak_fraction, 0.9, 1e-9) << "the case's figures use the raised peak";
}

// Above the cached roofline but within its 10%: no verdict either way, but
// the ceilings are shown low and measured again (a main job with a peak
// planted at half the machine's kept it otherwise: no case passed 110%).
TEST(SpeedOfLight, ACaseAboveTheCachedRooflineCorrectsTheCacheThoughWithinItsAllowance) {
  Machine m(10);
  CaseResult fast = timed_case(1e3 / 10.6);
  ASSERT_LT(*fast.bandwidth, roofline_ceiling_bytes_per_second(*m.device.peak, fast.bytes));
  EXPECT_EQ(m.judge.judge(fast, m.device), std::nullopt);
  EXPECT_EQ(m.measurements, 1);
  ASSERT_TRUE(m.remembered);
  EXPECT_EQ(m.remembered->read_bytes_per_second, 20e9) << "the cache is corrected";
  ASSERT_TRUE(fast.peak_fraction);
  EXPECT_NEAR(*fast.peak_fraction, 0.53, 1e-9);
}

TEST(SpeedOfLight, ASpeedBeyondEvenTheNewCeilingsIsImpossibleAndNamesBoth) {
  Machine m(10);
  CaseResult cheat = timed_case(1e3 / 40);  // 40 GB/s on a 20 GB/s machine
  const auto verdict = m.judge.judge(cheat, m.device);
  ASSERT_TRUE(verdict);
  EXPECT_NE(verdict->find("40.0 GB/s is beyond this case's roofline of 20.0 GB/s plus 10%"), std::string::npos)
      << *verdict;
  EXPECT_NE(verdict->find("measured again just now (copy 20.0, read 20.0, write 20.0 GB/s; the run began with copy "
                          "10.0, read 10.0, write 10.0 GB/s)"),
            std::string::npos)
      << *verdict;
  // A second case soon after is judged on that measurement, not a new one.
  CaseResult again = timed_case(1e3 / 40);
  EXPECT_TRUE(m.judge.judge(again, m.device));
  EXPECT_EQ(m.measurements, 1);
}

TEST(SpeedOfLight, APeakOnlyRisesAndAWarmOrPossibleCaseMeasuresNothing) {
  Machine m(30);
  m.real_gbps = 5;  // measured now on a busy moment: lower than the cache
  CaseResult cheat = timed_case(1e3 / 40);
  EXPECT_TRUE(m.judge.judge(cheat, m.device));
  EXPECT_EQ(m.judge.peak(m.device)->read_bytes_per_second, 30e9) << "a busy re-measurement lowered the peak";

  Machine quiet(10);
  CaseResult possible = timed_case(1e3 / 5);
  CaseResult warm = timed_case(1e3 / 40);
  warm.timing->cache_cold = false;
  EXPECT_FALSE(quiet.judge.judge(possible, quiet.device));
  EXPECT_FALSE(quiet.judge.judge(warm, quiet.device));
  EXPECT_EQ(quiet.measurements, 0);
}

}  // namespace
}  // namespace harness
