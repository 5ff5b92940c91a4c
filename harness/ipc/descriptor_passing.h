// One file descriptor attached to a message sent on a Unix socket
// (SCM_RIGHTS), for the channel to a worker and a process's memory socket.
#pragma once

#include <sys/socket.h>

#include <cstring>

namespace harness {

class AttachedDescriptor {
 public:
  // Points `message`'s control data at this object, which must outlive the
  // sendmsg; the receiver gets its own copy of `fd`.
  void attach(msghdr& message, int fd) {
    message.msg_control = control_;
    message.msg_controllen = sizeof control_;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  }

 private:
  alignas(cmsghdr) char control_[CMSG_SPACE(sizeof(int))] = {};
};

}  // namespace harness
