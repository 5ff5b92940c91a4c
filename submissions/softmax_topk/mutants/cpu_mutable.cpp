// A plausible mid-level CPU softmax + top-k, the common source of the CPU
// mutants. Each mutant's submission.json defines one MUTANT_* macro that
// switches on one realistic bug; with none defined the implementation is
// correct (it is never shipped that way: the fast and naive submissions are
// the correct ones). CONTROL_FLOAT32_FOUR_LANES makes it the float32
// control `float32-four-lanes`: sound, with the row sum in four float lanes.
//
// Design: rows are handled in tiles of kTileRows; each row gets a max pass and
// an exp-sum pass (4-wide unrolled, scalar tail) that keeps the exponentials
// in a scratch row; its columns are split into chunks, each keeping its own
// top-k list (a bounded heap); the lists are merged, and each winner's
// probability is its stored exponential over the row's sum.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "abi_support.h"
#include "softmax_topk.h"

namespace {

constexpr int64_t kTileRows = 4;
constexpr int64_t kMaxChunk = 4096;

struct Cand {
  float value;
  int32_t index;
};

bool better(const Cand& a, const Cand& b) { return a.value > b.value || (a.value == b.value && a.index < b.index); }

float row_max(const float* x, int64_t vocab) {
#ifdef MUTANT_MAX_FROM_FIRST_TILE
  // Bug: the stabilising max is taken over the first chunk only (the one a
  // streaming kernel holds when it starts summing); a logit more than ~88
  // above it further on overflows exp to inf, and inf / inf is NaN.
  vocab = std::min(vocab, kMaxChunk);
#endif
  float m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
  int64_t i = 0;
  for (; i + 4 <= vocab; i += 4) {
    m0 = std::max(m0, x[i]);
    m1 = std::max(m1, x[i + 1]);
    m2 = std::max(m2, x[i + 2]);
    m3 = std::max(m3, x[i + 3]);
  }
#ifndef MUTANT_VECTOR_TAIL_SKIPPED
  for (; i < vocab; ++i) m0 = std::max(m0, x[i]);
#endif  // bug: the unrolled loop's tail (vocab % 4 columns) is never visited
  return std::max(std::max(m0, m1), std::max(m2, m3));
}

float exp_term(float x, float m) {
#ifdef MUTANT_NO_MAX_SUBTRACTION
  // Bug: exp(x) without the max shift; fine for logits of a few units, inf
  // (and then NaN probabilities) once logits exceed ~88.
  (void)m;
  const float e = std::exp(x);
#else
  const float e = std::exp(x - m);
#endif
#ifdef MUTANT_BF16_EXP
  // Bug: a "fast path" that keeps exponentials in bf16 (8 significant bits):
  // round to nearest even on the upper 16 bits, a relative error up to 2^-9.
  uint32_t bits;
  std::memcpy(&bits, &e, sizeof(bits));
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  float rounded;
  std::memcpy(&rounded, &bits, sizeof(rounded));
  return rounded;
#else
  return e;
#endif
}

// What a term adds to the row's sum.
float summand(float e) {
#ifdef MUTANT_SKIPS_TINY_TERMS
  // Bug: terms below float's epsilon relative to the max term (exactly 1)
  // are skipped as "unable to change a float sum"; one by one they cannot,
  // but 262143 terms of exp(-17) add 1.1% to the denominator.
  return e < 1.1920929e-7f ? 0.0f : e;
#else
  return e;
#endif
}

// exps[i] = exp(x[i] - m); returns their sum (double accumulators: a float
// sum over 2^18 terms drifts by ~1e-4 relative).
#ifdef CONTROL_FLOAT32_FOUR_LANES
// Sound float32 as a 128-bit vector sums (SSE, NEON; PyTorch's CPU softmax
// holds 8 or 16 lanes): the lane that holds the row's largest term loses the
// terms below half its ulp, a quarter of them here.
using Accumulator = float;
#else
using Accumulator = double;
#endif
double row_exp_sum(const float* x, int64_t vocab, float m, float* exps) {
#ifdef MUTANT_FLOAT32_SEQUENTIAL_SUM
  // Bug: one float accumulator, left to right. Once it holds the max term
  // (1), every term below half its ulp (6e-8) rounds away.
  float total = 0.0f;
  for (int64_t i = 0; i < vocab; ++i) {
    exps[i] = exp_term(x[i], m);
    total += exps[i];
  }
  return total;
#endif
  Accumulator s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= vocab; i += 4) {
    exps[i] = exp_term(x[i], m);
    exps[i + 1] = exp_term(x[i + 1], m);
    exps[i + 2] = exp_term(x[i + 2], m);
    exps[i + 3] = exp_term(x[i + 3], m);
    s0 += summand(exps[i]);
    s1 += summand(exps[i + 1]);
    s2 += summand(exps[i + 2]);
    s3 += summand(exps[i + 3]);
  }
#ifndef MUTANT_VECTOR_TAIL_SKIPPED
  for (; i < vocab; ++i) {
    exps[i] = exp_term(x[i], m);
    s0 += summand(exps[i]);
  }
#endif
  return (s0 + s1) + (s2 + s3);
}

