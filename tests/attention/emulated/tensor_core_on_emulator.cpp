// The tensor-core launchers and kernels, compiled for the warp emulator.
#include "attention/cuda/attention_cuda_tensor_core.cu"
#include "kernels_on_emulator.h"
#include "shape_of_case.h"

namespace attention::emulated {

std::string forward_tensor_core(const AttnCase& c, const float* q, const float* k, const float* v, float* o,
                                float* lse) {
  const char* why = "";
  if (!cuda::tensor_core_supported(shape_of(c), limits(), 9, &why)) return std::string("unsupported: ") + why;
  return outcome(cuda::forward_tensor_core(shape_of(c), q, k, v, o, lse, nullptr));
}

std::string forward_tensor_core_split_kv(const AttnCase& c, const float* q, const float* k, const float* v, float* o,
                                         float* lse) {
  const char* why = "";
  if (!cuda::tensor_core_supported(shape_of(c), limits(), 9, &why)) return std::string("unsupported: ") + why;
  return outcome(cuda::forward_tensor_core_split_kv(shape_of(c), q, k, v, o, lse, nullptr));
}

std::string backward_tensor_core(const AttnCase& c, const float* q, const float* k, const float* v, const float* o,
                                 const float* lse, const float* dout, float* dq, float* dk, float* dv) {
  const char* why = "";
  if (!cuda::tensor_core_supported(shape_of(c), limits(), 9, &why)) return std::string("unsupported: ") + why;
  return outcome(cuda::backward_tensor_core(shape_of(c), q, k, v, o, lse, dout, dq, dk, dv, nullptr));
}

std::string backward_tensor_core_one_pass(const AttnCase& c, const float* q, const float* k, const float* v,
                                          const float* o, const float* lse, const float* dout, float* dq, float* dk,
                                          float* dv) {
  const char* why = "";
  if (!cuda::tensor_core_supported(shape_of(c), limits(), 9, &why)) return std::string("unsupported: ") + why;
  return outcome(cuda::backward_tensor_core_one_pass(shape_of(c), q, k, v, o, lse, dout, dq, dk, dv, nullptr));
}

}  // namespace attention::emulated
