// A process submission's tensors in its requests: in protocol 1 as .npy
// files in its scratch folder, the inputs written (or staged out of its
// sight), the outputs read back and checked against their dtype and shape;
// in protocol 2 as places in its twins (process_device_tensors.cpp).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "harness/core/error.h"
#include "harness/core/npy.h"
#include "harness/executors/process_executor.h"
#include "harness/executors/scratch_files.h"

namespace harness {

using nlohmann::json;

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) text += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return "[" + text + "]";
}

}  // namespace

json ProcessExecutor::call_request(const std::string& op, const json& scalars, const std::vector<Binding>& tensors,
                                   const std::string& prefix, bool staged) {
  json inputs = json::object(), outputs = json::object();
  for (const Binding& b : tensors) {
    const TensorSpec& spec = b.tensor->spec();
    if (computes_in_twins()) {
      (b.access == protocol::Access::in ? inputs : outputs)[spec.name] = twin_descriptor(b);
      continue;
    }
    const std::string path = fmt::format("{}/{}-{}.npy", target_.scratch, prefix, spec.name);
    if (b.access == protocol::Access::in) {
      if (staged) {
        write_npy(fmt::format("{}/{}-{}.npy", staging_folder(target_), prefix, spec.name), spec.dtype, spec.shape,
                  b.tensor->raw());
      } else {
        clear_scratch_path(path);
        write_npy(path, spec.dtype, spec.shape, b.tensor->raw());
      }
      inputs[spec.name] = path;
    } else {
      const std::string out = fmt::format("{}/{}-{}.out.npy", target_.scratch, prefix, spec.name);
      outputs[spec.name] = json{{"path", out}, {"dtype", dtype_name(spec.dtype)}, {"shape", spec.shape}};
    }
  }
  return json{{"type", "call"}, {"op", op}, {"scalars", scalars}, {"inputs", inputs}, {"outputs", outputs}};
}

void ProcessExecutor::reveal_inputs(const std::vector<Binding>& tensors, const std::string& prefix) {
  for (const Binding& b : tensors) {
    if (b.access != protocol::Access::in) continue;
    const std::string name = fmt::format("{}-{}.npy", prefix, b.tensor->spec().name);
    const std::string from = staging_folder(target_) + "/" + name;
    const std::string to = target_.scratch + "/" + name;
    clear_scratch_path(to);
    if (std::rename(from.c_str(), to.c_str()) != 0) {
      throw std::runtime_error(fmt::format("cannot move staged input {} to {}: {}", from, to, std::strerror(errno)));
    }
  }
}

void ProcessExecutor::clear_inputs(const std::vector<Binding>& tensors, const std::string& prefix) {
  for (const Binding& b : tensors) {
    if (b.access == protocol::Access::in)
      clear_scratch_path(fmt::format("{}/{}-{}.npy", target_.scratch, prefix, b.tensor->spec().name));
  }
}

void ProcessExecutor::read_outputs(const std::vector<Binding>& tensors, const std::string& prefix,
                                   const std::string& what) {
  for (const Binding& b : tensors) {
    if (!protocol::is_written(b.access)) continue;
    const TensorSpec& spec = b.tensor->spec();
    const std::string path = fmt::format("{}/{}-{}.out.npy", target_.scratch, prefix, spec.name);
    std::error_code ignored;
    if (std::filesystem::symlink_status(path, ignored).type() == std::filesystem::file_type::not_found) {
      throw VerdictException(Verdict::error, fmt::format("{}: the process replied ok but did not write output {} ({})",
                                                         what, spec.name, path));
    }
    const auto into_tensor = [&](const NpyHeader& array) -> void* {
      if (array.dtype != spec.dtype || array.shape != spec.shape) {
        throw VerdictException(Verdict::error, fmt::format("{}: output {} is {}{}, expected {}{}", what, spec.name,
                                                           dtype_name(array.dtype), shape_text(array.shape),
                                                           dtype_name(spec.dtype), shape_text(spec.shape)));
      }
      return b.tensor->raw();
    };
    try {
      // At most the size the expected tensor takes: never read gigabytes
      // because a process wrote (or faked, sparsely) a huge file.
      read_npy_into(path, npy_max_file_bytes(spec.dtype, spec.shape), into_tensor);
    } catch (const UntrustedInputError& e) {
      try {
        clear_scratch_path(path);  // not to be found again by the next call
      } catch (const UntrustedInputError&) {
        // What read_npy found wrong says more than that it was no file.
      }
      throw VerdictException(Verdict::error, fmt::format("{}: output {}: {}", what, spec.name, e.what()));
    }
    clear_scratch_path(path);
  }
}

}  // namespace harness
