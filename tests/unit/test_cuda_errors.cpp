// Which CUDA errors the worker survives: a context that may be dead must
// never serve the next case. Needs the CUDA headers of the build, not a GPU.
#include <gtest/gtest.h>

#if HARNESS_TESTS_HAVE_CUDA
#include "harness/worker/cuda_errors.h"
#endif

namespace harness {
namespace {

TEST(CudaErrors, OnlyRejectedRequestsLeaveTheContextUsable) {
#if HARNESS_TESTS_HAVE_CUDA
  // Faults of a kernel that ran, a lost or destroyed context, and anything
  // the runtime cannot name: the worker must restart.
  for (cudaError_t sticky : {cudaErrorIllegalAddress,
                             cudaErrorLaunchFailure,
                             cudaErrorAssert,
                             cudaErrorIllegalInstruction,
                             cudaErrorMisalignedAddress,
                             cudaErrorHardwareStackError,
                             cudaErrorInvalidPc,
                             cudaErrorLaunchTimeout,
                             cudaErrorECCUncorrectable,
                             cudaErrorUnknown,
                             cudaErrorContextIsDestroyed,
                             cudaErrorDevicesUnavailable,
                             cudaErrorInitializationError,
                             cudaErrorCudartUnloading,
                             cudaErrorSystemNotReady,
                             cudaErrorNvlinkUncorrectable,
                             cudaErrorPriorLaunchFailure,
                             cudaErrorContained,
                             cudaErrorTensorMemoryLeak,
                             static_cast<cudaError_t>(12345)}) {
    EXPECT_FALSE(cuda_error_leaves_context_usable(sticky)) << static_cast<int>(sticky);
  }
  // Requests refused before anything ran: the next case may go on.
  for (cudaError_t refused :
       {cudaErrorInvalidValue, cudaErrorMemoryAllocation, cudaErrorInvalidConfiguration, cudaErrorLaunchOutOfResources,
        cudaErrorInvalidDeviceFunction, cudaErrorNoKernelImageForDevice, cudaErrorNotSupported}) {
    EXPECT_TRUE(cuda_error_leaves_context_usable(refused)) << static_cast<int>(refused);
  }
#else
  GTEST_SKIP() << "built without CUDA: the classification is compiled into CUDA workers only";
#endif
}

}  // namespace
}  // namespace harness
