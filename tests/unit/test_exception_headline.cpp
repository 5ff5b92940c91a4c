// A process submission's Python traceback: the exception line leads, where
// the console and the report cell (which show a message's start) see it.
#include <gtest/gtest.h>

#include "harness/executors/exception_headline.h"

namespace harness {
namespace {

TEST(ExceptionHeadline, TheExceptionLineOfATracebackComesFirst) {
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/x/harness_client.py\", line 58, in _answer\n"
      "    results = fn(**inputs)\n"
      "  File \"/x/adapter.py\", line 12, in softmax_topk\n"
      "    raise ValueError(\"k too large\")\n"
      "ValueError: k too large\n";
  const std::string message = lead_with_exception(traceback);
  EXPECT_EQ(message.rfind("ValueError: k too large (at File \"/x/adapter.py\", line 12, in softmax_topk)\n", 0), 0u)
      << message;
  EXPECT_NE(message.find(traceback), std::string::npos) << "the traceback is kept";
}

TEST(ExceptionHeadline, ChainedExceptionsLeadWithTheLastOne) {
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"a.py\", line 1, in f\n"
      "KeyError: 'x'\n"
      "\n"
      "During handling of the above exception, another exception occurred:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"a.py\", line 3, in f\n"
      "RuntimeError: lookup failed\n";
  EXPECT_EQ(lead_with_exception(traceback).rfind("RuntimeError: lookup failed (at File \"a.py\", line 3, in f)", 0),
            0u);
}

TEST(ExceptionHeadline, OtherMessagesAreLeftAlone) {
  EXPECT_EQ(lead_with_exception("k must be at most 64"), "k must be at most 64");
  EXPECT_EQ(lead_with_exception(""), "");
  EXPECT_EQ(lead_with_exception("Traceback (most recent call last):\n"), "Traceback (most recent call last):\n");
}

}  // namespace
}  // namespace harness
