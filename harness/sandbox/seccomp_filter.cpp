#include "harness/sandbox/seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "harness/core/error.h"

namespace harness {

namespace {

using ContextPtr = std::unique_ptr<void, void (*)(scmp_filter_ctx)>;

void add_rule(scmp_filter_ctx ctx, uint32_t action, const char* name, std::initializer_list<scmp_arg_cmp> args = {}) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return;  // not a system call on this architecture
  const int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()), args.begin());
  HARNESS_CHECK(rc == 0, "seccomp_rule_add for '{}' failed: {}", name, std::strerror(-rc));
}

// Namespaces would let a child escape the process group and the file rules.
constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
                                        CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};

}  // namespace

std::vector<sock_filter> build_seccomp_program(const SeccompOptions& options) {
  ContextPtr ctx(seccomp_init(SCMP_ACT_ALLOW), seccomp_release);
  HARNESS_CHECK(ctx, "seccomp_init failed");
  // The child sets no_new_privs itself, before Landlock.
  HARNESS_CHECK(seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0) == 0, "seccomp_attr_set(CTL_NNP)");

  // Acts of attack with no honest use inside a kernel submission: the worker
  // dies with SIGSYS, which the harness reports as sandbox_violation.
  const uint32_t kill = SCMP_ACT_KILL_PROCESS;
  const uint32_t refuse = SCMP_ACT_ERRNO(EPERM);
  add_rule(ctx.get(), options.ptrace_fails_softly ? refuse : kill, "ptrace");
  add_rule(ctx.get(), kill, "process_vm_readv");
  add_rule(ctx.get(), kill, "process_vm_writev");
  // The harness puts the child in its own process group and kills the group:
  // leaving it is leaving containment.
  add_rule(ctx.get(), kill, "setsid");
  add_rule(ctx.get(), kill, "setpgid");
  // Asking for SIGIO/SIGURG to be sent to another process (the harness) is a
  // signal outside the group by another road.
  add_rule(ctx.get(), kill, "fcntl", {SCMP_A1_32(SCMP_CMP_EQ, F_SETOWN)});
  add_rule(ctx.get(), kill, "fcntl", {SCMP_A1_32(SCMP_CMP_EQ, F_SETOWN_EX)});
  add_rule(ctx.get(), kill, "ioctl", {SCMP_A1_32(SCMP_CMP_EQ, FIOSETOWN)});
  add_rule(ctx.get(), kill, "ioctl", {SCMP_A1_32(SCMP_CMP_EQ, SIOCSPGRP)});

  // Things a library might probe for and cope without: they fail with EPERM
  // so that Python, NumPy and the CUDA runtime still start.
  add_rule(ctx.get(), refuse, "socket", {SCMP_A0_32(SCMP_CMP_NE, AF_UNIX)});  // glibc's name service uses AF_UNIX
  for (const char* name : {"io_uring_setup",
                           "io_uring_enter",
                           "io_uring_register",  // I/O out of seccomp's sight
                           "unshare",
                           "setns",
                           "mount",
                           "umount2",
                           "pivot_root",
                           "chroot",
                           "move_mount",
                           "open_tree",
                           "fsopen",
                           "fsmount",
                           "bpf",
                           "perf_event_open",
                           "userfaultfd",
                           "keyctl",
                           "add_key",
                           "request_key",
                           "pidfd_open",
                           "pidfd_getfd",
                           "pidfd_send_signal",
                           "kcmp",
                           "open_by_handle_at",
                           "name_to_handle_at",
                           "kexec_load",
                           "kexec_file_load",
                           "init_module",
                           "finit_module",
                           "delete_module",
                           "reboot",
                           "swapon",
                           "swapoff",
                           "acct",
                           "quotactl",
                           "process_madvise",
                           "process_mrelease"}) {
    add_rule(ctx.get(), refuse, name);
  }
  // Non-dumpable, a process's memory map is closed to the harness, which
  // reads it to witness the memory the process holds.
  add_rule(ctx.get(), refuse, "prctl", {SCMP_A0_32(SCMP_CMP_EQ, PR_SET_DUMPABLE)});
  if (!options.may_make_memory_files) {
    for (const char* name : {"memfd_create", "memfd_secret", "shmget"}) add_rule(ctx.get(), refuse, name);
  }
  for (const uint64_t flag : kNamespaceFlags)
    add_rule(ctx.get(), refuse, "clone", {SCMP_A0_64(SCMP_CMP_MASKED_EQ, flag, flag)});
  // clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes
  // glibc fall back to clone, whose flags the rules above and below see.
  add_rule(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), "clone3");
  if (!options.may_start_processes) {
    // A compiled worker needs threads (OpenMP, the CUDA runtime), never a
    // process: a clone without CLONE_THREAD, fork and vfork fail.
    add_rule(ctx.get(), refuse, "clone", {SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
    add_rule(ctx.get(), refuse, "fork");
    add_rule(ctx.get(), refuse, "vfork");
  }

  const int fd = ::memfd_create("harness-seccomp-bpf", MFD_CLOEXEC);
  HARNESS_CHECK_ERRNO(fd, "memfd_create for the seccomp program");
  const int rc = seccomp_export_bpf(ctx.get(), fd);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  std::vector<sock_filter> program(size > 0 ? static_cast<size_t>(size) / sizeof(sock_filter) : 0);
  const ssize_t got = ::pread(fd, program.data(), program.size() * sizeof(sock_filter), 0);
  ::close(fd);
  HARNESS_CHECK(rc == 0, "seccomp_export_bpf failed: {}", std::strerror(-rc));
  HARNESS_CHECK(got == static_cast<ssize_t>(program.size() * sizeof(sock_filter)) && !program.empty(),
                "reading back the seccomp program: {} of {} bytes", got, size);
  return program;
}

namespace {

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the signal filter knows x86-64 and AArch64; add this architecture's AUDIT_ARCH"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr uint32_t kArg0Low = offsetof(seccomp_data, args[0]);
#else
constexpr uint32_t kArg0Low = offsetof(seccomp_data, args[0]) + 4;
#endif

// kill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo take the target as
// their first argument (a pid_t: only the low 32 bits count). Allowed: 0 (its
// own group), its own pid (raise, abort, its own threads) and minus its own
// pid (its group, of which it is the leader). Anything else, and tkill (which
// names a thread of any process; glibc does not use it), kills the caller.
// A forked descendant keeps the worker's numbers: it may signal the group.
const char* install_signal_filter() {
  const uint32_t self = static_cast<uint32_t>(::getpid());
  const uint32_t group = static_cast<uint32_t>(-static_cast<int32_t>(self));
  sock_filter filter[] = {
      /*  0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      /*  1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      /*  2 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),  // the main filter kills other architectures
      /*  3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      /*  4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_kill, 5, 0),
      /*  5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 4, 0),
      /*  6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigqueueinfo, 3, 0),
      /*  7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_tgsigqueueinfo, 2, 0),
      /*  8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tkill, 6, 0),
      /*  9 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 10 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
      /* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 1, 0),
      /* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, group, 0, 1),
      /* 14 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 15 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) return "prctl(PR_SET_SECCOMP) of the signal filter";
  return nullptr;
}

}  // namespace

const char* install_seccomp(const std::vector<sock_filter>& program) {
  sock_fprog main_program{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &main_program) != 0)
    return "prctl(PR_SET_SECCOMP) of the main filter";
  return install_signal_filter();
}

const std::string& seccomp_unavailable_reason() {
  static const std::string reason = [] {
    // PR_GET_SECCOMP answers EINVAL on a kernel built without seccomp;
    // SECCOMP_GET_ACTION_AVAIL tells whether KILL_PROCESS (4.14+) exists.
    if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == -1) {
      return fmt::format("the kernel has no seccomp (prctl(PR_GET_SECCOMP): {})", std::strerror(errno));
    }
    uint32_t action = SECCOMP_RET_KILL_PROCESS;
    if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) {
      return fmt::format("the kernel's seccomp lacks SECCOMP_RET_KILL_PROCESS ({})", std::strerror(errno));
    }
    return std::string();
  }();
  return reason;
}

}  // namespace harness
