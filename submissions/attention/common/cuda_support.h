// CUDA plumbing of the attention submissions: the shared one
// (submissions/common/cuda_support.h) under this challenge's name.
#ifndef ATTENTION_CUDA_SUPPORT_H
#define ATTENTION_CUDA_SUPPORT_H

#include "../../common/cuda_support.h"
#include "abi_support.h"

namespace attention_abi {

using submission_abi::aligned16;
using submission_abi::cuda_fail;
using submission_abi::device_attribute;
using submission_abi::device_workspace;
using submission_abi::DeviceWorkspace;

}  // namespace attention_abi

#endif  // ATTENTION_CUDA_SUPPORT_H
