"""kv_cache in PyTorch eager: K and V of each sequence and layer kept as
float32 tensors grown by torch.cat (as a dynamic cache does), attention by
scaled_dot_product_attention, whose grouped-query path reads kv head
h // group for query head h. Accounting is exact: live tokens times their
bytes."""

import torch
import torch.nn.functional as F

import harness_client

cache = {}  # "config"; "sequences": {id: {"k": [tensor or None per layer], "v": [...]}}


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
    return 2 * c["kv_heads"] * 4 * c["head_dim"]  # K and V of one token, one layer


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
        # A copy: the harness's memory holds the next call's tensors.
        entry[name][layer] = data.clone() if held is None else torch.cat([held, data])
    return {}


def release(scalars):
    cache["sequences"].pop(scalars["sequence"], None)
    return {}


def attend(scalars, q):
    layer = scalars["layer"]
    out = torch.empty_like(q)
    row = 0
    for sequence, n in zip(scalars["sequences"], scalars["query_lengths"]):
        keys = cache["sequences"][sequence]["k"][layer]  # [T, Hkv, d]
        values = cache["sequences"][sequence]["v"][layer]
        total = keys.shape[0]
        # Query i sits at position total - n + i and sees every key up to it.
        positions = total - n + torch.arange(n, device=q.device)
        visible = torch.arange(total, device=q.device)[None, :] <= positions[:, None]
        attended = F.scaled_dot_product_attention(q[row:row + n].transpose(0, 1)[None], keys.transpose(0, 1)[None],
                                                  values.transpose(0, 1)[None], attn_mask=visible, enable_gqa=True)
        out[row:row + n] = attended[0].transpose(0, 1)
        row += n
    return {"out": out}


if __name__ == "__main__":  # run by the harness; imported (scripts/gpu/pytorch_eager.py), the functions alone
    harness_client.serve({"format": format, "create": create, "destroy": destroy, "append": append, "attend": attend,
                          "release": release, "bytes_in_use": bytes_in_use})
