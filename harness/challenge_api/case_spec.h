// One case of a challenge's matrix.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "harness/definitions/verdict.h"
#include "harness/device/roofline.h"

namespace harness {

struct CaseSpec {
  // Stable and unique within the challenge, e.g.
  // "correctness.normal.r64.v1024.k10"; `--case` selects by it and the
  // inputs of a case derive from the run seed and this id.
  std::string id;
  Suite suite = Suite::correctness;
  nlohmann::json params = nlohmann::json::object();  // shape, data kind: recorded in results
  std::string description;
  bool quick = false;  // part of the --quick subset
  ByteModel bytes;     // the fewest bytes any implementation must read and write
};

}  // namespace harness
