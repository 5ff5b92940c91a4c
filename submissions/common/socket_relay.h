// For exploits and test fixtures only: stands between a compiled worker and
// the harness. The worker's socket (its first one, fd 3) is moved behind a
// socket pair of the exploit's own, and a thread passes every message on,
// descriptors included (a "map" request carries its buffer's), after a hook
// has seen it. A hook that takes its time before a message goes on makes
// the harness, or the worker, wait for it: work done there is outside the
// request the harness was timing.
#ifndef SUBMISSION_SOCKET_RELAY_H
#define SUBMISSION_SOCKET_RELAY_H

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string_view>
#include <thread>
#include <vector>

namespace exploit {

struct RelayHooks {
  // A message's bytes (or a part of a long one) from the harness, before the
  // worker sees them, and from the worker, before the harness sees them.
  std::function<void(std::string_view)> from_harness;
  std::function<void(std::string_view)> from_worker;
};

namespace relay_detail {

inline bool pass_on(int from, int to, const std::function<void(std::string_view)>& hook) {
  static thread_local std::vector<char> bytes(1 << 16);
  alignas(cmsghdr) char control[CMSG_SPACE(16 * sizeof(int))];
  iovec io{bytes.data(), bytes.size()};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  const ssize_t got = ::recvmsg(from, &message, MSG_CMSG_CLOEXEC);
  if (got <= 0) return false;
  if (hook) hook(std::string_view(bytes.data(), static_cast<size_t>(got)));
  std::vector<int> passed;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      passed.push_back(fd);
    }
  }
  iovec out_io{bytes.data(), static_cast<size_t>(got)};
  msghdr out{};
  out.msg_iov = &out_io;
  out.msg_iovlen = 1;
  alignas(cmsghdr) char out_control[CMSG_SPACE(16 * sizeof(int))];
  if (!passed.empty()) {
    out.msg_control = out_control;
    out.msg_controllen = CMSG_SPACE(passed.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&out);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(passed.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), passed.data(), passed.size() * sizeof(int));
  }
  const bool sent = ::sendmsg(to, &out, MSG_NOSIGNAL) == got;
  for (int fd : passed) ::close(fd);
  return sent;
}

inline int worker_socket() {
  for (int fd = 3; fd < 256; ++fd) {
    struct stat s {};
    if (::fstat(fd, &s) == 0 && S_ISSOCK(s.st_mode)) return fd;
  }
  return -1;
}

}  // namespace relay_detail

// Call from inside a call: the worker has read its whole request and the
// harness waits for the reply, so no message is in flight. The process
// ends when either side closes. False when the socket could not be moved.
inline bool stand_between_worker_and_harness(RelayHooks hooks) {
  const int worker = relay_detail::worker_socket();
  int pair[2];
  if (worker == -1 || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  const int harness_side = ::fcntl(worker, F_DUPFD_CLOEXEC, 0);
  if (harness_side == -1 || ::dup3(pair[0], worker, O_CLOEXEC) == -1) return false;
  ::close(pair[0]);
  const int worker_side = pair[1];
  std::thread([harness_side, worker_side, hooks = std::move(hooks)] {
    pollfd fds[2] = {{harness_side, POLLIN, 0}, {worker_side, POLLIN, 0}};
    while (::poll(fds, 2, -1) > 0) {
      if (fds[0].revents != 0 && !relay_detail::pass_on(harness_side, worker_side, hooks.from_harness)) break;
      if (fds[1].revents != 0 && !relay_detail::pass_on(worker_side, harness_side, hooks.from_worker)) break;
    }
    ::_exit(0);
  }).detach();
  return true;
}

}  // namespace exploit

#endif  // SUBMISSION_SOCKET_RELAY_H