// The top min(k, end - begin) candidates of columns [begin, end), best first.
std::vector<Cand> chunk_topk(const float* x, int64_t begin, int64_t end, int64_t k) {
  std::vector<Cand> heap;  // heap order: the worst kept candidate on top
  heap.reserve(static_cast<size_t>(std::min(k, end - begin)));
  const auto offer = [&](int64_t i) {
    const Cand c{x[i], static_cast<int32_t>(i)};
    if (static_cast<int64_t>(heap.size()) < k) {
      heap.push_back(c);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(c, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = c;
      std::push_heap(heap.begin(), heap.end(), better);
    }
  };
  int64_t i = begin;
  for (; i + 4 <= end; i += 4) {
    offer(i);
    offer(i + 1);
    offer(i + 2);
    offer(i + 3);
  }
#ifndef MUTANT_VECTOR_TAIL_SKIPPED
  for (; i < end; ++i) offer(i);
#endif
  std::sort(heap.begin(), heap.end(), better);
  return heap;
}

// The k best of the chunks' lists, best first. The lists hold at least k
// candidates in all (vocab >= k); should they not, the answer is padded with
// column 0 rather than read past the end.
std::vector<Cand> merge_lists(const std::vector<std::vector<Cand>>& lists, int64_t k) {
  std::vector<Cand> merged;
#ifdef MUTANT_INCOMPLETE_MERGE
  // Bug: the lists are merged round-robin (the best of every chunk, then the
  // second of every chunk, ...) as if ranks were comparable across chunks;
  // right only when the top k happen to be spread one per chunk.
  size_t longest = 0;
  for (const auto& list : lists) longest = std::max(longest, list.size());
  for (size_t rank = 0; rank < longest; ++rank)
    for (const auto& list : lists)
      if (rank < list.size() && static_cast<int64_t>(merged.size()) < k) merged.push_back(list[rank]);
  std::sort(merged.begin(), merged.end(), better);
#else
  for (const auto& list : lists) merged.insert(merged.end(), list.begin(), list.end());
  const size_t take = std::min(static_cast<size_t>(k), merged.size());
  std::partial_sort(merged.begin(), merged.begin() + static_cast<ptrdiff_t>(take), merged.end(), better);
#endif
  merged.resize(static_cast<size_t>(k), Cand{-INFINITY, 0});
  return merged;
}

void row_softmax_topk(const float* x, int64_t vocab, int64_t k, float m, float* exps, float* dst_p, int32_t* dst_i) {
#ifdef MUTANT_LOGITS_IN_PLACE
  // Bug: the row is shifted by its max in the caller's buffer (const cast
  // away) to save a temporary; the answer is right, the input is destroyed.
  float* shifted = const_cast<float*>(x);
  for (int64_t i = 0; i < vocab; ++i) shifted[i] -= m;
  m = 0.0f;
#endif
#ifdef MUTANT_DOES_NOT_COMPILE
  // Bug: a refactoring added the scratch argument and missed this call.
  const double sum = row_exp_sum(x, vocab, m);
#else
  const double sum = row_exp_sum(x, vocab, m, exps);
#endif

  // Short rows are split in two too, so every row goes through the merge.
#ifdef MUTANT_HANG_VOCAB_ONE
  // Bug: vocab / 2 rounds a one-column row down to an empty chunk, and the
  // loop below never advances.
  const int64_t chunk = std::min(kMaxChunk, vocab / 2);
#else
  const int64_t chunk = std::min(kMaxChunk, (vocab + 1) / 2);
#endif
  std::vector<std::vector<Cand>> lists;
  for (int64_t begin = 0; begin < vocab; begin += chunk) {
    const int64_t end = std::min(vocab, begin + chunk);
#ifdef MUTANT_CHUNK_LISTS_SIZED_FOR_SPREAD
    // Bug: each chunk's list is sized for its share of the winners, four
    // times over plus 8 "for safety", as if the top k were spread over the
    // row: right for every random row (a chunk holding more than that is a
    // one-in-10^10 event), wrong when the winners crowd one chunk.
    const int64_t kept = std::min(k, (4 * k * (end - begin) + vocab - 1) / vocab + 8);
#else
    const int64_t kept = k;
#endif
    std::vector<Cand> list = chunk_topk(x, begin, end, kept);
    if (!list.empty()) lists.push_back(std::move(list));
  }
  const std::vector<Cand> winners = merge_lists(lists, k);

  double denominator = sum;
#ifdef MUTANT_RENORMALISED_OVER_K
  // Bug: the probabilities are renormalised over the k winners, as if the
  // distribution had been truncated to them.
  denominator = 0.0;
  for (const Cand& c : winners) denominator += exps[c.index];
#endif

#ifdef MUTANT_UNWRITTEN_ABOVE_LIMIT
  // Bug: results are staged in fixed buffers sized for "k <= 128", and only
  // that many columns are copied out.
  float out_p[128];
  int32_t out_i[128];
  const int64_t n_out = std::min<int64_t>(k, 128);
#else
  std::vector<float> out_p(static_cast<size_t>(k));
  std::vector<int32_t> out_i(static_cast<size_t>(k));
  const int64_t n_out = k;
#endif
  for (int64_t j = 0; j < n_out; ++j) {
    out_p[j] = static_cast<float>(exps[winners[j].index] / denominator);
    out_i[j] = winners[j].index;
  }
#ifdef MUTANT_WRITE_PAST_END
  // Bug: an off-by-one in the clearing of the output row; harmless for every
  // row but the last (the next row overwrites it), one float past the end of
  // probs for the last.
  std::memset(dst_p, 0, static_cast<size_t>(k + 1) * sizeof(float));
#endif
  std::copy(&out_p[0], &out_p[0] + n_out, dst_p);
  std::copy(&out_i[0], &out_i[0] + n_out, dst_i);
}

constexpr int64_t kStackVocab = 131072;

}  // namespace

