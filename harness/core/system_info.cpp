#include "harness/core/system_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "harness/core/error.h"
#include "harness/core/files.h"

namespace harness {

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

// Sizes in sysfs read like "32768K".
uint64_t parse_cache_size(const std::string& text) {
  if (text.empty()) return 0;
  uint64_t value = std::stoull(text);
  const char unit = text.back();
  if (unit == 'K') value <<= 10;
  if (unit == 'M') value <<= 20;
  return value;
}

uint64_t last_level_cache() {
  uint64_t best = 0;
  int best_level = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string base = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream level_file(base + "level"), size_file(base + "size"), type_file(base + "type");
    if (!level_file || !size_file) break;
    int level = 0;
    std::string size, type;
    level_file >> level;
    size_file >> size;
    type_file >> type;
    if (type == "Instruction") continue;
    if (level >= best_level) {
      best_level = level;
      best = parse_cache_size(size);
    }
  }
  return best;
}

}  // namespace

HostInfo query_host() {
  HostInfo info;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) info.hostname = name;
  struct utsname uts {};
  if (::uname(&uts) == 0) info.os = fmt::format("{} {} {}", uts.sysname, uts.release, uts.machine);
  info.cpu_model = cpu_model_name();
  info.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) info.memory_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  info.last_level_cache_bytes = last_level_cache();
  return info;
}

}  // namespace harness
