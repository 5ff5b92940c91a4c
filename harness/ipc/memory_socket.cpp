#include "harness/ipc/memory_socket.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "harness/core/error.h"
#include "harness/ipc/descriptor_passing.h"

namespace harness {

MemorySocket::MemorySocket() {
  int ends[2];
  HARNESS_CHECK_ERRNO(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends),
                      "socketpair for a process submission's memory socket");
  own_ = ends[0];
  child_ = ends[1];
}

MemorySocket::~MemorySocket() {
  close_child_end();
  if (own_ >= 0) ::close(own_);
}

void MemorySocket::close_child_end() {
  if (child_ >= 0) ::close(child_);
  child_ = -1;
}

void MemorySocket::send(const nlohmann::json& body, int fd) {
  std::string text = body.dump();
  iovec data{text.data(), text.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  AttachedDescriptor descriptor;
  if (fd >= 0) descriptor.attach(message, fd);
  ssize_t sent = -1;
  while ((sent = ::sendmsg(own_, &message, MSG_DONTWAIT | MSG_NOSIGNAL)) == -1 && errno == EINTR) {
  }
  if (sent == static_cast<ssize_t>(text.size())) return;
  if (sent >= 0) HARNESS_FAIL("the memory socket took {} of the {} bytes of {}", sent, text.size(), text);
  if (errno == EAGAIN || errno == EWOULDBLOCK) {
    throw UntrustedInputError(fmt::format(
        "the process does not read its memory socket (fd 3): the messages sent so far fill it, unread, before {}",
        text));
  }
  if (errno == EPIPE || errno == ECONNRESET) throw UntrustedInputError("the process closed its memory socket (fd 3)");
  HARNESS_CHECK_ERRNO(-1, "sendmsg of {} on a process's memory socket", text);
}

}  // namespace harness
