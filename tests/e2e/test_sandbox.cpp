// The workers' sandbox (harness/sandbox): each attack of
// tests/fixtures/softmax_topk/exploit (and process-exploit) is stopped with
// the sandbox on, and gets through with the part that stops it switched off
// (HARNESS_SANDBOX_DISABLE), which shows that part is what stops it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/results/results_json.h"
#include "harness/sandbox/landlock_ruleset.h"
#include "harness/sandbox/sandbox.h"
#include "harness/witness/memory_witness.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::case_of;
using testing::entry_of;
using testing::ScopedEnv;

const std::string kSandboxCase = "correctness.normal.r64.v1024.k2";

// Runs one case of `submission` attacking in `mode`, with `disabled` parts
// of the sandbox switched off.
CaseResult attack(const std::string& submission, const std::string& mode, const std::string& disabled = "") {
  ScopedEnv fixture_mode("HARNESS_FIXTURE_MODE", mode);
  ScopedEnv off("HARNESS_SANDBOX_DISABLE", disabled);
  RunSelection selection;
  selection.challenges = {"softmax_topk"};
  selection.submissions = {submission};
  selection.case_ids = {kSandboxCase};
  RunSettings settings;
  settings.call_timeout_s = 20;
  const auto results = testing::run_selection(selection, testing::fixture_catalog(), settings);
  return case_of(entry_of(results, submission), kSandboxCase);
}

