// What the GPU tests share: they skip, saying why, where no CUDA device can
// be used.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "harness/device/device_info.h"

namespace harness::testing {

// "" where a CUDA device can be used; otherwise why not.
inline std::string cuda_missing_reason() {
  for (const auto& d : discover_devices()) {
    if (d.kind != "cuda") continue;
    if (d.available) return "";
    return d.unavailable_reason;
  }
  return "no CUDA entry";
}

}  // namespace harness::testing

#define REQUIRE_CUDA_DEVICE()                                               \
  do {                                                                      \
    const std::string reason = ::harness::testing::cuda_missing_reason();   \
    if (!reason.empty()) GTEST_SKIP() << "no CUDA device here: " << reason; \
  } while (false)
