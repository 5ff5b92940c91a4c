// Length-prefixed JSON messages over a Unix socket, with optional passing of
// one file descriptor (the memfd of a shared buffer) per message.
//
// This channel is the only way harness and worker talk: the worker's stdout
// and stderr go to a log file, so anything a submission prints cannot corrupt
// the protocol.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

#include "harness/core/error.h"

namespace harness {

// The other end closed the socket (a worker that died, a harness that left).
class ChannelClosed : public HarnessError {
 public:
  using HarnessError::HarnessError;
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
  // message; nullopt when the time ran out.
  std::optional<Message> receive(double timeout_s);

 private:
  bool wait_readable(long long deadline_ns);
  void read_exactly(char* out, size_t size, long long deadline_ns, int* received_fd);

  int fd_;
};

}  // namespace harness
