// harness-worker: loads one submission and serves the harness's requests
// over the socket on fd 3. Started by the harness only (see
// harness/executors/worker_executor.cpp); its stdout and stderr go to a log.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "harness/ipc/channel.h"
#include "harness/worker/submission_library.h"
#include "harness/worker/worker_session.h"

namespace {

// The harness answers "loading" at once; a minute covers a loaded machine.
constexpr double kLoadPermissionTimeoutSeconds = 60;

struct Arguments {
  std::string challenge;
  std::string library;
  std::string device = "cpu";
  int device_index = 0;
  int socket_fd = 3;
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string value = argv[i + 1];
    if (key == "--challenge")
      a.challenge = value;
    else if (key == "--library")
      a.library = value;
    else if (key == "--device")
      a.device = value;
    else if (key == "--device-index")
      a.device_index = std::stoi(value);
    else if (key == "--socket-fd")
      a.socket_fd = std::stoi(value);
    else
      throw harness::HarnessError("harness-worker: unknown option " + key);
  }
  if (a.challenge.empty() || a.library.empty()) {
    throw harness::HarnessError("harness-worker: --challenge and --library are required");
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Arguments arguments;
  try {
    arguments = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  harness::Channel channel(arguments.socket_fd);
  // Anything that fails before the first request is reported as "fatal" so
  // that the harness can give every case of this submission the reason.
  try {
    auto backend =
        arguments.device == "cuda" ? harness::make_cuda_backend(arguments.device_index) : harness::make_cpu_backend();
    auto adapter = harness::make_abi_adapter(arguments.challenge);
    // Before any code of the submission runs (its constructors run as it
    // loads), the harness reads what this process holds: the baseline of
    // the memory witness. It answers "load" when it has.
    channel.send({{"type", "loading"}});
    const auto go = channel.receive(kLoadPermissionTimeoutSeconds);
    if (!go || go->body.value("type", "") != "load") {
      throw harness::HarnessError(
          fmt::format("harness-worker: expected \"load\" from the harness within {:.0f} s, got {}",
                      kLoadPermissionTimeoutSeconds, go ? go->body.dump() : "nothing"));
    }
    harness::SubmissionLibrary library(arguments.library);
    adapter->bind(library);
    const int32_t version = adapter->abi_version();
    if (version != adapter->expected_abi_version()) {
      throw harness::HarnessError(
          fmt::format("the submission was built for ABI version {} of '{}', the harness speaks version {}", version,
                      arguments.challenge, adapter->expected_abi_version()));
    }
    channel.send({{"type", "hello"},
                  {"protocol", harness::protocol::kVersion},
                  {"abi_version", version},
                  {"device", backend->describe()}});
    harness::WorkerSession session(channel, *backend, *adapter);
    const int code = session.serve();
    // _Exit: a submission's static destructors (thread pools, CUDA state)
    // must not be able to hang or crash a worker that has finished.
    std::fflush(nullptr);
    std::_Exit(code);
  } catch (const std::exception& e) {
    try {
      channel.send({{"type", "fatal"}, {"message", e.what()}});
    } catch (...) {
    }
    std::fprintf(stderr, "harness-worker: %s\n", e.what());
    return 4;
  }
}
