// The bridge between the worker's generic requests ("call op X with these
// scalars and tensors") and one challenge's C ABI. Each challenge implements
// one adapter in challenges/<name>/worker/ and registers it with
// HARNESS_REGISTER_ABI_ADAPTER; the worker never names a challenge itself.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "harness/core/error.h"

namespace harness {

// Looks up exported symbols of the loaded submission.
class SymbolTable {
 public:
  virtual ~SymbolTable() = default;
  virtual void* find(const char* name) const = 0;  // nullptr when absent

  template <typename Function>
  Function require(const char* name) const {
    void* symbol = find(name);
    if (!symbol) {
      throw HarnessError(fmt::format("the submission does not export '{}' (extern \"C\" missing?)", name));
    }
    return reinterpret_cast<Function>(symbol);
  }
};

struct OpArguments {
  const nlohmann::json* scalars = nullptr;
  std::map<std::string, void*> tensors;  // host pointers (cpu) or device pointers (cuda)
  void* stream = nullptr;                // cudaStream_t for cuda submissions

  void* tensor(const std::string& name) const;
  int64_t scalar_int(const std::string& name) const;
  double scalar_double(const std::string& name) const;
  const nlohmann::json& scalar_list(const std::string& name) const;  // an array of numbers
};

// An op bound to its arguments, so that a timed region holds the ABI call
// and nothing else.
struct BoundCall {
  std::function<int32_t()> invoke;
  // Scalar results read after the call (e.g. a size the submission reports);
  // may be empty.
  std::function<nlohmann::json()> results;
};

class AbiAdapter {
 public:
  virtual ~AbiAdapter() = default;
  // Resolves the challenge's functions; throws naming a missing symbol.
  virtual void bind(const SymbolTable& symbols) = 0;
  virtual int32_t abi_version() const = 0;           // reported by the submission
  virtual int32_t expected_abi_version() const = 0;  // of the header the harness was built with
  // Throws HarnessError for an unknown op or a missing argument.
  virtual BoundCall prepare(const std::string& op, const OpArguments& arguments) = 0;
  virtual std::string last_error() const = 0;
};

using AbiAdapterFactory = std::function<std::unique_ptr<AbiAdapter>()>;

bool register_abi_adapter(const std::string& challenge, AbiAdapterFactory factory);
std::unique_ptr<AbiAdapter> make_abi_adapter(const std::string& challenge);

}  // namespace harness

#define HARNESS_REGISTER_ABI_ADAPTER(challenge, Type)       \
  static const bool harness_abi_adapter_registered_##Type = \
      ::harness::register_abi_adapter(challenge, [] { return std::make_unique<Type>(); })
