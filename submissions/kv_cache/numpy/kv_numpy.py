"""kv_cache in NumPy, the way a careful student would write it: a dict of
per-layer arrays per sequence, exact fp32 storage, exact accounting.

Shared by two submissions that differ only in the arithmetic of attention:
`numpy` (float64) and `float32-numpy` (float32 throughout, the sound float32
control). `handlers(dtype)` gives the operations for one of them.
"""

import numpy as np

import harness_client

cache = {}  # "config", "sequences": {id: {"k": [array per layer], "v": [...]}}


def format(scalars):
    return {"format": 0}  # KV_CACHE_FORMAT_FP32


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
    return 2 * c["kv_heads"] * c["head_dim"] * 4  # K and V of one token, one layer


def bytes_in_use(scalars):
    held = sum(k.shape[0] for s in cache["sequences"].values() for k in s["k"] if k is not None)
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
    for name, data in (("k", k), ("v", v)):
        held = entry[name][layer]
        entry[name][layer] = data.copy() if held is None else np.concatenate([held, data])
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
            keys = cache["sequences"][sequence]["k"][layer].astype(dtype)       # [T, Hkv, d]
            values = cache["sequences"][sequence]["v"][layer].astype(dtype)
            total = keys.shape[0]
            # Query head h reads kv head h // group.
            keys = np.repeat(keys, group, axis=1)                               # [T, Hq, d]
            values = np.repeat(values, group, axis=1)
            queries = q[row:row + n].astype(dtype)                              # [n, Hq, d]
            scores = np.einsum("nhd,thd->nht", queries, keys) / dtype(np.sqrt(c["head_dim"]))
            positions = total - n + np.arange(n)                                # each query's own position
            future = np.arange(total)[None, :] > positions[:, None]            # [n, T]
            scores = np.where(future[:, None, :], dtype(-np.inf), scores)
            scores -= scores.max(axis=2, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=2, keepdims=True, dtype=dtype)
            out[row:row + n] = np.einsum("nht,thd->nhd", weights, values)
            row += n
        return {"out": out}

    return attend


def handlers(dtype):
    return {"format": format, "create": create, "destroy": destroy, "append": append,
            "attend": attend_in(dtype), "release": release, "bytes_in_use": bytes_in_use}
