// The socket over which the harness hands a process submission speaking
// protocol 2 the memory it computes in: AF_UNIX, SOCK_SEQPACKET (message
// boundaries kept, so a client reads one message per receive), one JSON
// object and at most one file descriptor per message. The process gets its end as
// fd 3; its standard input and output stay the protocol's lines.
#pragma once

#include <nlohmann/json.hpp>

namespace harness {

class MemorySocket {
 public:
  MemorySocket();
  ~MemorySocket();
  MemorySocket(const MemorySocket&) = delete;
  MemorySocket& operator=(const MemorySocket&) = delete;

  // The end the process inherits; close_child_end() once it is started.
  int child_end() const { return child_; }
  void close_child_end();
  // Sends `body` with `fd` attached (none when -1: memory opened by a
  // handle in the message, as CUDA's), never blocking: a process that does
  // not read what it was sent, or closed its end, is UntrustedInputError
  // saying which (the caller makes it the process's verdict).
  void send(const nlohmann::json& body, int fd);

 private:
  int own_ = -1;
  int child_ = -1;
};

}  // namespace harness
