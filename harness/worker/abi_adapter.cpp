#include "harness/worker/abi_adapter.h"

#include <cmath>

namespace harness {

namespace {
std::map<std::string, AbiAdapterFactory>& adapters() {
  static std::map<std::string, AbiAdapterFactory> registry;
  return registry;
}
}  // namespace

bool register_abi_adapter(const std::string& challenge, AbiAdapterFactory factory) {
  adapters()[challenge] = std::move(factory);
  return true;
}

std::unique_ptr<AbiAdapter> make_abi_adapter(const std::string& challenge) {
  const auto it = adapters().find(challenge);
  if (it == adapters().end()) {
    throw HarnessError(fmt::format("the worker knows no ABI for challenge '{}'", challenge));
  }
  return it->second();
}

void* OpArguments::tensor(const std::string& name) const {
  const auto it = tensors.find(name);
  if (it == tensors.end()) throw HarnessError(fmt::format("op argument: no tensor '{}'", name));
  return it->second;
}

int64_t OpArguments::scalar_int(const std::string& name) const {
  if (!scalars || !scalars->contains(name) || !(*scalars)[name].is_number_integer()) {
    throw HarnessError(fmt::format("op argument: no integer scalar '{}'", name));
  }
  return (*scalars)[name].get<int64_t>();
}

double OpArguments::scalar_double(const std::string& name) const {
  if (!scalars || !scalars->contains(name) || !(*scalars)[name].is_number()) {
    throw HarnessError(fmt::format("op argument: no number scalar '{}'", name));
  }
  return (*scalars)[name].get<double>();
}

const nlohmann::json& OpArguments::scalar_list(const std::string& name) const {
  if (!scalars || !scalars->contains(name) || !(*scalars)[name].is_array()) {
    throw HarnessError(fmt::format("op argument: no list '{}'", name));
  }
  return (*scalars)[name];
}

}  // namespace harness
