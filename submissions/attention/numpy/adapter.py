"""attention in NumPy, the way a careful student would write it.

Each kv head's group of query heads is taken at once (q viewed as [batch,
heads_kv, group, n_q, dim], k and v broadcast over the group), with the whole
score matrix materialised in float64. The backward recomputes P and o from q,
k and v in float64 rather than trusting the float32 o and lse it is given.
"""

import numpy as np

import harness_client


def shapes(scalars):
    b, hq, hkv = scalars["batch"], scalars["heads_q"], scalars["heads_kv"]
    return b, hkv, hq // hkv, scalars["n_q"], scalars["n_kv"], scalars["dim"]


def per_group(x, scalars):
    # [batch, heads_q, n, dim] -> [batch, heads_kv, group, n, dim]: query head
    # h belongs to kv head h // group.
    b, hkv, group, n_q, _, dim = shapes(scalars)
    return x.astype(np.float64).reshape(b, hkv, group, n_q, dim)


def per_kv_head(x, scalars):
    # [batch, heads_kv, n_kv, dim] -> [batch, heads_kv, 1, n_kv, dim], broadcast over the group.
    b, hkv, _, _, n_kv, dim = shapes(scalars)
    return x.astype(np.float64).reshape(b, hkv, 1, n_kv, dim)


def visible(scalars):
    # visible[i, j]: query i sees key j (causal mask aligned at the bottom right).
    n_q, n_kv = scalars["n_q"], scalars["n_kv"]
    if not scalars["causal"]:
        return np.ones((n_q, n_kv), dtype=bool)
    return np.arange(n_kv)[None, :] <= np.arange(n_q)[:, None] + (n_kv - n_q)


def softmax(scalars, q, k):
    """P [.., n_q, n_kv] over the visible keys, and each row's log-sum-exp.

    A row that sees no key gets P = 0 and lse = -inf."""
    mask = visible(scalars)
    s = np.where(mask, scalars["scale"] * (q @ k.swapaxes(-1, -2)), -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # no -inf - -inf for rows that see nothing
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    seen = total > 0
    p /= np.where(seen, total, 1.0)
    lse = np.where(seen, m + np.log(np.where(seen, total, 1.0)), -np.inf)
    return p, lse[..., 0]


def forward(scalars, q, k, v):
    p, lse = softmax(scalars, per_group(q, scalars), per_kv_head(k, scalars))
    o = p @ per_kv_head(v, scalars)
    b, hq, n_q, dim = scalars["batch"], scalars["heads_q"], scalars["n_q"], scalars["dim"]
    return {"o": o.reshape(b, hq, n_q, dim), "lse": lse.reshape(b, hq, n_q)}


def backward(scalars, q, k, v, o, lse, dout):
    # o and lse are the harness's float32 forward: recomputed here in float64 instead.
    del o, lse
    q, k, v, dout = per_group(q, scalars), per_kv_head(k, scalars), per_kv_head(v, scalars), per_group(dout, scalars)
    scale = scalars["scale"]
    p, _ = softmax(scalars, q, k)
    o = p @ v
    dp = dout @ v.swapaxes(-1, -2)
    ds = p * (dp - (dout * o).sum(axis=-1, keepdims=True))
    dq = scale * (ds @ k)
    # dk and dv: summed over the query heads of each kv head (axis 2).
    dk = scale * (ds.swapaxes(-1, -2) @ q).sum(axis=2)
    dv = (p.swapaxes(-1, -2) @ dout).sum(axis=2)
    b, hq, hkv, n_q, n_kv, dim = (scalars[name] for name in ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "dim"))
    return {"dq": dq.reshape(b, hq, n_q, dim), "dk": dk.reshape(b, hkv, n_kv, dim), "dv": dv.reshape(b, hkv, n_kv, dim)}


harness_client.serve({"forward": forward, "backward": backward})
