// The catalogue of built submissions: who may be a challenge's baseline,
// and what a process submission's include folders may name.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>

#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/runner/run_plan.h"
#include "harness/submissions/catalog.h"
#include "support/test_support.h"

namespace harness {
namespace {

using nlohmann::json;

// An index of two manifests: one in a folder of the test's own, then the
// project's softmax_topk cpu-naive, the challenge's configured cpu baseline.
Catalog catalog_with_squatter(const testing::TempFolder& folder, const json& squatter) {
  std::filesystem::create_directories(folder.path("a"));
  write_file_atomically(folder.path("a/submission.json"), squatter.dump());
  const std::string real = std::string(HARNESS_SOURCE_DIR) + "/submissions/softmax_topk/cpu-naive/submission.json";
  const json index =
      json::array({json{{"manifest", folder.path("a/submission.json")}, {"build_dir", folder.path("a-build")}},
                   json{{"manifest", real}, {"build_dir", folder.path("real-build")}}});
  write_file_atomically(folder.path("index.json"), index.dump());
  return Catalog::load(folder.path("index.json"));
}

json squatter(const std::string& name, const std::string& role) {
  return json{{"name", name}, {"challenge", "softmax_topk"}, {"device", "cpu"}, {"sources", {"k.cpp"}}, {"role", role}};
}

// Every entry's speedup is measured against the baseline: a manifest that
// declared the role took it (the first baseline of a challenge and device
// was the one scored against), a slow one lifting every speedup.
TEST(Catalog, OnlyTheConfiguredFolderMayBeTheBaseline) {
  testing::TempFolder folder;
  const Catalog catalog = catalog_with_squatter(folder, squatter("a-slow-one", "baseline"));
  ASSERT_EQ(catalog.records().size(), 2u);
  const SubmissionRecord& taken = catalog.records()[0];
  ASSERT_TRUE(taken.manifest.has_value());
  EXPECT_EQ(taken.manifest->role, "submission");
  EXPECT_EQ(taken.build.status, "failed");
  EXPECT_NE(taken.build.reason.find("role \"baseline\" belongs to the folder"), std::string::npos)
      << taken.build.reason;
  EXPECT_NE(taken.build.reason.find("submissions/softmax_topk/cpu-naive"), std::string::npos) << taken.build.reason;
  ASSERT_TRUE(catalog.records()[1].manifest.has_value()) << catalog.records()[1].manifest_error;
  EXPECT_EQ(catalog.records()[1].manifest->role, "baseline");
}

// A folder sorting first under the baseline's name once pushed the real
// baseline out as the duplicate.
TEST(Catalog, TheConfiguredBaselineKeepsItsNameWhateverSortsFirst) {
  testing::TempFolder folder;
  const Catalog catalog = catalog_with_squatter(folder, squatter("cpu-naive", "submission"));
  ASSERT_EQ(catalog.records().size(), 2u);
  EXPECT_FALSE(catalog.records()[0].manifest.has_value());
  EXPECT_NE(catalog.records()[0].manifest_error.find("the name 'cpu-naive' is already used by"), std::string::npos)
      << catalog.records()[0].manifest_error;
  EXPECT_TRUE(catalog.records()[1].manifest.has_value()) << catalog.records()[1].manifest_error;
}

// process-exploit-borrowed-library named the project's build folder among
// its include folders, read at run time, and loaded cpu-fast's library.
TEST(Catalog, AProcessSubmissionsIncludeFoldersStayInsideItsRoot) {
  testing::TempFolder folder;
  std::filesystem::create_directories(folder.path("root/common"));
  std::filesystem::create_directories(folder.path("build"));
  json index = json::array();
  for (const auto& [name, dir] : {std::pair{"inside", "../common"}, std::pair{"outside", "../../build"}}) {
    std::filesystem::create_directories(folder.path(std::string("root/") + name));
    const json manifest{{"name", name},      {"challenge", "softmax_topk"},    {"device", "cpu"},
                        {"kind", "process"}, {"command", {"python3", "x.py"}}, {"include_dirs", {dir}}};
    write_file_atomically(folder.path(std::string("root/") + name + "/submission.json"), manifest.dump());
    index.push_back(json{{"manifest", folder.path(std::string("root/") + name + "/submission.json")},
                         {"build_dir", folder.path("b")},
                         {"root", folder.path("root")}});
  }
  write_file_atomically(folder.path("index.json"), index.dump());
  const Catalog catalog = Catalog::load(folder.path("index.json"));
  ASSERT_EQ(catalog.records().size(), 2u);
  EXPECT_TRUE(catalog.records()[0].manifest.has_value()) << catalog.records()[0].manifest_error;
  EXPECT_NE(catalog.records()[0].build.status, "failed") << catalog.records()[0].build.reason;
  EXPECT_EQ(catalog.records()[1].build.status, "failed");
  EXPECT_NE(catalog.records()[1].build.reason.find("'../../build' lies outside"), std::string::npos)
      << catalog.records()[1].build.reason;
}

// The main job builds only what `harness run` judges: a selftest on that
// build folder judged every mutant and exploit build_failed ("44 of 65 did
// not get their declared verdict"), a verdict on the folder, not the code.
TEST(Catalog, ASelectedSubmissionNeverBuiltRefusesTheRunNamingIt) {
  testing::TempFolder folder;
  json mutant = squatter("cpu-mutant-unbuilt", "mutant");
  mutant["expect"] = json{{"suite", "correctness"}, {"verdict", "wrong_answer"}};
  const Catalog catalog = catalog_with_squatter(folder, mutant);
  std::filesystem::create_directories(folder.path("real-build"));
  write_file_atomically(folder.path("real-build/build.json"),
                        json{{"status", "ok"}, {"library", folder.path("real-build/libsubmission.so")}}.dump());
  ASSERT_EQ(catalog.records().size(), 2u);
  ASSERT_TRUE(catalog.records()[0].manifest.has_value()) << catalog.records()[0].manifest_error;
  EXPECT_FALSE(catalog.records()[0].build.built);

  RunSelection judged;  // `harness run`: mutants left out, so nothing unbuilt is selected
  judged.challenges = {"softmax_topk"};
  judged.device = "cpu";
  judged.quick = true;
  EXPECT_NO_THROW(make_plan(judged, Catalog::load(folder.path("index.json")), testing::cpu_devices()));

  RunSelection selftest = judged;
  selftest.only_mutants = true;
  try {
    make_plan(selftest, Catalog::load(folder.path("index.json")), testing::cpu_devices());
    FAIL() << "a selftest planned a submission that was never built";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("1 selected submission was never built (softmax_topk/cpu-mutant-unbuilt)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("main-job"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace harness
