// The harness <-> worker channel: framing, descriptor passing, timeouts, and
// what a dead or babbling peer looks like.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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
  // Not a closed channel: bytes that are not the protocol, which the
  // harness holds against whoever wrote them.
  EXPECT_THROW(reader.receive(5), MalformedMessage);
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

namespace harness {
namespace {

// A child that forks a grandchild holding the socket, then exits: the
// exploit cpu-exploit-child-holds-socket in miniature.
struct ChildLeavingTheSocketOpen {
  ChildLeavingTheSocketOpen() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::close(fds[0]);
      if (::fork() == 0) {
        ::sleep(30);
        ::_exit(0);
      }
      ::_exit(1);
    }
    ::setpgid(pid, pid);
    ::close(fds[1]);
    channel = std::make_unique<Channel>(fds[0]);
  }
  ~ChildLeavingTheSocketOpen() {
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  pid_t pid = -1;
  std::unique_ptr<Channel> channel;
};

TEST(ChannelExitWatch, WithoutItADeadPeerWhoseChildHoldsTheSocketLooksLikeAHang) {
  ChildLeavingTheSocketOpen peer;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(peer.channel->receive(0.5));  // nothing, until the time limit
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(450));
}

TEST(ChannelExitWatch, WithItTheEndOfThePeerEndsTheWaitAtOnce) {
  ChildLeavingTheSocketOpen peer;
  peer.channel->watch_exit(peer.pid);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(peer.channel->receive(20), ChannelClosed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(ChannelExitWatch, WhatThePeerSentBeforeItEndedIsStillRead) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    Channel(fds[1]).send({{"type", "reply"}, {"last", true}});
    ::_exit(0);
  }
  ::close(fds[1]);
  Channel channel(fds[0]);
  channel.watch_exit(pid);
  int status = 0;
  const auto reply = channel.receive(5);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->body["last"], true);
}

}  // namespace
}  // namespace harness
