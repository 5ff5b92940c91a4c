// A challenge's ops, declared once in its challenge.json ("abi", "ops"): the
// C functions of its header with their parameters in order, each a tensor
// (dtype, shape), a scalar, a host list, a result or the stream. The
// worker's binding, the header check, the checks of every call and the
// process protocol's table all come from this one declaration.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/dtype.h"

namespace harness {

// How an op uses a tensor. in: read, must stay unchanged. out: written
// entirely. state: written for the submission's own later use (a saved
// state), guarded and poisoned like an output, its content its own business.
enum class Access { in, out, state };

inline bool is_written(Access access) { return access != Access::in; }
std::string_view access_name(Access access);

enum class ParameterKind {
  tensor,  // a pointer to device (cuda) or host (cpu) memory the harness owns
  scalar,  // a number passed by value
  list,    // a host array of numbers, from a list-valued scalar of the request
  count,   // the length of a list, passed by value
  result,  // a number the function writes through a pointer, returned to the harness
  stream,  // the cudaStream_t to launch on (void*)
  handle,  // a challenge-specific C type its own worker adapter supplies (kv_cache's cache)
};

struct OpParameter {
  std::string name;
  ParameterKind kind = ParameterKind::scalar;
  Access access = Access::in;       // tensors
  DType dtype = DType::f32;         // tensors, scalars, lists, counts, results
  bool opaque = false;              // a tensor of bytes whose C element type is void ("dtype": "bytes")
  std::vector<std::string> shape;   // tensors: a symbol, an integer or "sum(<list>)" per dimension
  std::string of;                   // counts: the list counted
  std::string c_type;               // handles: the C type, verbatim
  std::vector<std::string> fields;  // handles: integer scalars of the request the adapter packs into it
};

struct OpDeclaration {
  std::string name;                     // the op's name in requests ("softmax_topk", "forward")
  std::string function;                 // the C function ("softmax_topk_run")
  std::vector<OpParameter> parameters;  // in the C function's order
  // The function returns a number (a result named so) instead of a status.
  std::optional<OpParameter> returns;

  const OpParameter* find(const std::string& parameter) const;
  std::vector<const OpParameter*> of_kind(ParameterKind kind) const;
  // What a request's "scalars" holds: scalars, lists and handles' fields, in order.
  std::vector<std::string> request_scalars() const;
  // The C type of the function pointer, e.g.
  // "harness_status (*)(const float*, int64_t, void*)".
  std::string c_function_type() const;
  // The declaration as C: "harness_status f(const float* x, int64_t n)".
  std::string c_signature() const;
};

struct ChallengeOps {
  std::string challenge;
  std::string header;               // "softmax_topk.h"
  std::string version_macro;        // "SOFTMAX_TOPK_ABI_VERSION"
  std::string version_function;     // int32_t f(void)
  std::string last_error_function;  // const char* f(void)
  std::vector<OpDeclaration> ops;

  const OpDeclaration* find(const std::string& op) const;
  // Throws HarnessError naming the challenge and the op.
  const OpDeclaration& at(const std::string& op) const;
  // Whether every parameter is one the worker binds without help (no handle).
  bool bindable_without_adapter() const;
};

// Parses the "abi" and "ops" of a challenge.json; throws HarnessError naming
// the file, the op and the parameter of anything malformed.
ChallengeOps parse_challenge_ops(const std::string& challenge, const nlohmann::json& config);

// The C spelling of a parameter's type ("const float*", "int64_t").
std::string c_type_of(const OpParameter& parameter);

}  // namespace harness
