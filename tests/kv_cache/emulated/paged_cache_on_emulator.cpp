// cuda-fast's paged cache (its host half, its launchers and kernels),
// compiled for the warp emulator: the three files the submission builds.
#include "kv_cache/cuda/paged_cache_cuda.cu"
