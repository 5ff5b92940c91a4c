// Whom an exception that ends a case blames: whatever untrusted input can
// cause is the submission's `error`; only the harness's own faults are
// `harness_error`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "harness/core/error.h"
#include "harness/core/npy.h"
#include "harness/ipc/channel.h"
#include "harness/ipc/protocol.h"
#include "harness/runner/failure_verdict.h"
#include "harness/sandbox/memory_limit.h"

namespace harness {
namespace {

template <class E>
FailureVerdict failure_verdict_of(const E& e) {
  return verdict_of_failure(std::make_exception_ptr(e));
}

TEST(FailureVerdict, AVerdictIsItsOwn) {
  const auto f = failure_verdict_of(VerdictException(Verdict::crash, "the worker was killed by signal 9"));
  EXPECT_EQ(f.verdict, Verdict::crash);
  EXPECT_EQ(f.message, "the worker was killed by signal 9");
}

TEST(FailureVerdict, UntrustedInputIsTheSubmissionsError) {
  EXPECT_EQ(failure_verdict_of(UntrustedInputError("a reply without a status")).verdict, Verdict::error);
  EXPECT_EQ(failure_verdict_of(MalformedMessage("malformed message")).verdict, Verdict::error);
}

TEST(FailureVerdict, TheHarnessesOwnFaultsAreHarnessErrors) {
  EXPECT_EQ(failure_verdict_of(HarnessError("poll failed")).verdict, Verdict::harness_error);
  EXPECT_EQ(failure_verdict_of(std::bad_alloc()).verdict, Verdict::harness_error);
}

// The exploit process-exploit-overflowing-npy-shape without the parser's
// check: std::stoll threw std::out_of_range, which is no untrusted-input
// error and so became harness_error. With the check it is the submission's.
TEST(FailureVerdict, AnOverflowingNpyShapeWasAHarnessErrorAndIsNowTheSubmissions) {
  const std::string extent = "99999999999999999999";
  FailureVerdict unchecked;
  try {
    (void)std::stoll(extent);
  } catch (...) {
    unchecked = verdict_of_failure(std::current_exception());
  }
  EXPECT_EQ(unchecked.verdict, Verdict::harness_error);

  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + extent + ", 2), }";
  header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
  const std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xFF) +
                            static_cast<char>(header.size() >> 8) + header;
  FailureVerdict checked;
  try {
    parse_npy(bytes, "exploit.npy");
  } catch (...) {
    checked = verdict_of_failure(std::current_exception());
  }
  EXPECT_EQ(checked.verdict, Verdict::error);
  EXPECT_NE(checked.message.find("beyond int64"), std::string::npos) << checked.message;
}

// The exploit cpu-exploit-malformed-reply without the worker executor's own
// decoding: the exception nlohmann::json throws on its reply is no
// untrusted-input error by itself, and was harness_error.
TEST(FailureVerdict, AnUndecodableReplyWasAHarnessErrorWithoutItsDecoding) {
  const auto body = nlohmann::json::parse(R"({"type":"reply","status":"pass","message":"","wall_ns":1})");
  FailureVerdict f;
  try {
    (void)body.get<protocol::CallReply>();
  } catch (...) {
    f = verdict_of_failure(std::current_exception());
  }
  EXPECT_EQ(f.verdict, Verdict::harness_error);
}

// The exploit process-exploit-scratch-replaced-by-folder without its
// defence: removing a harness file that became a folder throws a
// filesystem error, which alone is harness_error.
TEST(FailureVerdict, ARemovalThatFailsOnAFolderIsNoUntrustedInputByItself) {
  const auto folder = std::filesystem::temp_directory_path() / ("harness-folder-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder / "keep");
  FailureVerdict f;
  try {
    std::filesystem::remove(folder);
  } catch (...) {
    f = verdict_of_failure(std::current_exception());
  }
  std::filesystem::remove_all(folder);
  EXPECT_EQ(f.verdict, Verdict::harness_error);
}

}  // namespace
}  // namespace harness

namespace harness {
namespace {

// What a worker says as an allocation fails under its limit decides between
// memory_limit and the verdict it had; a KV cache refusing an append past
// its budget (out_of_memory, its contract) is not it.
TEST(MemoryLimitVerdict, AnAllocationFailureUnderALimitIsMemoryLimit) {
  const uint64_t limit = 8ull << 30;
  const auto crash = memory_limit_failure(
      Verdict::crash,
      "the worker died of signal 6; its last output: terminate called after throwing an instance of 'std::bad_alloc'",
      limit);
  ASSERT_TRUE(crash.has_value());
  EXPECT_NE(crash->find("address-space limit of 8 GiB (--memory-limit)"), std::string::npos) << *crash;
  EXPECT_TRUE(memory_limit_failure(Verdict::error, "Traceback ...\nMemoryError: Unable to allocate 16.0 GiB", limit));
  EXPECT_TRUE(memory_limit_failure(Verdict::error, "mmap: Cannot allocate memory", limit));
}

TEST(MemoryLimitVerdict, NotWithoutALimitNorForOtherFailuresNorABudgetRefusal) {
  const std::string bad_alloc = "softmax_topk_run returned status 1 (error): std::bad_alloc";
  EXPECT_FALSE(memory_limit_failure(Verdict::error, bad_alloc, 0));
  EXPECT_FALSE(memory_limit_failure(Verdict::wrong_answer, bad_alloc, 8ull << 30));
  EXPECT_FALSE(memory_limit_failure(Verdict::pass, bad_alloc, 8ull << 30));
  EXPECT_FALSE(memory_limit_failure(Verdict::error, "append returned status 3 (out_of_memory): the budget is spent",
                                    8ull << 30));
}

}  // namespace
}  // namespace harness
