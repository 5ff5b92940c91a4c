"""kv_cache in NumPy, the way a careful student would write it: a dict of
per-layer arrays per sequence, exact accounting.

Shared by submissions that differ in the arithmetic of attention and in the
format K and V are stored in: `numpy` (fp32 storage, float64 attention),
`float32-numpy` (fp32, float32 throughout: the sound float32 control),
`float16-numpy` and `int8-numpy` (the sound code of the reduced formats,
attention in float32). `handlers(dtype, storage)` gives the operations for
one of them.
"""

import numpy as np

import harness_client

cache = {}  # "config", "sequences": {id: {"k": [stored parts per layer], "v": [...]}}
chosen = {}  # "storage": one of STORAGES, set by handlers()


def quantize_int8(x, rounding=np.rint):
    """Symmetric int8 with one float32 scale per token and kv head:
    code = round(x / scale), scale = max|x| / 127 over the head's d values."""
    scale = np.abs(x).max(axis=-1, keepdims=True) / np.float32(127)
    scale = np.where(scale > 0, scale, np.float32(1)).astype(np.float32)
    return (rounding(x / scale).astype(np.int8), scale)


# Each storage: KV_CACHE_FORMAT_*, bytes of one token's K (or V) of one kv
# head of head_dim values, how a chunk [n, Hkv, d] is stored (a tuple of
# arrays concatenated along tokens) and how it is read back as float32.
STORAGES = {
    "fp32": (0, lambda d: 4 * d, lambda x: (x.copy(),), lambda parts: parts[0]),
    "fp16": (1, lambda d: 2 * d, lambda x: (x.astype(np.float16),), lambda parts: parts[0].astype(np.float32)),
    "int8": (2, lambda d: d + 4, quantize_int8, lambda parts: parts[0].astype(np.float32) * parts[1]),
}


def format(scalars):
    return {"format": chosen["storage"][0]}


def create(scalars):
    cache.clear()
    cache["config"] = dict(scalars)
    cache["sequences"] = {}
    return {}


def destroy(scalars):
    cache.clear()
    return {}


def token_bytes():
    c = cache["config"]
    return 2 * c["kv_heads"] * chosen["storage"][1](c["head_dim"])  # K and V of one token, one layer


def bytes_in_use(scalars):
    held = sum(k[0].shape[0] for s in cache["sequences"].values() for k in s["k"] if k is not None)
    return {"bytes": held * token_bytes()}


def append(scalars, k, v):
    c = cache["config"]
    sequences = cache["sequences"]
    sequence, layer = scalars["sequence"], scalars["layer"]
    if sequence not in sequences and len(sequences) >= c["max_sequences"]:
        raise harness_client.OutOfMemory("no room for another sequence")
    # Every layer receives the same tokens, layer 0 first: the chunk is
    # admitted whole at layer 0, for all layers, or refused there.
    if layer == 0 and bytes_in_use({})["bytes"] + k.shape[0] * token_bytes() * c["layers"] > c["memory_budget"]:
        raise harness_client.OutOfMemory("the budget is spent")
    entry = sequences.setdefault(sequence, {"k": [None] * c["layers"], "v": [None] * c["layers"]})
    store = chosen["storage"][2]
    for name, data in (("k", k), ("v", v)):
        held, parts = entry[name][layer], store(data)
        entry[name][layer] = parts if held is None else tuple(np.concatenate([h, p]) for h, p in zip(held, parts))
    return {}


def release(scalars):
    cache["sequences"].pop(scalars["sequence"], None)
    return {}


def attend_in(dtype):
    """Attention computed in `dtype`, the row maximum subtracted first."""

    def attend(scalars, q):
        c = cache["config"]
        layer = scalars["layer"]
        group = c["query_heads"] // c["kv_heads"]
        out = np.empty_like(q)
        row = 0
        for sequence, n in zip(scalars["sequences"], scalars["query_lengths"]):
            load = chosen["storage"][3]
            keys = load(cache["sequences"][sequence]["k"][layer]).astype(dtype)   # [T, Hkv, d]
            values = load(cache["sequences"][sequence]["v"][layer]).astype(dtype)
            total, kv_heads, d = keys.shape
            # Query head h reads kv head h // group: per kv head, its group's
            # queries of every row, [Hkv, n * group, d], one matrix product each.
            queries = q[row:row + n].astype(dtype).reshape(n, kv_heads, group, d)
            queries = queries.transpose(1, 0, 2, 3).reshape(kv_heads, n * group, d)
            # Keys on the left: the library then packs the short queries and
            # not a copy of every key, which OpenBLAS would keep afterwards.
            scores = (keys.transpose(1, 0, 2) @ queries.transpose(0, 2, 1)).transpose(0, 2, 1)  # [Hkv, n * group, T]
            scores /= dtype(np.sqrt(c["head_dim"]))
            positions = total - n + np.arange(n)                                # each query's own position
            future = np.arange(total)[None, :] > positions[:, None]            # [n, T]
            scores = np.where(np.repeat(future, group, axis=0)[None], dtype(-np.inf), scores)
            scores -= scores.max(axis=2, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=2, keepdims=True, dtype=dtype)
            heads = weights @ values.transpose(1, 0, 2)                          # [Hkv, n * group, d]
            out[row:row + n] = heads.reshape(kv_heads, n, group, d).transpose(1, 0, 2, 3).reshape(n, -1, d)
            row += n
        return {"out": out}

    return attend


def handlers(dtype, storage="fp32"):
    chosen["storage"] = STORAGES[storage]
    return {"format": format, "create": create, "destroy": destroy, "append": append,
            "attend": attend_in(dtype), "release": release, "bytes_in_use": bytes_in_use}
