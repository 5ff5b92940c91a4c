#include "harness/ipc/channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "harness/core/clock.h"
#include "harness/ipc/descriptor_passing.h"

namespace harness {

namespace {
constexpr uint32_t kMaxMessageBytes = 64u << 20;
}

Channel::Channel(int socket_fd) : fd_(socket_fd) {}

Channel::~Channel() {
  if (fd_ >= 0) ::close(fd_);
}

void Channel::send(const nlohmann::json& body, int fd_to_pass) {
  const std::string text = body.dump();
  HARNESS_CHECK(text.size() < kMaxMessageBytes, "message of {} bytes is too large", text.size());
  const uint32_t length = static_cast<uint32_t>(text.size());
  std::string frame(reinterpret_cast<const char*>(&length), sizeof length);
  frame += text;

  size_t sent = 0;
  bool fd_pending = fd_to_pass >= 0;
  while (sent < frame.size()) {
    iovec io{const_cast<char*>(frame.data() + sent), frame.size() - sent};
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    AttachedDescriptor descriptor;
    if (fd_pending) descriptor.attach(msg, fd_to_pass);
    // MSG_NOSIGNAL: a dead peer must become an error here, not a SIGPIPE
    // that kills the harness.
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n == -1) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) throw ChannelClosed("the other process closed the channel");
      HARNESS_CHECK_ERRNO(-1, "sendmsg of a {}-byte message", frame.size());
    }
    fd_pending = false;
    sent += static_cast<size_t>(n);
  }
}

bool wait_readable_or_exit(int fd, long long deadline_ns, const ExitWatch* watch) {
  const bool watching = watch && watch->active();
  while (true) {
    int wait_ms = -1;
    if (deadline_ns >= 0) {
      const long long left = deadline_ns - monotonic_ns();
      if (left <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left / 1000000 + 1, 1 << 30));
    }
    if (watching && watch->fd() < 0 && (wait_ms < 0 || wait_ms > kExitWatchSliceMs)) wait_ms = kExitWatchSliceMs;
    pollfd p[2] = {{fd, POLLIN, 0}, {watching ? watch->fd() : -1, POLLIN, 0}};
    const int ready = ::poll(p, watching && watch->fd() >= 0 ? 2 : 1, wait_ms);
    if (ready == -1) {
      if (errno == EINTR) continue;
      HARNESS_CHECK_ERRNO(-1, "poll on the worker channel");
    }
    if (p[0].revents != 0) return true;
    if (watching && watch->exited()) {
      // What it wrote before it ended is still read first (the check above).
      throw ChannelClosed("the process ended while another one still held its end of the channel open");
    }
  }
}

bool Channel::wait_readable(long long deadline_ns) {
  return wait_readable_or_exit(fd_, deadline_ns, exit_watch_.get());
}

void Channel::read_exactly(char* out, size_t size, long long deadline_ns, int* received_fd) {
  size_t got = 0;
  while (got < size) {
    if (!wait_readable(deadline_ns)) {
      throw ChannelClosed(fmt::format("message cut off after {} of {} bytes", got, size));
    }
    iovec io{out + got, size - got};
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
    if (n == -1) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) throw ChannelClosed("the other process reset the channel");
      HARNESS_CHECK_ERRNO(-1, "recvmsg");
    }
    if (n == 0) throw ChannelClosed("the other process closed the channel");
    for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
      if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        if (received_fd && *received_fd < 0) {
          *received_fd = fd;
        } else {
          ::close(fd);  // more than one descriptor per message is not part of the protocol
        }
      }
    }
    got += static_cast<size_t>(n);
  }
}

std::optional<Channel::Message> Channel::receive(double timeout_s) {
  const long long deadline = timeout_s < 0 ? -1 : monotonic_ns() + static_cast<long long>(timeout_s * 1e9);
  if (!wait_readable(deadline)) return std::nullopt;
  Message message;
  uint32_t length = 0;
  // Once a message has started, the rest must follow promptly.
  const long long body_deadline = monotonic_ns() + 30'000'000'000LL;
  read_exactly(reinterpret_cast<char*>(&length), sizeof length, body_deadline, &message.fd);
  if (length >= kMaxMessageBytes) {
    throw MalformedMessage(fmt::format("message header announces {} bytes: not the harness protocol", length));
  }
  std::string text(length, '\0');
  read_exactly(text.data(), length, body_deadline, &message.fd);
  try {
    message.body = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw MalformedMessage(fmt::format("malformed message: {}", e.what()));
  }
  return message;
}

}  // namespace harness