// One case of a submission of the project's own catalogue, with `disabled`
// parts of the sandbox switched off.
CaseResult project_case(const std::string& challenge, const std::string& submission, const std::string& id,
                        const std::string& disabled) {
  ScopedEnv off("HARNESS_SANDBOX_DISABLE", disabled);
  RunSelection selection;
  selection.challenges = {challenge};
  selection.submissions = {submission};
  selection.case_ids = {id};
  return case_of(entry_of(testing::run_selection(selection, testing::project_catalog()), submission), id);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A process alive and not a zombie.
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// The pid in "pid <digits> outside the group".
std::optional<pid_t> escaped_pid(const std::string& output) {
  const size_t outside = output.find(" outside the group");
  const size_t pid = outside == std::string::npos ? outside : output.rfind("pid ", outside);
  if (pid == std::string::npos) return std::nullopt;
  const std::string digits = output.substr(pid + 4, outside - pid - 4);
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return static_cast<pid_t>(std::stol(digits));
}

TEST(Sandbox, AWorkerCannotWriteOutsideItsScratchFolderWithoutLandlockItCan) {
  for (const std::string submission : {"fixture-exploit", "fixture-process-exploit"}) {
    testing::TempFolder folder;
    const std::string results = folder.path("results.json");  // stands for the run's results file
    write_file_atomically(results, "original\n");
    ScopedEnv target("HARNESS_EXPLOIT_TARGET", results);

    const CaseResult on = attack(submission, "write-outside");
    EXPECT_EQ(on.verdict, Verdict::pass) << submission << ": " << on.message;
    EXPECT_TRUE(contains(on.worker_output, "exploit write-outside: refused")) << submission << ": " << on.worker_output;
    EXPECT_EQ(read_text_file(results), "original\n") << submission;

    const CaseResult off = attack(submission, "write-outside", "landlock");
    EXPECT_TRUE(contains(off.worker_output, "wrote outside its scratch folder"))
        << submission << ": " << off.worker_output;
    EXPECT_EQ(read_text_file(results), "original\nforged\n") << submission;
  }
}

TEST(Sandbox, AWorkerCannotReadOtherLogsOfTheRunWithoutLandlockItCan) {
  // The runner keeps every worker's log in <temp>/harness-run-<its pid>; a
  // log of another submission is planted there before the run.
  const auto run_folder = std::filesystem::temp_directory_path() / ("harness-run-" + std::to_string(::getpid()));
  const auto plant = [&] {
    std::filesystem::create_directories(run_folder);
    write_file_atomically((run_folder / "other-submission.log").string(), "a secret of another submission\n");
  };
  plant();
  const CaseResult on = attack("fixture-exploit", "read-logs");
  EXPECT_EQ(on.verdict, Verdict::pass) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit read-logs: refused: opendir")) << on.worker_output;
  EXPECT_FALSE(contains(on.worker_output, "a secret of another submission"));

  plant();
  const CaseResult off = attack("fixture-exploit", "read-logs", "landlock");
  EXPECT_TRUE(contains(off.worker_output, "read other-submission.log: a secret of another submission"))
      << off.worker_output;
}

TEST(Sandbox, ACompiledWorkerCannotStartAProcess) {
  const CaseResult on = attack("fixture-exploit", "escape");
  EXPECT_EQ(on.verdict, Verdict::pass) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit escape: refused: fork")) << on.worker_output;
}

TEST(Sandbox, AProcessSubmissionCannotLeaveItsProcessGroup) {
  // fork is allowed to process submissions; setsid kills the child that calls it.
  const CaseResult on = attack("fixture-process-exploit", "escape");
  EXPECT_EQ(on.verdict, Verdict::pass) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit escape: the grandchild never started")) << on.worker_output;
  EXPECT_FALSE(escaped_pid(on.worker_output)) << on.worker_output;
}

TEST(Sandbox, ADescendantOutsideTheGroupDiesWithItsWorkerWithoutTheReaperItOutlivesIt) {
  for (const std::string submission : {"fixture-exploit", "fixture-process-exploit"}) {
    // Without seccomp the double fork and setsid succeed; the harness, the
    // child subreaper, still kills the grandchild when the worker ends.
    const CaseResult reaped = attack(submission, "escape", "seccomp");
    const auto pid = escaped_pid(reaped.worker_output);
    ASSERT_TRUE(pid) << submission << ": " << reaped.worker_output;
    EXPECT_FALSE(running(*pid)) << submission << ": pid " << *pid << " outlived its worker";

    const CaseResult escaped = attack(submission, "escape", "seccomp,reaper");
    const auto survivor = escaped_pid(escaped.worker_output);
    ASSERT_TRUE(survivor) << submission << ": " << escaped.worker_output;
    EXPECT_TRUE(running(*survivor)) << submission << ": without the reaper the grandchild should outlive its worker";
    if (survivor) ::kill(*survivor, SIGKILL);
  }
}

TEST(Sandbox, AWorkerCannotOpenTheHarnessMemoryLandlockAloneOrTheOtherPartsTogetherStopIt) {
  if (std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope"); yama) {
    int scope = 0;
    yama >> scope;
    if (scope > 0)
      GTEST_SKIP() << "Yama (ptrace_scope " << scope << ") already keeps a child out of its parent's memory";
  }
  const auto outcome = [](const std::string& disabled) {
    return attack("fixture-exploit", "proc-mem", disabled).worker_output;
  };
  const std::string opened = "opened the harness's memory for writing";
  EXPECT_TRUE(contains(outcome(""), "exploit proc-mem: refused"));
  // Landlock alone: the harness is outside the worker's domain.
  EXPECT_TRUE(contains(outcome("dumpable,caps"), "exploit proc-mem: refused"));
  const std::string without_all = outcome("landlock,dumpable,caps");
  EXPECT_TRUE(contains(without_all, opened)) << without_all;
  if (::getuid() == 0) {
    // A root worker without capabilities has fewer than the root harness,
    // which alone refuses it; with them, a non-dumpable harness is no bar.
    EXPECT_TRUE(contains(outcome("landlock,dumpable"), "exploit proc-mem: refused"));
    EXPECT_TRUE(contains(outcome("landlock,caps"), opened));
  } else {
    // For any other user, the non-dumpable harness is what refuses it.
    EXPECT_TRUE(contains(outcome("landlock"), "exploit proc-mem: refused"));
    EXPECT_TRUE(contains(outcome("landlock,dumpable"), opened));
  }
}

TEST(Sandbox, AWorkerCannotReadTheHarnessEnvironmentWithoutLandlockCapsAndDumpableItCan) {
  if (std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope"); yama) {
    int scope = 0;
    yama >> scope;
    if (scope > 0)
      GTEST_SKIP() << "Yama (ptrace_scope " << scope << ") already keeps a child out of its parent's environment";
  }
  const CaseResult on = attack("fixture-exploit", "environ");
  EXPECT_EQ(on.verdict, Verdict::pass) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit environ: refused")) << on.worker_output;
  const CaseResult off = attack("fixture-exploit", "environ", "landlock,dumpable,caps");
  EXPECT_TRUE(contains(off.worker_output, "read the harness's environment")) << off.worker_output;
}

TEST(Sandbox, PtraceOfTheHarnessIsASandboxViolation) {
  const CaseResult on = attack("fixture-exploit", "ptrace");
#if defined(__SANITIZE_ADDRESS__)
  // ASan builds let ptrace fail with EPERM (the leak checker uses it).
  EXPECT_TRUE(contains(on.worker_output, "exploit ptrace: refused")) << on.worker_output;
#else
  EXPECT_EQ(on.verdict, Verdict::sandbox_violation) << on.message;
  EXPECT_TRUE(contains(on.message, "system call the sandbox forbids")) << on.message;
#endif
  // Landlock alone also refuses it (the harness is outside the worker's domain).
  EXPECT_TRUE(contains(attack("fixture-exploit", "ptrace", "seccomp").worker_output, "exploit ptrace: refused"));
  const CaseResult off = attack("fixture-exploit", "ptrace", "seccomp,landlock,dumpable,caps");
  EXPECT_EQ(off.verdict, Verdict::pass) << off.message;
  EXPECT_TRUE(contains(off.worker_output, "attached to the harness")) << off.worker_output;
}

TEST(Sandbox, AWorkerCannotOpenANetworkSocketWithoutSeccompItCan) {
  const CaseResult on = attack("fixture-exploit", "socket");
  EXPECT_EQ(on.verdict, Verdict::pass) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit socket: refused: socket")) << on.worker_output;
  const CaseResult off = attack("fixture-exploit", "socket", "seccomp");
  EXPECT_TRUE(contains(off.worker_output, "opened a network socket")) << off.worker_output;
}

// cpu-hidden-xhat-memfd-file keeps 16 MB of hidden state in a memory file
// it never maps, which no resident set shows. Two defences see it: seccomp
// refuses a compiled CPU worker the file (the store falls back to the
// heap), and where a worker holds one anyway the witness counts the memory
// files it holds open (MemoryWitness.MemoryFilesHeldOpenCount shows that
// RssAnon alone does not).
TEST(Sandbox, AMemoryFileIsRefusedToACompiledWorkerAndCountedWithoutSeccomp) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "memory is not witnessed in this build (AddressSanitizer)";
  auto run = [](const std::string& disabled) {
    return project_case("layernorm_backward", "cpu-hidden-xhat-memfd-file", "edge.normal.r65536.d64", disabled);
  };
  const CaseResult on = run("");
  EXPECT_EQ(on.verdict, Verdict::understated_memory) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit hidden store: memory file refused")) << on.worker_output;
  const CaseResult off = run("seccomp");
  EXPECT_EQ(off.verdict, Verdict::understated_memory) << off.message;
  EXPECT_TRUE(contains(off.worker_output, "exploit hidden store: memory file made")) << off.worker_output;
}

