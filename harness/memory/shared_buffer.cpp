#include "harness/memory/shared_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace harness {

namespace {

size_t round_up_to_page(size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

unsigned char guard_byte(uint64_t pattern, size_t position) {
  return static_cast<unsigned char>(pattern >> ((position % 8) * 8));
}

}  // namespace

SealedMemfd create_sealed_memfd(size_t bytes, const char* what) {
  SealedMemfd memory;
  memory.fd = ::memfd_create(what, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  HARNESS_CHECK_ERRNO(memory.fd, "memfd_create for a {} of {} bytes", what, bytes);
  if (::ftruncate(memory.fd, static_cast<off_t>(bytes)) == -1 ||
      ::fcntl(memory.fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == -1) {
    const int saved = errno;
    ::close(memory.fd);
    errno = saved;
    HARNESS_CHECK_ERRNO(-1, "sizing and sealing a {} of {} bytes", what, bytes);
  }
  void* mapping = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory.fd, 0);
  if (mapping == MAP_FAILED) {
    const int saved = errno;
    ::close(memory.fd);
    errno = saved;
    HARNESS_CHECK_ERRNO(-1, "mmap of a {} of {} bytes", what, bytes);
  }
  memory.base = static_cast<unsigned char*>(mapping);
  return memory;
}

SharedBuffer::SharedBuffer(uint64_t id, size_t data_bytes) : id_(id), data_bytes_(data_bytes) {
  total_bytes_ = round_up_to_page(kGuardBytes + data_bytes + kGuardBytes);
  const SealedMemfd memory = create_sealed_memfd(total_bytes_, "harness-buffer");
  fd_ = memory.fd;
  base_ = memory.base;
}

SharedBuffer::SharedBuffer(uint64_t id, int fd, size_t total_bytes) : id_(id), fd_(fd), total_bytes_(total_bytes) {
  HARNESS_CHECK(total_bytes >= 2 * kGuardBytes, "buffer {} of {} bytes is smaller than its guards", id, total_bytes);
  data_bytes_ = total_bytes - 2 * kGuardBytes;  // page rounding goes to the back guard
  void* mapping = ::mmap(nullptr, total_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mapping == MAP_FAILED) {
    HARNESS_CHECK_ERRNO(-1, "mmap of received buffer {} ({} bytes)", id, total_bytes);
  }
  base_ = static_cast<unsigned char*>(mapping);
}

SharedBuffer::~SharedBuffer() {
  if (base_) ::munmap(base_, total_bytes_);
  if (fd_ >= 0) ::close(fd_);
}

void SharedBuffer::fill_guards(uint64_t seed) {
  const uint64_t pattern = splitmix64(seed ^ id_);
  const size_t back_start = kGuardBytes + data_bytes_;
  for (size_t i = 0; i < kGuardBytes; ++i) base_[i] = guard_byte(pattern, i);
  for (size_t i = back_start; i < total_bytes_; ++i) base_[i] = guard_byte(pattern, i);
}

SharedBuffer::GuardDamage SharedBuffer::check_guards(uint64_t seed) const {
  const uint64_t pattern = splitmix64(seed ^ id_);
  GuardDamage damage;
  // Front guard: scan towards lower addresses from the data so `distance` is
  // the nearest damaged byte.
  for (size_t i = kGuardBytes; i-- > 0;) {
    if (base_[i] != guard_byte(pattern, i)) {
      if (!damage.damaged) {
        damage.damaged = true;
        damage.before = true;
        damage.distance = kGuardBytes - i;
      }
      ++damage.bytes_changed;
    }
  }
  const size_t back_start = kGuardBytes + data_bytes_;
  for (size_t i = back_start; i < total_bytes_; ++i) {
    if (base_[i] != guard_byte(pattern, i)) {
      if (!damage.damaged) {
        damage.damaged = true;
        damage.before = false;
        damage.distance = i - back_start;
      }
      ++damage.bytes_changed;
    }
  }
  return damage;
}

}  // namespace harness
