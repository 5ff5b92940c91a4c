#include "attention_cpu.h"

#include <algorithm>
#include <cmath>

#include "common/thread_pool.h"
#include "row_softmax.h"

namespace kvcache::cpu {

namespace {

using kernels::common::ThreadPool;

// A task's rows (queries x the group's heads) stay within 32: their states
// (32 x 132 floats at d = 128, 16.5 KiB) sit in L1 next to the K/V tiles.
constexpr int64_t kMaxRows = 32;
// A split covers at least this many keys, so that merging stays negligible.
constexpr int64_t kMinSplitKeys = 512;
// Below this many multiply-adds the call stays on the calling thread: waking
// the pool costs more than the work.
constexpr int64_t kInlineWork = int64_t{1} << 18;
// How many blocks ahead the K/V tiles are prefetched.
constexpr int64_t kPrefetchBlocks = 1;

struct Context {
  const AttendShape* shape;
  const float* const* block_addr;
  const BatchEntry* batch;
  const float* q;
  float* out;
  Workspace* workspace;
  int64_t group;     // query heads per kv head
  int64_t max_rows;  // rows of the largest task
  double scale;
};

int64_t state_stride(const Context& c) { return state_floats(c.shape->layout.head_dim); }

// Folds one tile (keys [start, start + count)) into the group's rows of query i.
void accumulate_group(const Context& c, const float* q_query, float* states_query, int64_t g, const float* kt,
                      const float* v, int64_t count) {
  const int64_t d = c.shape->layout.head_dim, stride = state_stride(c);
  const float* q[4];
  float* st[4];
  for (int64_t j = 0; j < c.group;) {
    const int64_t r = c.group - j >= 4 ? 4 : c.group - j >= 2 ? 2 : 1;
    for (int64_t x = 0; x < r; ++x) {
      q[x] = q_query + (g * c.group + j + x) * d;
      st[x] = states_query + (j + x) * stride;
    }
    if (r == 4)
      accumulate_rows<4>(q, st, kt, v, count, d, c.scale);
    else if (r == 2)
      accumulate_rows<2>(q, st, kt, v, count, d, c.scale);
    else
      accumulate_rows<1>(q, st, kt, v, count, d, c.scale);
    j += r;
  }
}

void run_task(const Context& c, const Task& task, int participant) {
  const BlockLayout& layout = c.shape->layout;
  const BatchEntry& e = c.batch[task.entry];
  const int64_t d = layout.head_dim, hq = c.shape->query_heads, g = task.kv_head;
  const int64_t stride = state_stride(c);
  float* states = task.partial < 0 ? c.workspace->scratch.data() + participant * c.max_rows * stride
                                   : c.workspace->partials.data() + task.partial * c.max_rows * stride;
  const int64_t rows = task.query_count * c.group;
  for (int64_t r = 0; r < rows; ++r) reset_row(states + r * stride, d);

  // The tile's queries sit at positions first_pos .. first_pos + query_count - 1.
  // key_begin is a multiple of kBlockTokens (plan() cuts splits on blocks).
  const int64_t first_pos = e.tokens - e.queries + task.query_begin;
  const int64_t key_end = std::min(task.key_end, first_pos + task.query_count);
  const float* q_tile = c.q + (e.first_row + task.query_begin) * hq * d;
  const int64_t tile_bytes = layout.tile_elems() * static_cast<int64_t>(sizeof(float));
  for (int64_t blk = task.key_begin / kBlockTokens; blk * kBlockTokens < key_end; ++blk) {
    // Tiles are 4 KiB apart from their neighbours in the sequence (other
    // heads, layers and sequences in between), which the hardware prefetcher
    // does not follow: fetch the next block's tiles while this one computes.
    if ((blk + kPrefetchBlocks) * kBlockTokens < key_end) {
      const char* next = reinterpret_cast<const char*>(c.block_addr[e.blocks[blk + kPrefetchBlocks]]);
      const char* next_k = next + layout.k_tile(c.shape->layer, g) * static_cast<int64_t>(sizeof(float));
      const char* next_v = next + layout.v_tile(c.shape->layer, g) * static_cast<int64_t>(sizeof(float));
      for (int64_t line = 0; line < tile_bytes; line += 64) {
        __builtin_prefetch(next_k + line);
        __builtin_prefetch(next_v + line);
      }
    }
    const float* base = c.block_addr[e.blocks[blk]];
    const float* kt = base + layout.k_tile(c.shape->layer, g);
    const float* v = base + layout.v_tile(c.shape->layer, g);
    const int64_t start = blk * kBlockTokens;
    for (int64_t i = 0; i < task.query_count; ++i) {
      // Causal: query i sees keys up to its own position.
      const int64_t hi = std::min({start + kBlockTokens, first_pos + i + 1, task.key_end});
      if (hi <= start) continue;
      accumulate_group(c, q_tile + i * hq * d, states + i * c.group * stride, g, kt, v, hi - start);
    }
  }

  if (task.partial >= 0) return;
  for (int64_t i = 0; i < task.query_count; ++i)
    for (int64_t j = 0; j < c.group; ++j) {
      const float* state = states + (i * c.group + j) * stride;
      float* o = c.out + ((e.first_row + task.query_begin + i) * hq + g * c.group + j) * d;
      const float inv = static_cast<float>(1.0 / state_l(state, d));
      for (int64_t x = 0; x < d; ++x) o[x] = state[x] * inv;
    }
}

void run_merge(const Context& c, const Merge& merge) {
  const Task& first = c.workspace->tasks[static_cast<size_t>(merge.first_task)];
  const BatchEntry& e = c.batch[first.entry];
  const int64_t d = c.shape->layout.head_dim, hq = c.shape->query_heads;
  const int64_t stride = state_stride(c);
  const float* parts = c.workspace->partials.data() + first.partial * c.max_rows * stride;
  for (int64_t i = 0; i < first.query_count; ++i)
    for (int64_t j = 0; j < c.group; ++j) {
      const int64_t row = i * c.group + j;
      float* o = c.out + ((e.first_row + first.query_begin + i) * hq + first.kv_head * c.group + j) * d;
      merge_rows(parts + row * stride, merge.splits, c.max_rows * stride, d, o);
    }
}

void task_entry(void* context, int64_t index, int participant) {
  const Context& c = *static_cast<const Context*>(context);
  run_task(c, c.workspace->tasks[static_cast<size_t>(index)], participant);
}

void merge_entry(void* context, int64_t index, int /*participant*/) {
  const Context& c = *static_cast<const Context*>(context);
  run_merge(c, c.workspace->merges[static_cast<size_t>(index)]);
}

// Fills workspace.tasks and .merges; returns the number of partial states.
int64_t plan(const Context& c, int32_t batch_size, int participants, int64_t* work) {
  Workspace& w = *c.workspace;
  w.tasks.clear();
  w.merges.clear();
  const int64_t query_tile = c.max_rows / c.group;
  const int64_t kv_heads = c.shape->layout.kv_heads;
  int64_t base_tasks = 0, keys = 0;
  for (int32_t b = 0; b < batch_size; ++b) {
    const BatchEntry& e = c.batch[b];
    for (int64_t q0 = 0; q0 < e.queries; q0 += query_tile) {
      ++base_tasks;
      keys += e.tokens - e.queries + std::min(e.queries, q0 + query_tile);
    }
  }
  base_tasks *= kv_heads;
  keys *= kv_heads;
  *work = keys * c.max_rows * c.shape->layout.head_dim;
  // Split key ranges only when whole tasks cannot keep every thread busy.
  int64_t chunk = INT64_MAX;
  if (participants > 1 && base_tasks < 4 * participants) {
    chunk = std::max(kMinSplitKeys, keys / (4 * participants));
    chunk = (chunk + kBlockTokens - 1) / kBlockTokens * kBlockTokens;
  }
  int64_t partials = 0;
  for (int32_t b = 0; b < batch_size; ++b) {
    const BatchEntry& e = c.batch[b];
    for (int64_t q0 = 0; q0 < e.queries; q0 += query_tile) {
      const int64_t count = std::min(query_tile, e.queries - q0);
      const int64_t key_end = e.tokens - e.queries + q0 + count;
      // Rounded up without key_end + chunk, which overflows when chunk is
      // INT64_MAX (no split); key_end >= 1.
      const int64_t splits = (key_end - 1) / chunk + 1;
      for (int64_t g = 0; g < kv_heads; ++g) {
        Task t{b, static_cast<int32_t>(g), static_cast<int32_t>(q0), static_cast<int32_t>(count), 0, key_end, -1};
        if (splits <= 1) {
          w.tasks.push_back(t);
          continue;
        }
        w.merges.push_back(Merge{static_cast<int64_t>(w.tasks.size()), splits});
        for (int64_t s = 0; s < splits; ++s) {
          t.key_begin = s * chunk;
          t.key_end = std::min(key_end, (s + 1) * chunk);
          t.partial = partials++;
          w.tasks.push_back(t);
        }
      }
    }
  }
  return partials;
}

}  // namespace

void attend(const AttendShape& shape, const float* const* block_addr, const BatchEntry* batch, int32_t batch_size,
            const float* q, float* out, Workspace& workspace) {
  ThreadPool& pool = ThreadPool::instance();
  Context c{};
  c.shape = &shape;
  c.block_addr = block_addr;
  c.batch = batch;
  c.q = q;
  c.out = out;
  c.workspace = &workspace;
  c.group = shape.query_heads / shape.layout.kv_heads;
  c.max_rows = std::max<int64_t>(1, kMaxRows / c.group) * c.group;
  c.scale = 1.0 / std::sqrt(static_cast<double>(shape.layout.head_dim));

  int64_t work = 0;
  const int64_t partials = plan(c, batch_size, pool.size(), &work);
  const size_t per_state = static_cast<size_t>(c.max_rows * state_stride(c));
  workspace.partials.resize(static_cast<size_t>(partials) * per_state);
  workspace.scratch.resize(static_cast<size_t>(pool.size()) * per_state);

  const int64_t n_tasks = static_cast<int64_t>(workspace.tasks.size());
  const int64_t n_merges = static_cast<int64_t>(workspace.merges.size());
  if (work < kInlineWork) {
    for (int64_t t = 0; t < n_tasks; ++t) task_entry(&c, t, 0);
    for (int64_t m = 0; m < n_merges; ++m) merge_entry(&c, m, 0);
    return;
  }
  pool.run(n_tasks, task_entry, &c);
  if (n_merges > 0) pool.run(n_merges, merge_entry, &c);
}

}  // namespace kvcache::cpu
