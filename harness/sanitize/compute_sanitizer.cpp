#include "harness/sanitize/compute_sanitizer.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "harness/core/error.h"

namespace harness {

namespace {

constexpr const char* kPrefix = "=========";
// Lines of an error's report quoted in its verdict's message.
constexpr size_t kQuotedLines = 8;

bool executable(const std::string& path) {
  std::error_code ignored;
  const auto status = std::filesystem::status(path, ignored);
  return std::filesystem::is_regular_file(status) &&
         (status.permissions() & std::filesystem::perms::owner_exec) != std::filesystem::perms::none;
}

std::vector<std::string> candidates() {
  std::vector<std::string> paths;
  if (const char* chosen = std::getenv("HARNESS_COMPUTE_SANITIZER"); chosen && *chosen) return {chosen};
#ifdef HARNESS_CUDA_BIN_DIR
  paths.push_back(std::string(HARNESS_CUDA_BIN_DIR) + "/compute-sanitizer");
#endif
  paths.push_back("/usr/local/cuda/bin/compute-sanitizer");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream folders(path);
    for (std::string folder; std::getline(folders, folder, ':');) {
      if (!folder.empty()) paths.push_back(folder + "/compute-sanitizer");
    }
  }
  return paths;
}

// A line of the report without its "========= " prefix; nullopt for a line
// that is not the sanitizer's.
std::optional<std::string> body_of(const std::string& line) {
  if (line.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string body = line.substr(std::string(kPrefix).size());
  if (!body.empty() && body[0] == ' ') body.erase(0, 1);
  return body;
}

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// The first line of an error: the sanitizer's reports start flush left,
// their details indented beneath.
std::optional<Verdict> error_verdict(const std::string& body) {
  if (body.empty() || body[0] == ' ') return std::nullopt;
  if (starts_with(body, "Error: Race reported")) return Verdict::data_race;
  if (starts_with(body, "Invalid ")) {
    return body.find(" write") != std::string::npos ? Verdict::out_of_bounds_write : Verdict::invalid_memory_access;
  }
  // Not "Error: process didn't terminate successfully" (a worker the
  // harness stopped) nor "Program hit ..." (a failed API call).
  for (const char* kind :
       {"Misaligned ", "Out-of-range ", "Malloc/Free error", "Uninitialized ", "Barrier error", "Illegal "}) {
    if (starts_with(body, kind)) return Verdict::invalid_memory_access;
  }
  return std::nullopt;
}

}  // namespace

SanitizerSetting resolve_sanitizer(const std::string& tool) {
  if (tool != "memcheck" && tool != "racecheck") {
    throw UsageError(fmt::format("--sanitize '{}': the tools are memcheck (the default) and racecheck", tool));
  }
  const std::vector<std::string> paths = candidates();
  for (const std::string& path : paths) {
    if (executable(path)) return SanitizerSetting{tool, path};
  }
  std::string looked;
  for (size_t i = 0; i < paths.size() && i < 4; ++i) looked += (i ? ", " : "") + paths[i];
  throw UsageError(fmt::format(
      "--sanitize: no compute-sanitizer found (looked at {}{}); it comes with the CUDA toolkit, or name it in "
      "HARNESS_COMPUTE_SANITIZER",
      looked, paths.size() > 4 ? ", and the rest of PATH" : ""));
}

std::vector<std::string> sanitizer_arguments(const SanitizerSetting& setting, const std::string& report_path,
                                             const std::string& program, const std::vector<std::string>& arguments) {
  std::vector<std::string> args = {"--tool", setting.tool,         "--log-file",       report_path, "--print-limit",
                                   "10",     "--target-processes", "application-only", program};
  args.insert(args.end(), arguments.begin(), arguments.end());
  return args;
}

std::optional<SanitizerFinding> first_sanitizer_finding(const std::string& tool, const std::string& report) {
  std::istringstream lines(report);
  std::optional<SanitizerFinding> finding;
  size_t quoted = 0;
  std::string summary;
  for (std::string line; std::getline(lines, line);) {
    const auto body = body_of(line);
    if (!body) continue;
    if (starts_with(*body, "ERROR SUMMARY:") || starts_with(*body, "RACECHECK SUMMARY:")) summary = *body;
    if (!finding) {
      if (const auto verdict = error_verdict(*body)) {
        finding = SanitizerFinding{*verdict, fmt::format("compute-sanitizer {}: {}", tool, *body)};
        quoted = 1;
      }
      continue;
    }
    // The first error's details, up to the line that ends its report.
    if (quoted == 0) continue;
    if (body->empty() || (*body)[0] != ' ' || quoted >= kQuotedLines) {
      quoted = 0;
      continue;
    }
    const size_t first = body->find_first_not_of(' ');
    finding->message += "; " + body->substr(first);
    ++quoted;
  }
  if (finding && !summary.empty()) finding->message += fmt::format(" ({})", summary);
  return finding;
}

}  // namespace harness
