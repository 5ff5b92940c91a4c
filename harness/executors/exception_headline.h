// Messages from process submissions often carry a Python traceback, whose
// useful line (the exception) comes last, while the console and the report
// show a message's start. This puts the exception first.
#pragma once

#include <string>

namespace harness {

// "Traceback (most recent call last):\n  File \"a.py\", line 3, in op\n ...
// ValueError: bad k\n" -> "ValueError: bad k (at File \"a.py\", line 3, in
// op)\n" followed by the original text. Text without a traceback is
// returned unchanged.
std::string lead_with_exception(const std::string& message);

}  // namespace harness
