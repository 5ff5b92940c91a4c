// The ABI adapter of a challenge whose ops the worker binds from their
// declaration alone (every parameter a tensor, scalar, list, count, result
// or the stream). harness-ops-codegen generates its registration, with each
// op's function type taken from the challenge's header.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "harness/definitions/op_declaration.h"
#include "harness/worker/abi_adapter.h"
#include "harness/worker/declared_binding.h"

namespace harness {

class DeclaredAbiAdapter : public AbiAdapter {
 public:
  // Resolves an op's function from the library and binds a request to it.
  using Resolver =
      std::function<std::function<BoundCall(const OpArguments&)>(const SymbolTable&, const OpDeclaration&)>;

  DeclaredAbiAdapter(ChallengeOps ops, int32_t expected_version);
  // One per declared op, before bind().
  void add_op(const std::string& op, Resolver resolver);

  void bind(const SymbolTable& symbols) override;
  int32_t abi_version() const override { return version_(); }
  int32_t expected_abi_version() const override { return expected_version_; }
  BoundCall prepare(const std::string& op, const OpArguments& arguments) override;
  std::string last_error() const override;

 private:
  ChallengeOps ops_;
  int32_t expected_version_;
  std::map<std::string, Resolver> resolvers_;
  std::map<std::string, std::function<BoundCall(const OpArguments&)>> bound_;
  int32_t (*version_)() = nullptr;
  const char* (*last_error_)() = nullptr;
};

// The resolver of an op whose C function has type F.
template <typename F>
DeclaredAbiAdapter::Resolver declared_op() {
  return [](const SymbolTable& symbols, const OpDeclaration& op) {
    const F function = symbols.require<F>(op.function.c_str());
    return std::function<BoundCall(const OpArguments&)>(
        [function, &op](const OpArguments& arguments) { return bind_declared(function, op, arguments); });
  };
}

}  // namespace harness
