// What the host is: recorded in every results file so that a figure can be
// traced to the machine that produced it.
#pragma once

#include <cstdint>
#include <string>

namespace harness {

struct HostInfo {
  std::string hostname;
  std::string os;         // uname: sysname release machine
  std::string cpu_model;  // /proc/cpuinfo "model name"
  int logical_cores = 0;
  uint64_t memory_bytes = 0;
  uint64_t last_level_cache_bytes = 0;  // largest cache level of cpu0
};

HostInfo query_host();

}  // namespace harness
