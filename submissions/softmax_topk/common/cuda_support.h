// CUDA plumbing of the softmax_topk submissions: the shared one
// (submissions/common/cuda_support.h) under this challenge's name.
#ifndef SOFTMAX_TOPK_CUDA_SUPPORT_H
#define SOFTMAX_TOPK_CUDA_SUPPORT_H

#include "../../common/cuda_support.h"
#include "abi_support.h"

namespace softmax_topk_abi {

using submission_abi::cuda_fail;
using submission_abi::device_workspace;
using submission_abi::DeviceWorkspace;

// Multiprocessor count of `device`, cached.
inline cudaError_t multiprocessor_count(int device, int* out) {
  return submission_abi::device_attribute(device, cudaDevAttrMultiProcessorCount, out);
}

}  // namespace softmax_topk_abi

#endif  // SOFTMAX_TOPK_CUDA_SUPPORT_H
