// The GPU witnesses' defences that HARNESS_WITNESS_DISABLE switches off, for
// the tests that show each one's exploit getting through without it. A run
// with any off says so on stderr and in results.json (run.options.witness_disabled).
//
//   gpu-staging            a CUDA worker's timed requests hold the calls
//                          alone, the copies in requests of their own
//                          (WorkerExecutor::time)
//   gpu-staging-time       a staged round's upload and download beyond what
//                          its copies may take count as the calls' time
//                          (timing_witness.h)
//   device-memory-verdict  a CUDA worker's device memory beyond its claim
//                          is understated_memory (CaseContext)
//   gpu-host-memory-verdict  a CUDA worker's host memory beyond its claim
//                          is understated_memory (CaseContext)
#pragma once

#include <string>
#include <vector>

namespace harness {

const std::vector<std::string>& witness_part_names();
// Read from the environment on every call, like the sandbox's parts.
std::vector<std::string> disabled_witness_parts();
bool witness_part_disabled(const std::string& part);

}  // namespace harness
