// CUDA plumbing of the layernorm_backward submissions: the shared one
// (submissions/common/cuda_support.h) under this challenge's name.
#ifndef LAYERNORM_CUDA_SUPPORT_H
#define LAYERNORM_CUDA_SUPPORT_H

#include "../../common/cuda_support.h"
#include "abi_support.h"

namespace layernorm_abi {

using submission_abi::aligned16;
using submission_abi::cuda_fail;
using submission_abi::device_attribute;
using submission_abi::device_workspace;
using submission_abi::DeviceWorkspace;

}  // namespace layernorm_abi

#endif  // LAYERNORM_CUDA_SUPPORT_H
