// Our CUDA kv caches refuse, at create and before touching the device, the
// configs their kernels cannot launch: more query heads than a grid has rows
// (65535) and sequences longer than int32 positions hold. Needs the CUDA
// build, not a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "harness/submissions/catalog.h"
#include "kv_cache.h"

namespace harness {
namespace {

using CreateFn = harness_status (*)(const kv_cache_config*, kv_cache**);
using LastErrorFn = const char* (*)();

TEST(KvCacheCudaLimits, CreateRefusesWhatTheKernelsCannotLaunch) {
  const Catalog catalog = Catalog::load(Catalog::default_index_path());
  int checked = 0;
  for (const SubmissionRecord& record : catalog.records()) {
    if (!record.manifest || record.challenge != "kv_cache" || record.manifest->device != "cuda") continue;
    if (record.build.status == "unavailable") continue;  // configured without nvcc
    SCOPED_TRACE(record.name);
    ASSERT_EQ(record.build.status, "ok") << record.build.reason;
    const std::unique_ptr<void, int (*)(void*)> library(dlopen(record.library.c_str(), RTLD_NOW | RTLD_LOCAL), dlclose);
    ASSERT_NE(library, nullptr) << dlerror();
    const auto create = reinterpret_cast<CreateFn>(dlsym(library.get(), "kv_cache_create"));
    const auto last_error = reinterpret_cast<LastErrorFn>(dlsym(library.get(), "kv_cache_last_error"));
    ASSERT_NE(create, nullptr);
    ASSERT_NE(last_error, nullptr);

    struct Refused {
      kv_cache_config config;
      const char* named_limit;
    };
    // Each config passes the contract's checks; only the CUDA limits refuse it.
    const Refused refused[] = {
        {{1, 70000, 1, 64, 4, 1024, int64_t{1} << 20}, "65535"},
        {{1, 8, 8, 64, 4, int64_t{1} << 31, int64_t{1} << 20}, "2^31 - 1"},
    };
    for (const Refused& r : refused) {
      kv_cache* cache = nullptr;
      EXPECT_EQ(create(&r.config, &cache), HARNESS_STATUS_UNSUPPORTED) << last_error();
      EXPECT_EQ(cache, nullptr);
      EXPECT_NE(std::string(last_error()).find(r.named_limit), std::string::npos) << last_error();
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no CUDA kv_cache submission was built (configured without nvcc)";
  // cuda-fast, cuda-fast-fp16, cuda-naive, the two CUDA mutants and the
  // exploit cuda-work-in-download.
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace harness
