// cuda-fast's kv_cache launchers and kernels, compiled for the warp emulator.
#include "kv_cache/cuda/launch.cu"
