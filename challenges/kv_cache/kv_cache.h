/* C ABI of the kv_cache challenge (see README.md beside this file).
 *
 * A KV cache for autoregressive decoding: the submission owns the K and V of
 * every live sequence of every attention layer, within a memory budget, and
 * computes causal attention over them. The harness drives it with scripted
 * workloads (prefill, decode, batches, churn, capacity pressure) and keeps
 * its own float64 copy of everything appended to check every attention.
 */
#ifndef KV_CACHE_H
#define KV_CACHE_H

#include "harness_abi.h"

#define KV_CACHE_ABI_VERSION 1

/* How a cache stores K and V: a reduced format is checked against a wider
 * tolerance (README.md) and holds more tokens in the same budget. */
#define KV_CACHE_FORMAT_FP32 0
#define KV_CACHE_FORMAT_FP16 1
#define KV_CACHE_FORMAT_INT8 2

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kv_cache_config {
  int32_t layers;        /* L >= 1 attention layers */
  int32_t query_heads;   /* Hq */
  int32_t kv_heads;      /* Hkv; Hq % Hkv == 0; query head h reads kv head h / (Hq / Hkv) */
  int32_t head_dim;      /* d: 64 or 128 in the harness's workloads */
  int32_t max_sequences; /* at most this many sequences are live at once */
  int64_t max_tokens;    /* no sequence ever holds more tokens than this */
  int64_t memory_budget; /* bytes the cache may hold for K, V and their per-token metadata */
} kv_cache_config;

/* The submission's cache; the harness only passes the pointer around. */
typedef struct kv_cache kv_cache;

/* Returns KV_CACHE_ABI_VERSION as seen when the submission was compiled. */
HARNESS_EXPORT int32_t kv_cache_abi_version(void);

/* Returns the KV_CACHE_FORMAT_* this submission stores K and V in. */
HARNESS_EXPORT int32_t kv_cache_format(void);

/* A new, empty cache. Allocating memory up front is allowed as long as
 * kv_cache_bytes_in_use reports it. */
HARNESS_EXPORT harness_status kv_cache_create(const kv_cache_config* config, kv_cache** cache);

HARNESS_EXPORT harness_status kv_cache_destroy(kv_cache* cache);

/* Appends n >= 1 tokens to `layer` of `sequence` (a sequence id not live
 * yet starts a new sequence; ids are any int64). n > 1 is a prefill chunk,
 * n == 1 a decode step. Every layer of a sequence receives the same tokens,
 * layer by layer: layer 0 first, then 1, ...
 *   k, v [n, kv_heads, head_dim] float32 (device memory for cuda)
 * When holding them would exceed the memory budget (or max_sequences), it
 * returns HARNESS_STATUS_OUT_OF_MEMORY and changes nothing: every sequence,
 * this one included, keeps exactly what it held. */
HARNESS_EXPORT harness_status kv_cache_append(kv_cache* cache, int32_t layer, int64_t sequence, int64_t n,
                                              const float* k, const float* v, void* stream);

/* Causal attention of `layer` for a batch of live sequences, each with
 * queries for its newest n_b tokens (already appended to this layer):
 *   sequences     [batch] int64, host memory
 *   query_lengths [batch] int32, host memory, n_b >= 1
 *   q   [sum n_b, query_heads, head_dim] float32, batch order (device memory for cuda)
 *   out [sum n_b, query_heads, head_dim] float32, written
 * With T_b tokens in the layer for sequence b, its query i (0-based) is the
 * token at position p = T_b - n_b + i and sees positions 0..p:
 *   out = softmax_{t <= p}(q . K_t / sqrt(head_dim)) . V_t
 * with K and V of kv head h / (query_heads / kv_heads) for query head h. */
HARNESS_EXPORT harness_status kv_cache_attend(kv_cache* cache, int32_t layer, int32_t batch, const int64_t* sequences,
                                              const int32_t* query_lengths, const float* q, float* out, void* stream);

/* Ends a sequence: its memory must become reusable. */
HARNESS_EXPORT harness_status kv_cache_release(kv_cache* cache, int64_t sequence);

/* Bytes of storage assigned to the live sequences now: their K and V (the
 * blocks or slots given to them, used or reserved for them) and per-token
 * metadata, all layers together. A pool allocated up front for sequences
 * that do not exist yet is not counted, but the cache may never hold more
 * than the budget. With no live sequence it is what it was right after
 * kv_cache_create (usually 0): anything more is a leak. */
HARNESS_EXPORT harness_status kv_cache_bytes_in_use(kv_cache* cache, int64_t* bytes);

/* Message for the last status other than OK returned on this thread. */
HARNESS_EXPORT const char* kv_cache_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* KV_CACHE_H */
