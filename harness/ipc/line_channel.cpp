#include "harness/ipc/line_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "harness/core/clock.h"

namespace harness {

void LineChannel::send(const nlohmann::json& message) {
  const std::string line = message.dump() + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n == -1) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) throw ChannelClosed("the process closed its standard input");
      HARNESS_CHECK_ERRNO(-1, "send to the process");
    }
    sent += static_cast<size_t>(n);
  }
}

bool LineChannel::holds_unasked_bytes() {
  if (!pending_.empty()) return true;
  char byte = 0;
  while (true) {
    const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 1) return true;
    if (n == -1 && errno == EINTR) continue;
    return false;  // nothing yet, or the end of the stream: the exchange itself reports that
  }
}

std::optional<std::string> LineChannel::receive_line(double timeout_s) {
  const int64_t deadline = monotonic_ns() + static_cast<int64_t>(timeout_s * 1e9);
  while (true) {
    const auto newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return line;
    }
    if (pending_.size() > kMaxLineBytes) {
      throw ChannelClosed(fmt::format("a line of more than {} bytes on standard output", kMaxLineBytes));
    }
    if (!wait_readable_or_exit(fd_, deadline, exit_watch_.get())) return std::nullopt;
    char buffer[65536];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n == -1) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) throw ChannelClosed("the process closed its standard output");
      HARNESS_CHECK_ERRNO(-1, "recv from the process");
    }
    if (n == 0) {
      if (!pending_.empty()) {
        throw ChannelClosed(
            fmt::format("the process ended its output in the middle of a line: '{}'", pending_.substr(0, 200)));
      }
      throw ChannelClosed("the process closed its standard output");
    }
    pending_.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace harness
