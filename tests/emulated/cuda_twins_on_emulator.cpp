// See cuda_twins_on_emulator.h: the file itself, its one external name
// renamed for this build.
#include "cuda_twins_on_emulator.h"

#define make_cuda_device_memory make_cuda_device_memory_on_emulator
#include "harness/device_memory/cuda_device_memory.cu"
#undef make_cuda_device_memory
