"""attention in plain float32 NumPy: what sound float32 code computes.

Nothing is widened: the scores, the softmax (row max subtracted before the
exponentials), o, and the backward's dP, D = rowsum(dout * o), dS, dq, dk and
dv are float32 arrays, their products float32 matrix products and their sums
float32 sums. Its errors are those of float32 itself, which is what the
tolerances must allow.
"""

import numpy as np

import harness_client

F32 = np.float32
MINUS_INF = F32(-np.inf)


def per_group(x, scalars):
    # [batch, heads_q, n, dim] -> [batch, heads_kv, group, n, dim]: query head
    # h belongs to kv head h // group.
    b, hq, hkv = scalars["batch"], scalars["heads_q"], scalars["heads_kv"]
    return x.astype(F32, copy=False).reshape(b, hkv, hq // hkv, scalars["n_q"], scalars["dim"])


def per_kv_head(x, scalars):
    # [batch, heads_kv, n_kv, dim] -> [batch, heads_kv, 1, n_kv, dim], broadcast over the group.
    return x.astype(F32, copy=False).reshape(scalars["batch"], scalars["heads_kv"], 1, scalars["n_kv"], scalars["dim"])


def visible(scalars):
    # visible[i, j]: query i sees key j (causal mask aligned at the bottom right).
    n_q, n_kv = scalars["n_q"], scalars["n_kv"]
    if not scalars["causal"]:
        return np.ones((n_q, n_kv), dtype=bool)
    return np.arange(n_kv)[None, :] <= np.arange(n_q)[:, None] + (n_kv - n_q)


def softmax(scalars, q, k):
    """P over the visible keys and each row's log-sum-exp, in float32.

    A row that sees no key gets P = 0 and lse = -inf."""
    s = np.where(visible(scalars), F32(scalars["scale"]) * (q @ k.swapaxes(-1, -2)), MINUS_INF)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, F32(0))  # no -inf - -inf for rows that see nothing
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True, dtype=F32)
    seen = total > 0
    total = np.where(seen, total, F32(1))
    lse = np.where(seen, m + np.log(total), MINUS_INF)
    return p / total, lse[..., 0]


def forward(scalars, q, k, v):
    p, lse = softmax(scalars, per_group(q, scalars), per_kv_head(k, scalars))
    o = p @ per_kv_head(v, scalars)
    b, hq, n_q, dim = scalars["batch"], scalars["heads_q"], scalars["n_q"], scalars["dim"]
    return {"o": o.reshape(b, hq, n_q, dim).astype(F32), "lse": lse.reshape(b, hq, n_q).astype(F32)}


def backward(scalars, q, k, v, o, lse, dout):
    # P again from q and k, as the forward computed it; D from the given o.
    del lse
    q, k, v = per_group(q, scalars), per_kv_head(k, scalars), per_kv_head(v, scalars)
    o, dout = per_group(o, scalars), per_group(dout, scalars)
    scale = F32(scalars["scale"])
    p, _ = softmax(scalars, q, k)
    dp = dout @ v.swapaxes(-1, -2)
    ds = p * (dp - (dout * o).sum(axis=-1, keepdims=True, dtype=F32))
    dq = scale * (ds @ k)
    # dk and dv: summed over the query heads of each kv head (axis 2).
    dk = scale * (ds.swapaxes(-1, -2) @ q).sum(axis=2, dtype=F32)
    dv = (p.swapaxes(-1, -2) @ dout).sum(axis=2, dtype=F32)
    b, hq, hkv, n_q, n_kv, dim = (scalars[name] for name in ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "dim"))
    return {"dq": dq.reshape(b, hq, n_q, dim).astype(F32), "dk": dk.reshape(b, hkv, n_kv, dim).astype(F32),
            "dv": dv.reshape(b, hkv, n_kv, dim).astype(F32)}


harness_client.serve({"forward": forward, "backward": backward})
