// SharedBuffer: guard bands around every buffer (out_of_bounds_write) and
// the shared mapping through which the worker sees it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "harness/memory/shared_buffer.h"

namespace harness {
namespace {

TEST(SharedBuffer, FreshGuardsAreIntact) {
  SharedBuffer buffer(1, 1000);
  buffer.fill_guards(99);
  std::memset(buffer.data(), 0x11, 1000);  // writing the data itself is fine
  EXPECT_FALSE(buffer.check_guards(99).damaged);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 256, 0u) << "data must be 256-byte aligned";
}

TEST(SharedBuffer, OneElementPastTheEndIsCaughtWithItsDistance) {
  SharedBuffer buffer(2, 1000);
  buffer.fill_guards(5);
  buffer.data()[1000] ^= 0xFF;  // the byte right after the data
  const auto damage = buffer.check_guards(5);
  EXPECT_TRUE(damage.damaged);
  EXPECT_FALSE(damage.before);
  EXPECT_EQ(damage.distance, 0u);
  EXPECT_EQ(damage.bytes_changed, 1u);
}

TEST(SharedBuffer, WritesBeforeTheStartAreCaught) {
  SharedBuffer buffer(3, 64);
  buffer.fill_guards(5);
  buffer.data()[-8] ^= 0x01;
  const auto damage = buffer.check_guards(5);
  EXPECT_TRUE(damage.damaged);
  EXPECT_TRUE(damage.before);
  EXPECT_EQ(damage.distance, 8u);
}

TEST(SharedBuffer, GuardsDependOnTheSeedSoTheyCannotBeGuessed) {
  SharedBuffer a(4, 16), b(4, 16);
  a.fill_guards(1);
  b.fill_guards(2);
  EXPECT_NE(std::memcmp(a.base(), b.base(), SharedBuffer::kGuardBytes), 0);
}

TEST(SharedBuffer, ASecondMappingOfTheDescriptorSeesTheSameBytes) {
  SharedBuffer owner(5, 4096);
  std::memset(owner.data(), 0x5A, 4096);
  SharedBuffer mapped(5, ::dup(owner.fd()), owner.total_bytes());
  EXPECT_EQ(mapped.data()[4095], 0x5A);
  mapped.data()[0] = 0x01;
  EXPECT_EQ(owner.data()[0], 0x01);
}

}  // namespace
}  // namespace harness
