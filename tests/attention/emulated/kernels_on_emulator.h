// The attention CUDA launchers (kernels/attention/cuda) run on the host by
// the warp emulator (tests/support/warp_emulation): cuda-fast's SIMT
// kernels and the tensor-core kernels, on host memory. Each returns "" or
// the launch's error and the emulator's account of it.
#pragma once

#include <string>

#include "attention/host/attn_case.h"

namespace attention::emulated {

// The tensors as attention::cuda::forward and backward take them.
using ForwardFn = std::string (*)(const AttnCase& c, const float* q, const float* k, const float* v, float* o,
                                  float* lse);
using BackwardFn = std::string (*)(const AttnCase& c, const float* q, const float* k, const float* v, const float* o,
                                   const float* lse, const float* dout, float* dq, float* dk, float* dv);

std::string forward_simt(const AttnCase& c, const float* q, const float* k, const float* v, float* o, float* lse);
std::string backward_simt(const AttnCase& c, const float* q, const float* k, const float* v, const float* o,
                          const float* lse, const float* dout, float* dq, float* dk, float* dv);
std::string forward_tensor_core(const AttnCase& c, const float* q, const float* k, const float* v, float* o,
                                float* lse);
std::string forward_tensor_core_split_kv(const AttnCase& c, const float* q, const float* k, const float* v, float* o,
                                         float* lse);
std::string backward_tensor_core(const AttnCase& c, const float* q, const float* k, const float* v, const float* o,
                                 const float* lse, const float* dout, float* dq, float* dk, float* dv);
std::string backward_tensor_core_one_pass(const AttnCase& c, const float* q, const float* k, const float* v,
                                          const float* o, const float* lse, const float* dout, float* dq, float* dk,
                                          float* dv);

}  // namespace attention::emulated
