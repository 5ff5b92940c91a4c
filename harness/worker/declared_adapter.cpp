#include "harness/worker/declared_adapter.h"

#include "harness/core/error.h"

namespace harness {

DeclaredAbiAdapter::DeclaredAbiAdapter(ChallengeOps ops, int32_t expected_version)
    : ops_(std::move(ops)), expected_version_(expected_version) {}

void DeclaredAbiAdapter::add_op(const std::string& op, Resolver resolver) {
  ops_.at(op);  // throws for an op the declaration does not have
  resolvers_[op] = std::move(resolver);
}

void DeclaredAbiAdapter::bind(const SymbolTable& symbols) {
  version_ = symbols.require<int32_t (*)()>(ops_.version_function.c_str());
  last_error_ = symbols.require<const char* (*)()>(ops_.last_error_function.c_str());
  for (const OpDeclaration& op : ops_.ops) {
    const auto resolver = resolvers_.find(op.name);
    HARNESS_CHECK(resolver != resolvers_.end(), "{}: op '{}' has no binding in the worker", ops_.challenge, op.name);
    bound_[op.name] = resolver->second(symbols, op);
  }
}

BoundCall DeclaredAbiAdapter::prepare(const std::string& op, const OpArguments& arguments) {
  const auto it = bound_.find(op);
  if (it == bound_.end()) throw HarnessError(fmt::format("{} has no op '{}'", ops_.challenge, op));
  return it->second(arguments);
}

std::string DeclaredAbiAdapter::last_error() const {
  const char* message = last_error_();
  return message ? message : fmt::format("({} returned NULL)", ops_.last_error_function);
}

}  // namespace harness
