// Which CUDA errors leave the context usable: those of a bad request (an
// argument, a launch configuration, a missing kernel image) that the runtime
// rejects before anything runs. After any other error, unknown ones included,
// the worker reports a sticky fault and exits, so a corrupted context never
// serves the next case: an allow-list, since a wrong "sticky" costs a worker
// restart and a wrong "recoverable" the verdicts of every later case.
#pragma once

#include <driver_types.h>

namespace harness {

inline bool cuda_error_leaves_context_usable(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
    case cudaErrorInvalidValue:
    case cudaErrorMemoryAllocation:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidSymbol:
    case cudaErrorInvalidHostPointer:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidTexture:
    case cudaErrorInvalidTextureBinding:
    case cudaErrorInvalidChannelDescriptor:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidFilterSetting:
    case cudaErrorInvalidNormSetting:
    case cudaErrorInvalidSurface:
    case cudaErrorMissingConfiguration:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorInvalidKernelImage:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedLimit:
    case cudaErrorInvalidPtx:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorSymbolNotFound:
    case cudaErrorNotReady:
    case cudaErrorLaunchOutOfResources:
    case cudaErrorNotSupported:
    case cudaErrorCooperativeLaunchTooLarge:
    case cudaErrorInvalidClusterSize: return true;
    default: return false;
  }
}

}  // namespace harness
