"""softmax_topk in plain float32 NumPy: what sound float32 code computes.

The row maximum is subtracted (no overflow), the exponentials and their sum
stay in float32 (NumPy sums float32 arrays pairwise, in float32). Its errors
are those of float32 itself, which is what the tolerances must allow.
"""

import numpy as np

import harness_client


def softmax_topk(scalars, logits):
    k = scalars["k"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True, dtype=np.float32)
    top = np.argpartition(-logits, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(logits, top, axis=1), axis=1, kind="stable")
    indices = np.take_along_axis(top, order, axis=1)
    return {"probs": np.take_along_axis(p, indices, axis=1).astype(np.float32), "indices": indices.astype(np.int32)}


harness_client.serve({"softmax_topk": softmax_topk})
