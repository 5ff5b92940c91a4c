#include "harness/definitions/op_call_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

namespace harness {

namespace {

using nlohmann::json;

bool integer_type(DType dtype) { return dtype == DType::i32 || dtype == DType::i64 || dtype == DType::u8; }

std::string check_scalar(const OpParameter* p, const std::string& name, const json& value) {
  if (p && p->kind == ParameterKind::list) {
    if (!value.is_array()) return fmt::format("'{}' is {}, not a list", name, value.dump());
    for (const json& element : value) {
      if (!element.is_number_integer()) return fmt::format("'{}' holds {}, not an integer", name, element.dump());
    }
    return {};
  }
  // A handle's fields are integers.
  const bool integer = !p || integer_type(p->dtype);
  if (integer ? !value.is_number_integer() : !value.is_number()) {
    return fmt::format("scalar '{}' is {}, not {}", name, value.dump(), integer ? "an integer" : "a number");
  }
  return {};
}

std::string check_scalars(const OpDeclaration& op, const json& scalars) {
  if (!scalars.is_object()) return fmt::format("its scalars are {}, not an object", scalars.dump());
  const std::vector<std::string> declared = op.request_scalars();
  for (const auto& [name, value] : scalars.items()) {
    if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
      return fmt::format("scalar '{}' is not declared", name);
    }
  }
  for (const std::string& name : declared) {
    if (!scalars.contains(name)) return fmt::format("scalar '{}' is missing", name);
    const OpParameter* p = op.find(name);
    std::string problem = check_scalar(p, name, scalars[name]);
    if (!problem.empty()) return problem;
  }
  return {};
}

// The value of one dimension's expression, binding a free symbol on its first use.
std::optional<int64_t> dimension(const std::string& expression, const json& scalars,
                                 std::map<std::string, int64_t>& free) {
  if (expression.rfind("sum(", 0) == 0 && expression.back() == ')') {
    const std::string list = expression.substr(4, expression.size() - 5);
    if (!scalars.contains(list)) return std::nullopt;
    int64_t total = 0;
    for (const json& element : scalars[list]) total += element.get<int64_t>();
    return total;
  }
  if (expression.find_first_not_of("0123456789") == std::string::npos) return std::stoll(expression);
  if (scalars.contains(expression) && scalars[expression].is_number_integer()) {
    return scalars[expression].get<int64_t>();
  }
  const auto bound = free.find(expression);
  if (bound != free.end()) return bound->second;
  return std::nullopt;
}

std::string check_tensors(const OpDeclaration& op, const json& scalars, const std::vector<CallTensor>& tensors) {
  std::map<std::string, const CallTensor*> given;
  for (const CallTensor& t : tensors) {
    const OpParameter* p = op.find(t.name);
    if (!p || p->kind != ParameterKind::tensor) return fmt::format("tensor '{}' is not declared", t.name);
    if (!given.emplace(t.name, &t).second) return fmt::format("tensor '{}' is bound twice", t.name);
  }
  std::map<std::string, int64_t> free;
  for (const OpParameter* p : op.of_kind(ParameterKind::tensor)) {
    const auto it = given.find(p->name);
    if (it == given.end()) return fmt::format("tensor '{}' is missing", p->name);
    const CallTensor& t = *it->second;
    const std::string declared =
        fmt::format("{}[{}]", p->opaque ? "bytes" : std::string(dtype_name(p->dtype)), fmt::join(p->shape, ", "));
    const std::string bound = fmt::format("{}{}", dtype_name(t.dtype), fmt::format("[{}]", fmt::join(t.shape, ", ")));
    if (t.dtype != p->dtype) return fmt::format("tensor '{}' is {}, declared {}", p->name, bound, declared);
    if (t.shape.size() != p->shape.size())
      return fmt::format("tensor '{}' is {}, declared {}", p->name, bound, declared);
    for (size_t d = 0; d < p->shape.size(); ++d) {
      const std::optional<int64_t> expected = dimension(p->shape[d], scalars, free);
      if (!expected) {
        free[p->shape[d]] = t.shape[d];
      } else if (*expected != t.shape[d]) {
        return fmt::format("tensor '{}' is {}, declared {}: dimension {} ({}) should be {}", p->name, bound, declared,
                           d, p->shape[d], *expected);
      }
    }
  }
  return {};
}

}  // namespace

std::string call_disagreement(const ChallengeOps& ops, const OpDeclaration& op, const json& given_scalars,
                              const std::vector<CallTensor>& tensors) {
  // `{}` in a C++ initialiser is a null; a call without scalars.
  const json& scalars = given_scalars.is_null() ? json::object() : given_scalars;
  std::string problem = check_scalars(op, scalars);
  if (problem.empty()) problem = check_tensors(op, scalars, tensors);
  if (problem.empty()) return {};
  return fmt::format("a call of {} disagrees with its declaration in challenges/{}/challenge.json ({}): {}", op.name,
                     ops.challenge, op.c_signature(), problem);
}

}  // namespace harness
