// Length-prefixed JSON messages over a Unix socket, with optional passing of
// one file descriptor (the memfd of a shared buffer) per message. The only
// way harness and worker talk: the worker's stdout and stderr go to a log
// file, so nothing a submission prints can corrupt the protocol.
#pragma once

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <memory>
#include <optional>

#include "harness/core/error.h"
#include "harness/ipc/exit_watch.h"

namespace harness {

// The other end closed the socket (a worker that died, a harness that left).
class ChannelClosed : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// A message that is not the protocol (a length beyond the limit, text that
// is not JSON): whoever wrote it, the channel cannot be trusted any more.
class MalformedMessage : public UntrustedInputError {
 public:
  using UntrustedInputError::UntrustedInputError;
};

class Channel {
 public:
  struct Message {
    nlohmann::json body;
    int fd = -1;  // received descriptor, owned by the caller; -1 when none
  };

  explicit Channel(int socket_fd);  // takes ownership
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  void send(const nlohmann::json& body, int fd_to_pass = -1);
  // Waits at most timeout_s seconds (forever when negative) for a whole
  // message; nullopt when the time ran out. Throws ChannelClosed when the
  // other end is gone, MalformedMessage for bytes that are not a message.
  std::optional<Message> receive(double timeout_s);
  // From now on, waiting for a message ends (ChannelClosed) as soon as this
  // process has ended, even if another process still holds the socket.
  void watch_exit(pid_t pid) { exit_watch_ = std::make_unique<ExitWatch>(pid); }

 private:
  bool wait_readable(long long deadline_ns);
  void read_exactly(char* out, size_t size, long long deadline_ns, int* received_fd);

  int fd_;
  std::unique_ptr<ExitWatch> exit_watch_;
};

// Waits until `fd` is readable (true) or the deadline passes (false; never
// when deadline_ns is negative); throws ChannelClosed once `watch` reports
// its process ended while nothing is left to read.
bool wait_readable_or_exit(int fd, long long deadline_ns, const ExitWatch* watch);

}  // namespace harness