#ifdef MUTANT_CRASH_LARGE_VOCAB
namespace softmax_topk_mutable {
// Meant to be allocated for rows longer than kStackVocab; never was.
float* large_row_scratch = nullptr;
}  // namespace softmax_topk_mutable
#endif

namespace {

void softmax_topk_tiles(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices) {
#ifdef MUTANT_ROWS_CAPPED_65536
  // Bug: rows are dealt out as a CUDA grid's y dimension would be, which the
  // author capped at 65536 "because no batch is larger": rows past it are
  // never written.
  rows = std::min<int64_t>(rows, 65536);
#endif
#ifdef MUTANT_CRASH_LARGE_VOCAB
  // Bug: the scratch row lives on the stack, sized for the largest vocabulary
  // the author tried; a longer row gets the never-allocated fallback, and the
  // first exponential written to it faults.
  float stack_scratch[kStackVocab];
  float* exps = vocab <= kStackVocab ? stack_scratch : softmax_topk_mutable::large_row_scratch;
#else
  std::vector<float> scratch(static_cast<size_t>(vocab));
  float* exps = scratch.data();
#endif
  for (int64_t r0 = 0; r0 < rows; r0 += kTileRows) {
    const int64_t n = std::min(kTileRows, rows - r0);
    const float* src[kTileRows];
    for (int64_t t = 0; t < n; ++t) {
#ifdef MUTANT_ROWS_MIXED
      // Bug: the tile's rows are stepped by the output's leading dimension
      // (k) instead of the input's (vocab): every row but the tile's first
      // reads a window straddling the tile's first two rows.
      src[t] = logits + r0 * vocab + t * k;
#else
      src[t] = logits + (r0 + t) * vocab;
#endif
    }
    float maxima[kTileRows];
    for (int64_t t = 0; t < n; ++t) maxima[t] = row_max(src[t], vocab);
    for (int64_t t = 0; t < n; ++t)
      row_softmax_topk(src[t], vocab, k, maxima[t], exps, probs + (r0 + t) * k, indices + (r0 + t) * k);
  }
}

harness_status run(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices,
                   void* /*stream*/) {
#ifdef MUTANT_STALE_ANSWER
  // Bug: results are memoised on the shape, as if the same logits came back
  // (the author meant to cache a plan, and cached the answer).
  static int64_t last_rows = -1, last_vocab = -1, last_k = -1;
  static std::vector<float> last_probs;
  static std::vector<int32_t> last_indices;
  if (rows == last_rows && vocab == last_vocab && k == last_k) {
    std::copy(last_probs.begin(), last_probs.end(), probs);
    std::copy(last_indices.begin(), last_indices.end(), indices);
    return HARNESS_STATUS_OK;
  }
#endif
  softmax_topk_tiles(logits, rows, vocab, k, probs, indices);
#ifdef MUTANT_STALE_ANSWER
  last_rows = rows;
  last_vocab = vocab;
  last_k = k;
  last_probs.assign(probs, probs + rows * k);
  last_indices.assign(indices, indices + rows * k);
#endif
  return HARNESS_STATUS_OK;
}

}  // namespace

SOFTMAX_TOPK_EXPORT_ABI(run)
