#include "harness/definitions/op_declaration.h"

#include <fmt/format.h>

#include <set>

#include "harness/core/error.h"

namespace harness {

namespace {

using nlohmann::json;

const std::map<std::string, ParameterKind>& kinds() {
  static const std::map<std::string, ParameterKind> names{
      {"in", ParameterKind::tensor},     {"out", ParameterKind::tensor},    {"state", ParameterKind::tensor},
      {"scalar", ParameterKind::scalar}, {"list", ParameterKind::list},     {"count", ParameterKind::count},
      {"result", ParameterKind::result}, {"stream", ParameterKind::stream}, {"handle", ParameterKind::handle}};
  return names;
}

std::string c_element(DType dtype, bool opaque) {
  if (opaque) return "void";
  switch (dtype) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16: return "uint16_t";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::u8: return "uint8_t";
  }
  return "void";
}

bool is_integer(DType dtype) { return dtype == DType::i32 || dtype == DType::i64 || dtype == DType::u8; }

// Parses one parameter; `where` names it for messages.
OpParameter parse_parameter(const json& p, const std::string& where) {
  HARNESS_CHECK(p.is_object(), "{}: a parameter must be an object, not {}", where, p.dump());
  OpParameter parameter;
  parameter.name = p.value("name", "");
  HARNESS_CHECK(!parameter.name.empty(), "{}: a parameter without a name: {}", where, p.dump());
  const std::string at = fmt::format("{}, parameter '{}'", where, parameter.name);
  const std::string kind = p.value("kind", "");
  const auto found = kinds().find(kind);
  HARNESS_CHECK(found != kinds().end(),
                "{}: kind '{}' is none of in, out, state, scalar, list, count, result, "
                "stream, handle",
                at, kind);
  parameter.kind = found->second;
  if (parameter.kind == ParameterKind::tensor) {
    parameter.access = kind == "in" ? Access::in : kind == "out" ? Access::out : Access::state;
  }
  const bool typed = parameter.kind != ParameterKind::stream && parameter.kind != ParameterKind::handle;
  if (typed) {
    const std::string dtype = p.value("dtype", "");
    HARNESS_CHECK(!dtype.empty(), "{}: no dtype", at);
    if (dtype == "bytes") {
      HARNESS_CHECK(parameter.kind == ParameterKind::tensor, "{}: only a tensor can be bytes", at);
      parameter.dtype = DType::u8;
      parameter.opaque = true;
    } else {
      try {
        parameter.dtype = dtype_from_name(dtype);
      } catch (const std::exception& e) {
        HARNESS_FAIL("{}: {}", at, e.what());
      }
    }
    if (parameter.kind == ParameterKind::list || parameter.kind == ParameterKind::count) {
      HARNESS_CHECK(is_integer(parameter.dtype), "{}: a {} holds integers, not {}", at, kind, dtype);
    }
  }
  if (parameter.kind == ParameterKind::tensor) {
    HARNESS_CHECK(p.contains("shape") && p["shape"].is_array() && !p["shape"].empty(),
                  "{}: a tensor needs a shape, a list of dimensions", at);
    for (const json& dim : p["shape"]) {
      if (dim.is_number_integer()) {
        parameter.shape.push_back(std::to_string(dim.get<int64_t>()));
      } else {
        HARNESS_CHECK(dim.is_string() && !dim.get<std::string>().empty(),
                      "{}: dimension {} is neither a name nor "
                      "an integer",
                      at, dim.dump());
        parameter.shape.push_back(dim.get<std::string>());
      }
    }
  }
  if (parameter.kind == ParameterKind::count) {
    parameter.of = p.value("of", "");
    HARNESS_CHECK(!parameter.of.empty(), "{}: a count names the list it counts (\"of\")", at);
  }
  if (parameter.kind == ParameterKind::handle) {
    parameter.c_type = p.value("c", "");
    HARNESS_CHECK(!parameter.c_type.empty(), "{}: a handle gives its C type (\"c\")", at);
    for (const json& field : p.value("fields", json::array())) {
      HARNESS_CHECK(field.is_string(), "{}: a field is the name of a scalar, not {}", at, field.dump());
      parameter.fields.push_back(field.get<std::string>());
    }
  }
  return parameter;
}

OpDeclaration parse_op(const json& o, const std::string& file) {
  HARNESS_CHECK(o.is_object(), "{}: every op is an object", file);
  OpDeclaration op;
  op.name = o.value("op", "");
  HARNESS_CHECK(!op.name.empty(), "{}: an op without a name (\"op\")", file);
  const std::string where = fmt::format("{}, op '{}'", file, op.name);
  op.function = o.value("function", "");
  HARNESS_CHECK(!op.function.empty(), "{}: no C function (\"function\")", where);
  std::set<std::string> names;
  for (const json& p : o.value("parameters", json::array())) {
    OpParameter parameter = parse_parameter(p, where);
    HARNESS_CHECK(names.insert(parameter.name).second, "{}: parameter '{}' declared twice", where, parameter.name);
    op.parameters.push_back(std::move(parameter));
  }
  if (o.contains("returns")) {
    op.returns = parse_parameter(o["returns"], where + ", returns");
    HARNESS_CHECK(op.returns->kind == ParameterKind::result, "{}: what a function returns is of kind result", where);
    HARNESS_CHECK(names.insert(op.returns->name).second, "{}: '{}' declared twice", where, op.returns->name);
  }
  for (const OpParameter& p : op.parameters) {
    if (p.kind == ParameterKind::count) {
      const OpParameter* list = op.find(p.of);
      HARNESS_CHECK(list && list->kind == ParameterKind::list,
                    "{}: count '{}' is of '{}', which is not a list of "
                    "this op",
                    where, p.name, p.of);
    }
  }
  return op;
}

std::string required_string(const json& object, const char* key, const std::string& where) {
  HARNESS_CHECK(object.contains(key) && object[key].is_string() && !object[key].get<std::string>().empty(),
                "{}: \"{}\" missing", where, key);
  return object[key].get<std::string>();
}

}  // namespace

