// The harness <-> worker channel: framing, descriptor passing, timeouts, and
// what a dead or babbling peer looks like.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "harness/ipc/channel.h"
#include "harness/memory/shared_buffer.h"

namespace harness {
namespace {

struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a = std::make_unique<Channel>(fds[0]);
    b_fd = fds[1];
    b = std::make_unique<Channel>(fds[1]);
  }
  std::unique_ptr<Channel> a, b;
  int b_fd = -1;
};

TEST(Channel, MessagesArriveWholeAndInOrder) {
  Pair p;
  p.a->send({{"type", "call"}, {"n", 1}});
  p.a->send({{"type", "call"}, {"n", 2}, {"text", std::string(100000, 'x')}});
  auto first = p.b->receive(5);
  auto second = p.b->receive(5);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->body["n"], 1);
  EXPECT_EQ(second->body["text"].get<std::string>().size(), 100000u);
  EXPECT_EQ(first->fd, -1);
}

TEST(Channel, PassesADescriptorThatMapsTheSameMemory) {
  Pair p;
  SharedBuffer buffer(1, 100);
  buffer.data()[0] = 42;
  p.a->send({{"type", "map"}}, buffer.fd());
  auto message = p.b->receive(5);
  ASSERT_TRUE(message);
  ASSERT_GE(message->fd, 0);
  SharedBuffer received(1, message->fd, buffer.total_bytes());
  EXPECT_EQ(received.data()[0], 42);
}

TEST(Channel, TimesOutWhenNothingComes) {
  Pair p;
  EXPECT_FALSE(p.b->receive(0.05).has_value());
}

TEST(Channel, AClosedPeerIsChannelClosedNotAHang) {
  Pair p;
  p.a.reset();
  EXPECT_THROW(p.b->receive(5), ChannelClosed);
}

TEST(Channel, GarbageInsteadOfAFrameIsRejected) {
  Pair p;
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Channel reader(fds[0]);
  const char garbage[] = "hello, this is not a frame";
  ASSERT_GT(::write(fds[1], garbage, sizeof garbage), 0);
  ::close(fds[1]);
  EXPECT_THROW(reader.receive(5), ChannelClosed);
}

TEST(Channel, SendingToAClosedPeerThrowsInsteadOfKillingTheProcess) {
  Pair p;
  p.b.reset();
  EXPECT_THROW(
      {
        for (int i = 0; i < 100; ++i) p.a->send({{"type", "call"}, {"pad", std::string(100000, 'y')}});
      },
      ChannelClosed);
}

}  // namespace
}  // namespace harness
