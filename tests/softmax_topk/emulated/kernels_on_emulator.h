// cuda-fast's softmax_topk (kernels/softmax_topk/cuda) run on the host by
// the warp emulator (tests/support/warp_emulation): make_plan for a device
// of `sm_count` multiprocessors, then the launches, on host memory. "" or
// the launch's error and the emulator's account of it; *path names the
// plan taken.
#pragma once

#include <cstdint>
#include <string>

namespace softmax_topk::emulated {

std::string softmax_topk_on_emulator(const float* logits, int64_t rows, int64_t vocab, int64_t k, int sm_count,
                                     float* probs, int32_t* indices, std::string* path);

}  // namespace softmax_topk::emulated