// cpu-exploit-borrowed-kernel answers with the project's cpu-fast library,
// loaded from the build tree: readable while the folder two levels above
// the worker's executable (the project) was.
TEST(Sandbox, ACompiledWorkerCannotLoadAnotherSubmissionsLibraryWithoutLandlockItCan) {
  const std::string exploit = "cpu-exploit-borrowed-kernel";
  const CaseResult on = project_case("softmax_topk", exploit, kSandboxCase, "");
  EXPECT_EQ(on.verdict, Verdict::error) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit borrowed kernel: stopped")) << on.worker_output;
  const CaseResult off = project_case("softmax_topk", exploit, kSandboxCase, "landlock");
  EXPECT_EQ(off.verdict, Verdict::pass) << off.message;
  EXPECT_TRUE(contains(off.worker_output, "exploit borrowed kernel: GOT THROUGH")) << off.worker_output;
}

TEST(Sandbox, SignallingTheHarnessIsASandboxViolation) {
  const CaseResult on = attack("fixture-exploit", "kill-harness");
  EXPECT_EQ(on.verdict, Verdict::sandbox_violation) << on.message;
  if (landlock_abi() >= 6) {
    EXPECT_TRUE(
        contains(attack("fixture-exploit", "kill-harness", "seccomp").worker_output, "exploit kill-harness: refused"));
  }
  const CaseResult off = attack("fixture-exploit", "kill-harness", "seccomp,landlock");
  EXPECT_EQ(off.verdict, Verdict::pass) << off.message;
  EXPECT_TRUE(contains(off.worker_output, "signalled the harness")) << off.worker_output;
}

