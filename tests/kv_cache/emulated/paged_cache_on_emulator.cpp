// cuda-fast's paged cache, its host half (allocation, block table
// uploads, work plans), compiled for the warp emulator.
#include "kv_cache/cuda/paged_cache_cuda.cu"
