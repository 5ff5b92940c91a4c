// Text from a submission (what it printed, its messages) is arbitrary bytes;
// the results file (JSON) and the JUnit file (XML) must hold valid UTF-8, or
// writing them fails and takes the run down with it.
#pragma once

#include <string>

namespace harness {

// `text` with every byte that is not part of a well-formed UTF-8 sequence
// replaced by U+FFFD, and every control character but tab and newline by
// U+FFFD too (XML 1.0 cannot carry them, escaped or not).
std::string sanitized_utf8(const std::string& text);

}  // namespace harness