std::string_view access_name(Access access) {
  switch (access) {
    case Access::in: return "in";
    case Access::out: return "out";
    case Access::state: return "state";
  }
  return "?";
}

std::string c_type_of(const OpParameter& p) {
  switch (p.kind) {
    case ParameterKind::tensor: return (p.access == Access::in ? "const " : "") + c_element(p.dtype, p.opaque) + "*";
    case ParameterKind::scalar:
    case ParameterKind::count: return c_element(p.dtype, false);
    case ParameterKind::list: return "const " + c_element(p.dtype, false) + "*";
    case ParameterKind::result: return c_element(p.dtype, false) + "*";
    case ParameterKind::stream: return "void*";
    case ParameterKind::handle: return p.c_type;
  }
  return "void";
}

const OpParameter* OpDeclaration::find(const std::string& parameter) const {
  for (const OpParameter& p : parameters) {
    if (p.name == parameter) return &p;
  }
  return nullptr;
}

std::vector<const OpParameter*> OpDeclaration::of_kind(ParameterKind kind) const {
  std::vector<const OpParameter*> found;
  for (const OpParameter& p : parameters) {
    if (p.kind == kind) found.push_back(&p);
  }
  return found;
}

std::vector<std::string> OpDeclaration::request_scalars() const {
  std::vector<std::string> names;
  for (const OpParameter& p : parameters) {
    if (p.kind == ParameterKind::scalar || p.kind == ParameterKind::list) names.push_back(p.name);
    names.insert(names.end(), p.fields.begin(), p.fields.end());
  }
  return names;
}

std::string OpDeclaration::c_function_type() const {
  std::string arguments;
  for (const OpParameter& p : parameters) arguments += (arguments.empty() ? "" : ", ") + c_type_of(p);
  const std::string result = returns ? c_element(returns->dtype, false) : "harness_status";
  return fmt::format("{} (*)({})", result, arguments.empty() ? "void" : arguments);
}

std::string OpDeclaration::c_signature() const {
  std::string arguments;
  for (const OpParameter& p : parameters) {
    arguments += fmt::format("{}{} {}", arguments.empty() ? "" : ", ", c_type_of(p), p.name);
  }
  const std::string result = returns ? c_element(returns->dtype, false) : "harness_status";
  return fmt::format("{} {}({})", result, function, arguments.empty() ? "void" : arguments);
}

const OpDeclaration* ChallengeOps::find(const std::string& op) const {
  for (const OpDeclaration& declaration : ops) {
    if (declaration.name == op) return &declaration;
  }
  return nullptr;
}

const OpDeclaration& ChallengeOps::at(const std::string& op) const {
  const OpDeclaration* declaration = find(op);
  HARNESS_CHECK(declaration, "{} declares no op '{}' (challenges/{}/challenge.json, \"ops\")", challenge, op,
                challenge);
  return *declaration;
}

bool ChallengeOps::bindable_without_adapter() const {
  for (const OpDeclaration& op : ops) {
    if (!op.of_kind(ParameterKind::handle).empty()) return false;
  }
  return true;
}

ChallengeOps parse_challenge_ops(const std::string& challenge, const json& config) {
  const std::string file = fmt::format("challenges/{}/challenge.json", challenge);
  ChallengeOps result;
  result.challenge = challenge;
  HARNESS_CHECK(config.contains("abi") && config["abi"].is_object(),
                "{}: no \"abi\" (header, version, "
                "version_function, last_error_function)",
                file);
  const json& abi = config["abi"];
  result.header = required_string(abi, "header", file + ", abi");
  result.version_macro = required_string(abi, "version", file + ", abi");
  result.version_function = required_string(abi, "version_function", file + ", abi");
  result.last_error_function = required_string(abi, "last_error_function", file + ", abi");
  HARNESS_CHECK(config.contains("ops") && config["ops"].is_array() && !config["ops"].empty(),
                "{}: no \"ops\", the list of the challenge's operations", file);
  for (const json& o : config["ops"]) {
    OpDeclaration op = parse_op(o, file);
    HARNESS_CHECK(!result.find(op.name), "{}: op '{}' declared twice", file, op.name);
    result.ops.push_back(std::move(op));
  }
  return result;
}

}  // namespace harness
