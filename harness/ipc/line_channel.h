// Newline-delimited JSON over a socket: the transport of the process
// protocol (docs/PROCESS_PROTOCOL.md). Does not own the descriptor.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

#include "harness/ipc/channel.h"

namespace harness {

class LineChannel {
 public:
  static constexpr size_t kMaxLineBytes = 1 << 20;

  explicit LineChannel(int fd) : fd_(fd) {}

  // Throws ChannelClosed when the other end is gone.
  void send(const nlohmann::json& message);
  // The next line (without its '\n') within timeout_s seconds, or nullopt.
  // Throws ChannelClosed at end of stream, or for a line beyond kMaxLineBytes.
  std::optional<std::string> receive_line(double timeout_s);
  // Whether bytes have arrived that no request asked for yet: checked as
  // each request goes out, so that an answer written ahead of its request
  // is never taken for the reply to it.
  bool holds_unasked_bytes();
  // As Channel::watch_exit.
  void watch_exit(pid_t pid) { exit_watch_ = std::make_unique<ExitWatch>(pid); }

 private:
  int fd_;
  std::string pending_;  // bytes received after the last complete line
  std::unique_ptr<ExitWatch> exit_watch_;
};

}  // namespace harness
