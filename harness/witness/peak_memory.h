// The peak memory witness: the most a process's resident set held during a
// window (a call), read from the kernel's high-water mark, which the
// harness resets as the window opens. What a call allocates and frees
// before it returns is invisible to readings between calls; this sees it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace harness {

struct PeakWindow {
  pid_t pid = 0;
  int64_t resident = 0;  // VmRSS as the window opened
  int64_t shared = 0;    // RssShmem then
  bool reset = false;    // whether the high-water mark was reset (else it is the process's lifetime peak)
  // Copies of the call's tensors the process makes by contract (a process
  // submission's client loads its inputs and builds its outputs): not scratch.
  int64_t contract_copies = 0;
};

// Opens a window on `pid`: resets its high-water mark (/proc/<pid>/clear_refs)
// and reads where it stands; nullopt where /proc cannot tell.
std::optional<PeakWindow> open_peak_window(pid_t pid);

// How far the resident set rose above the window's start at its highest,
// less the shared memory the process mapped meanwhile, up to
// `mapped_tensor_bytes` (the harness's tensors bound in the call, mapped on
// first touch), and less contract_copies times those bytes: scratch kept
// in a memory file of its own still counts.
// Never below 0; nullopt where /proc cannot tell.
std::optional<int64_t> peak_growth(const PeakWindow& window, int64_t mapped_tensor_bytes);

}  // namespace harness