TEST(Sandbox, TheMemoryLimitBoundsAWorkersAddressSpace) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer builds set no address-space limit (ASan reserves terabytes)";
#endif
  const SandboxSettings saved = sandbox_settings();
  SandboxSettings small = saved;
  small.memory_limit_bytes = 1ull << 30;
  configure_sandbox(small);
  ScopedEnv bytes("HARNESS_EXPLOIT_BYTES", std::to_string(4ull << 30));
  const CaseResult on = attack("fixture-exploit", "allocate");
  const CaseResult off = attack("fixture-exploit", "allocate", "rlimits");
  configure_sandbox(saved);
  EXPECT_EQ(on.verdict, Verdict::pass) << on.message;
  EXPECT_TRUE(contains(on.worker_output, "exploit allocate: refused: malloc")) << on.worker_output;
  EXPECT_TRUE(contains(off.worker_output, "allocated 4294967296 bytes")) << off.worker_output;
}

// Exploit cpu-exploit-memory-hog asks for 2 GiB per call here: past a 1 GiB
// limit the allocation fails and the case is memory_limit, named as such;
// without the limit it is granted (untouched) and the case passes.
TEST(Sandbox, AnAllocationPastTheMemoryLimitIsAMemoryLimitVerdictWithoutTheLimitItPasses) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer builds set no address-space limit (ASan reserves terabytes)";
#endif
  testing::TempFolder folder;
  const std::string options =
      "run softmax_topk -s cpu-exploit-memory-hog --with-mutants --device cpu -q --seed 3 --case " + kSandboxCase +
      " --memory-limit 1G -o ";
  const std::string bytes = "HARNESS_EXPLOIT_BYTES=" + std::to_string(2ull << 30);
  const auto on = testing::run_cli(options + folder.path("on.json"), bytes);
  const auto off = testing::run_cli(options + folder.path("off.json"), bytes + " HARNESS_SANDBOX_DISABLE=rlimits");
  const CaseResult limited =
      case_of(entry_of(load_results(folder.path("on.json")), "cpu-exploit-memory-hog"), kSandboxCase);
  const CaseResult unlimited =
      case_of(entry_of(load_results(folder.path("off.json")), "cpu-exploit-memory-hog"), kSandboxCase);
  EXPECT_EQ(limited.verdict, Verdict::memory_limit) << limited.message << on.output;
  EXPECT_TRUE(contains(limited.message, "std::bad_alloc")) << limited.message;
  EXPECT_TRUE(contains(limited.message, "address-space limit of 1 GiB (--memory-limit)")) << limited.message;
  EXPECT_EQ(unlimited.verdict, Verdict::pass) << unlimited.message << off.output;
}

