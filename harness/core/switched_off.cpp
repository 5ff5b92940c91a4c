#include "harness/core/switched_off.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "harness/core/error.h"

namespace harness {

std::vector<std::string> switched_off_parts(const char* variable, const std::vector<std::string>& names) {
  const char* value = std::getenv(variable);
  std::vector<std::string> parts;
  std::stringstream list(value ? value : "");
  for (std::string part; std::getline(list, part, ',');) {
    if (part.empty()) continue;
    if (part == "all") return names;
    if (std::find(names.begin(), names.end(), part) == names.end()) {
      std::string known;
      for (const auto& name : names) known += name + ", ";
      throw UsageError(fmt::format("{} names '{}', which is not one of its parts ({}all)", variable, part, known));
    }
    parts.push_back(part);
  }
  return parts;
}

bool part_switched_off(const char* variable, const std::vector<std::string>& names, const std::string& part) {
  const auto parts = switched_off_parts(variable, names);
  return std::find(parts.begin(), parts.end(), part) != parts.end();
}

}  // namespace harness
