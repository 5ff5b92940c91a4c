// Overwrites the start of a libc function in the running process with a
// jump to a replacement (x86-64 only), for the exploits that attack the
// worker from inside it (not a submission): clock_patch.h slows the
// worker's clock, softmax_topk's cpu-exploit-claimed-copies rewrites its
// replies.
#ifndef SUBMISSION_FUNCTION_PATCH_H
#define SUBMISSION_FUNCTION_PATCH_H

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace function_patch {

// True when `symbol` now jumps to `replacement`.
inline bool patch(const char* symbol, const void* replacement) {
#if defined(__x86_64__)
  auto* target = reinterpret_cast<unsigned char*>(::dlsym(RTLD_DEFAULT, symbol));
  if (!target) return false;
  const long page = ::sysconf(_SC_PAGESIZE);
  auto* first =
      reinterpret_cast<unsigned char*>(reinterpret_cast<uintptr_t>(target) & ~static_cast<uintptr_t>(page - 1));
  if (::mprotect(first, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
  // movabs rax, replacement; jmp rax
  unsigned char jump[12] = {0x48, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xE0};
  const auto address = reinterpret_cast<uintptr_t>(replacement);
  std::memcpy(jump + 2, &address, sizeof address);
  std::memcpy(target, jump, sizeof jump);
  ::mprotect(first, static_cast<size_t>(2 * page), PROT_READ | PROT_EXEC);
  return true;
#else
  (void)symbol;
  (void)replacement;
  return false;
#endif
}

}  // namespace function_patch

#endif  // SUBMISSION_FUNCTION_PATCH_H
