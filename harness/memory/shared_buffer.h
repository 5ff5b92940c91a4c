// A buffer in shared memory (memfd) that the harness and a worker process map
// at the same time, laid out as [guard | data | guard]. The harness writes
// inputs and poisons outputs here, the worker hands the data region to the
// submission (or mirrors the whole buffer on a GPU), and the harness then
// reads the results and checks the guards without trusting the worker.
#pragma once

#include <cstddef>
#include <cstdint>

namespace harness {

// A new memfd of `bytes` bytes, sealed at that size (a process given the fd
// cannot grow it and keep memory past its end, where no mapping and no
// witness sees it), and mapped read-write. `what` names it in errors.
struct SealedMemfd {
  int fd = -1;
  unsigned char* base = nullptr;
};
SealedMemfd create_sealed_memfd(size_t bytes, const char* what);

class SharedBuffer {
 public:
  // Guard bands of this many bytes on both sides of every buffer: a write a
  // little past either end lands in a guard instead of in other data.
  static constexpr size_t kGuardBytes = 64 * 1024;

  // Creates and maps a new buffer with room for `data_bytes` (0 is allowed).
  SharedBuffer(uint64_t id, size_t data_bytes);
  // Maps a buffer received from another process (the worker side).
  SharedBuffer(uint64_t id, int fd, size_t total_bytes);
  ~SharedBuffer();
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  uint64_t id() const { return id_; }
  int fd() const { return fd_; }
  size_t total_bytes() const { return total_bytes_; }
  size_t data_bytes() const { return data_bytes_; }
  unsigned char* base() { return base_; }
  const unsigned char* base() const { return base_; }
  unsigned char* data() { return base_ + kGuardBytes; }
  const unsigned char* data() const { return base_ + kGuardBytes; }
  // Offset of the data region from base (== kGuardBytes).
  static constexpr size_t data_offset() { return kGuardBytes; }

  // Guard bytes follow a pattern derived from `seed` (so it differs per run).
  void fill_guards(uint64_t seed);
  struct GuardDamage {
    bool damaged = false;
    bool before = false;  // damage found in the front guard (else the back one)
    size_t distance = 0;  // bytes between the data region and the first damaged byte
    size_t bytes_changed = 0;
  };
  GuardDamage check_guards(uint64_t seed) const;

 private:
  uint64_t id_;
  int fd_ = -1;
  size_t data_bytes_ = 0;
  size_t total_bytes_ = 0;
  unsigned char* base_ = nullptr;
};

}  // namespace harness
