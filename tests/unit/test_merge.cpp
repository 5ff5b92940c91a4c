// Merging shards of one run on synthetic results: cases joined and scored
// again, and what may not be merged refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/compare/merge.h"
#include "harness/core/error.h"
#include "synthetic_results.h"

namespace harness {
namespace {

using testing::make_case;
using testing::results;

TEST(Merge, ShardsJoinAndScoreAgain) {
  auto a = results({make_case("correctness.normal.r64.v1024.k2", Suite::correctness, Verdict::pass)});
  auto b = results({make_case("correctness.normal.r64.v1024.k1", Suite::correctness, Verdict::wrong_answer)});
  const RunResults merged = merge_results({{"a.json", a}, {"b.json", b}});
  ASSERT_EQ(merged.entries.size(), 1u);
  ASSERT_EQ(merged.entries[0].cases.size(), 2u);
  // Matrix order: k1 comes before k2.
  EXPECT_EQ(merged.entries[0].cases[0].id, "correctness.normal.r64.v1024.k1");
  EXPECT_TRUE(merged.entries[0].scores->capped);
}

TEST(Merge, RefusesDuplicatesOtherVersionsAndOtherDevices) {
  const auto a = results({make_case("c1", Suite::correctness, Verdict::pass)});
  auto message_of = [](const std::vector<NamedResults>& inputs) {
    try {
      merge_results(inputs);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message_of({{"a.json", a}, {"b.json", a}})
                .find("case c1 of mine on cpu (softmax_topk) is in both a.json and b.json"),
            std::string::npos);
  auto newer = results({make_case("c2", Suite::correctness, Verdict::pass)});
  newer.run.harness_version = "0.2.0";
  EXPECT_NE(message_of({{"a.json", a}, {"b.json", newer}}).find("harness 0.1.0 but b.json by harness 0.2.0"),
            std::string::npos);
  const auto elsewhere = results({make_case("c2", Suite::correctness, Verdict::pass)}, "host-a", "other cpu");
  EXPECT_NE(message_of({{"a.json", a}, {"b.json", elsewhere}})
                .find("device cpu is 'cpu-x' in a.json but 'other cpu' in b.json"),
            std::string::npos);
  EXPECT_NE(message_of({}).find("no results files"), std::string::npos);
}

}  // namespace
}  // namespace harness
