// The GPU witnesses' defences that HARNESS_WITNESS_DISABLE switches off, for
// the tests that show each one's exploit getting through without it; a run
// with any off says so (run.options.witness_disabled).
#pragma once

#include <string>
#include <vector>

namespace harness {

// gpu-staging (timed requests hold the calls alone: WorkerExecutor::time),
// gpu-staging-time (staging beyond its allowance counts as the calls' time),
// device-memory-verdict and gpu-host-memory-verdict (a CUDA worker's device
// or host memory beyond its claim is understated_memory: CaseContext),
// twin-reads-at-reply (a protocol 2 process's timed call is copied out of
// its twins as it replies, else when the round ends: ProcessTiming),
// process-claims (a process's claimed call times are judged against the
// harness's clock around its requests: ProcessTiming::witness_claims),
// twin-late-writes (a device twin is found unchanged since the harness last
// read it before it is written again: DeviceTwins::copy_in).
const std::vector<std::string>& witness_part_names();
// Read from the environment on every call, like the sandbox's parts.
std::vector<std::string> disabled_witness_parts();
bool witness_part_disabled(const std::string& part);

}  // namespace harness
