// The excerpt of a failed build's log: the compiler's first errors, each
// with the line after it, and not the notes.
#include <gtest/gtest.h>

#include <string>

#include "harness/submissions/catalog.h"

namespace harness {
namespace {

TEST(BuildLog, ExcerptKeepsTheFirstErrors) {
  const std::string log =
      "$ g++ -c a.cpp\n"
      "a.cpp: In function 'int f()':\n"
      "a.cpp:3:5: error: 'x' was not declared in this scope\n"
      "    3 |     x = 1;\n"
      "note: something\n";
  const std::string excerpt = build_log_excerpt(log);
  EXPECT_NE(excerpt.find("error: 'x' was not declared"), std::string::npos);
  EXPECT_NE(excerpt.find("x = 1;"), std::string::npos);
  EXPECT_EQ(excerpt.find("note: something"), std::string::npos);
  EXPECT_EQ(build_log_excerpt("only\nwarnings\n"), "only\nwarnings\n");
}

}  // namespace
}  // namespace harness
