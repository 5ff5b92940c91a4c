"""layernorm_backward in plain float32 NumPy: what sound float32 code computes.

Nothing is widened: the statistics, the normalisation and the backward run in
float32 (NumPy sums float32 arrays pairwise, in float32). The variance takes
two passes, never E[x^2] - E[x]^2. Its errors are those of float32 itself,
which is what the tolerances must allow.
"""

import numpy as np

import harness_client


def saved_state_bytes(scalars):
    # mean and rstd per row, in float32.
    return {"bytes": 8 * scalars["rows"]}


def statistics(x, eps):
    mean = x.mean(axis=1, keepdims=True, dtype=np.float32)
    centred = x - mean
    var = (centred * centred).mean(axis=1, keepdims=True, dtype=np.float32)
    return mean, (np.float32(1.0) / np.sqrt(var + np.float32(eps))).astype(np.float32)


def forward(scalars, x, gamma, beta):
    mean, rstd = statistics(x, scalars["eps"])
    y = (x - mean) * rstd * gamma + beta
    saved = np.concatenate([mean[:, 0], rstd[:, 0]]).astype(np.float32)
    return {"y": y.astype(np.float32), "saved": saved.view(np.uint8)}


def backward(scalars, dy, x, gamma, saved):
    rows = scalars["rows"]
    state = saved.view(np.float32)
    mean, rstd = state[:rows, None], state[rows:, None]
    xhat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=1, keepdims=True, dtype=np.float32)
                 - xhat * (g * xhat).mean(axis=1, keepdims=True, dtype=np.float32))
    dgamma = (dy * xhat).sum(axis=0, dtype=np.float32)
    dbeta = dy.sum(axis=0, dtype=np.float32)
    return {"dx": dx.astype(np.float32), "dgamma": dgamma, "dbeta": dbeta}


harness_client.serve({"saved_state_bytes": saved_state_bytes, "forward": forward, "backward": backward})
