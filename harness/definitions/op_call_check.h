// Whether a call agrees with its op's declaration: the scalars it names, the
// tensors it binds, their dtypes and their shapes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/dtype.h"
#include "harness/definitions/op_declaration.h"

namespace harness {

struct CallTensor {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
};

// What disagrees, naming the declaration; empty when the call matches it.
// A dimension named by a scalar must equal it; one named by a symbol that is
// no scalar must be the same wherever the call uses that symbol.
std::string call_disagreement(const ChallengeOps& ops, const OpDeclaration& op, const nlohmann::json& scalars,
                              const std::vector<CallTensor>& tensors);

}  // namespace harness