TEST(Sandbox, TheCliRunsContainedWorkersWhicheverFdsItStartsWithAndSaysSoInTheResults) {
  // With 3..9 closed, the harness's first files take them; the child's
  // dup2 onto 0..3 must not overwrite what the sandbox still needs (a
  // kv_cache run is one where the Landlock ruleset landed on fd 3).
  testing::TempFolder tmp;
  const auto run = testing::run_shell("exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-; " + std::string(HARNESS_CLI) +
                                      " run kv_cache -s cpu-naive,numpy --device cpu --memory-limit 4G "
                                      "--case correctness.single.l1.h4x4.d64 --seed 1 -o " +
                                      tmp.path("r.json"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const auto results = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  for (const auto& entry : results["results"]) {
    for (const auto& c : entry["cases"]) EXPECT_EQ(c["verdict"], "pass") << c.dump();
  }
  EXPECT_EQ(results["results"].size(), 2u);
  EXPECT_EQ(results["run"]["sandbox"]["seccomp"], "on");
  EXPECT_EQ(results["run"]["sandbox"]["memory_limit_bytes"], 4ull << 30);
}

TEST(Sandbox, TheRunSaysWhichPartsAreActive) {
  ScopedEnv off("HARNESS_SANDBOX_DISABLE", "reaper,caps");
  const auto d = sandbox_description();
  EXPECT_EQ(d["disabled"], nlohmann::json({"reaper", "caps"}));
  EXPECT_EQ(d["subreaper"], false);
  EXPECT_EQ(d["capabilities"], "kept: HARNESS_SANDBOX_DISABLE");
  EXPECT_EQ(d["seccomp"], "on");
  if (landlock_abi() > 0) {
    EXPECT_TRUE(contains(d["landlock"].get<std::string>(), "on (ABI ")) << d.dump();
  } else {
    EXPECT_TRUE(contains(d["landlock"].get<std::string>(), "unavailable: ")) << d.dump();
  }
}

// errno of opening `path` for writing in a child contained as `request`
// asks (0: it opened), with only Landlock on among the parts that could
// refuse it, so that the answer is Landlock's (or with it off too).
int errno_of_write_open_in_sandbox(const SandboxRequest& request, const std::string& path, bool landlock = true) {
  ScopedEnv off("HARNESS_SANDBOX_DISABLE",
                std::string(landlock ? "" : "landlock,") + "seccomp,caps,dumpable,rlimits,reaper");
  PreparedSandbox sandbox(request);
  const pid_t child = ::fork();
  if (child == 0) {
    if (sandbox.apply_in_child()) ::_exit(200);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ::_exit(fd == -1 ? (errno < 200 ? errno : 201) : 0);
  }
  sandbox.release_parent_copies();
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

// The CUDA driver names its threads through /proc/self/task/<tid>/comm and
// cuInit fails without (cudaErrorOperatingSystem under Landlock, seen on an
// H200): a CUDA worker may write its own /proc/<pid> files, and no other
// process's; a CPU worker needs none and gets none.
TEST(Sandbox, ACudaWorkerWritesItsOwnProcessFilesOnlyAndACpuWorkerNone) {
  if (landlock_abi() == 0) GTEST_SKIP() << "no Landlock on this kernel: nothing of /proc is refused by it";
  testing::TempFolder scratch;
  SandboxRequest cuda;
  cuda.cuda = true;
  cuda.writable = scratch.path("");
  SandboxRequest cpu = cuda;
  cpu.cuda = false;
  const std::string own_thread = "/proc/thread-self/comm";
  const std::string own_process = "/proc/self/comm";
  const std::string harness_thread = fmt::format("/proc/{0}/task/{0}/comm", ::getpid());
  EXPECT_EQ(errno_of_write_open_in_sandbox(cuda, own_thread), 0);
  EXPECT_EQ(errno_of_write_open_in_sandbox(cuda, own_process), 0);
  EXPECT_EQ(errno_of_write_open_in_sandbox(cuda, harness_thread), EACCES);
  EXPECT_EQ(errno_of_write_open_in_sandbox(cpu, own_thread), EACCES);
  EXPECT_EQ(errno_of_write_open_in_sandbox(cpu, harness_thread), EACCES);
  // Without Landlock, a root worker opens the harness's files of /proc (any
  // other user is refused by their owner, root, the harness being
  // non-dumpable).
  if (::getuid() == 0) {
    EXPECT_EQ(errno_of_write_open_in_sandbox(cuda, harness_thread, false), 0);
  }
}

TEST(Sandbox, AMisspeltPartIsAnErrorNotASilentlyActiveDefence) {
  ScopedEnv off("HARNESS_SANDBOX_DISABLE", "landlok");
  EXPECT_THROW(sandbox_description(), UsageError);
}

TEST(Sandbox, MemorySizesParseWithUnitsAndNone) {
  EXPECT_EQ(parse_memory_size("8G"), 8ull << 30);
  EXPECT_EQ(parse_memory_size("512M"), 512ull << 20);
  EXPECT_EQ(parse_memory_size("1073741824"), 1ull << 30);
  EXPECT_EQ(parse_memory_size("none"), 0u);
  EXPECT_THROW(parse_memory_size("12"), UsageError);  // below what any runtime needs
  EXPECT_THROW(parse_memory_size("8 GB"), UsageError);
  EXPECT_THROW(parse_memory_size("-1G"), UsageError);
}

}  // namespace
}  // namespace harness
