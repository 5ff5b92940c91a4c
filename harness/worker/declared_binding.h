// Binds a request for a declared op to the submission's C function: each
// parameter taken from the request by its declared name and kind, converted
// to the function's own parameter type. The generated check of the header
// against the declaration (harness-ops-codegen) makes the two agree.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/core/error.h"
#include "harness/definitions/op_declaration.h"
#include "harness/worker/abi_adapter.h"

namespace harness {

namespace declared {

// What the bound call's pointer arguments point at (a list copied to the
// host, a result to be written); it lives as long as the call.
class Storage {
 public:
  template <typename T>
  T* list(const nlohmann::json& values) {
    auto& bytes = blocks_.emplace_back(std::max<size_t>(values.size(), 1) * sizeof(T));
    T* data = reinterpret_cast<T*>(bytes.data());
    size_t i = 0;
    for (const nlohmann::json& value : values) data[i++] = checked<T>(value.get<int64_t>(), "a list element");
    return data;
  }
  template <typename T>
  T* result(const std::string& name) {
    auto& bytes = blocks_.emplace_back(sizeof(T));
    T* value = reinterpret_cast<T*>(bytes.data());
    *value = T(-1);
    readers_.emplace_back([name, value](nlohmann::json& out) { out[name] = *value; });
    return value;
  }
  nlohmann::json results() const {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& read : readers_) read(out);
    return out;
  }
  bool has_results() const { return !readers_.empty(); }

  template <typename T>
  static T checked(int64_t value, const std::string& what) {
    if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(int64_t)) {
      HARNESS_CHECK(value >= std::numeric_limits<T>::min() && value <= std::numeric_limits<T>::max(),
                    "{} {} does not fit the C parameter's type", what, value);
    }
    return static_cast<T>(value);
  }

 private:
  std::deque<std::vector<unsigned char>> blocks_;
  std::vector<std::function<void(nlohmann::json&)>> readers_;
};

template <typename T>
T argument(const OpParameter& p, const OpArguments& args, Storage& storage) {
  using Pointee = std::remove_const_t<std::remove_pointer_t<T>>;
  switch (p.kind) {
    case ParameterKind::tensor:
      if constexpr (std::is_pointer_v<T>) return static_cast<T>(args.tensor(p.name));
      break;
    case ParameterKind::scalar:
      if constexpr (std::is_integral_v<T>) return Storage::checked<T>(args.scalar_int(p.name), "scalar " + p.name);
      if constexpr (std::is_floating_point_v<T>) return static_cast<T>(args.scalar_double(p.name));
      break;
    case ParameterKind::count:
      if constexpr (std::is_integral_v<T>) {
        return Storage::checked<T>(static_cast<int64_t>(args.scalar_list(p.of).size()), "the length of " + p.of);
      }
      break;
    case ParameterKind::list:
      if constexpr (std::is_pointer_v<T> && std::is_integral_v<Pointee>) {
        return storage.list<Pointee>(args.scalar_list(p.name));
      }
      break;
    case ParameterKind::result:
      if constexpr (std::is_pointer_v<T> && std::is_arithmetic_v<Pointee> &&
                    !std::is_const_v<std::remove_pointer_t<T>>) {
        return storage.result<Pointee>(p.name);
      }
      break;
    case ParameterKind::stream:
      if constexpr (std::is_same_v<T, void*>) return args.stream;
      break;
    case ParameterKind::handle: break;
  }
  HARNESS_FAIL(
      "parameter '{}' ({}) cannot be bound to the C type its function takes: a handle needs the "
      "challenge's own worker adapter",
      p.name, c_type_of(p));
}

template <typename R, typename... P, size_t... I>
std::tuple<P...> arguments(const OpDeclaration& op, const OpArguments& args, Storage& storage,
                           std::index_sequence<I...>) {
  // Braced initialisation evaluates left to right.
  return std::tuple<P...>{argument<P>(op.parameters[I], args, storage)...};
}

}  // namespace declared

// The op bound to its arguments: invoke() calls the function alone.
template <typename R, typename... P>
BoundCall bind_declared(R (*function)(P...), const OpDeclaration& op, const OpArguments& args) {
  HARNESS_CHECK(op.parameters.size() == sizeof...(P), "op '{}' declares {} parameters; {} takes {}", op.name,
                op.parameters.size(), op.function, sizeof...(P));
  auto storage = std::make_shared<declared::Storage>();
  auto values = declared::arguments<R, P...>(op, args, *storage, std::index_sequence_for<P...>{});
  BoundCall call;
  if (op.returns) {
    auto returned = std::make_shared<R>();
    call.invoke = [function, values, returned] {
      *returned = std::apply(function, values);
      return int32_t{0};
    };
    call.results = [storage, returned, name = op.returns->name] {
      nlohmann::json out = storage->results();
      out[name] = *returned;
      return out;
    };
    return call;
  }
  call.invoke = [function, values, storage] { return static_cast<int32_t>(std::apply(function, values)); };
  if (storage->has_results()) call.results = [storage] { return storage->results(); };
  return call;
}

}  // namespace harness
