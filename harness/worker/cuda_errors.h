// Which CUDA errors leave the context usable. After any other error the
// worker reports a sticky fault and exits, so that a dead or corrupted
// context can never serve the next case and blame it on another call.
//
// The list is of errors that describe a bad request (an argument, a launch
// configuration, a missing kernel image) and that the runtime rejects before
// anything runs on the device. It is an allow-list on purpose: errors added
// by later CUDA versions, cudaErrorUnknown, a destroyed context, a failed
// launch and every error of a kernel that ran (illegal address, assert,
// trap, ECC) count as sticky. A wrong "sticky" costs a worker restart; a
// wrong "recoverable" would cost the verdicts of every later case.
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
    case cudaErrorInvalidClusterSize:
      return true;
    default:
      return false;
  }
}

}  // namespace harness
