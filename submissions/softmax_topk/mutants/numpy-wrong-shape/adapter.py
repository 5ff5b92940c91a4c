import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "numpy"))

import harness_client  # noqa: E402
from topk_numpy import softmax_topk  # noqa: E402


def transposed_softmax_topk(scalars, logits):
    result = softmax_topk(scalars, logits)
    return {name: array.T for name, array in result.items()}  # the bug: [k, rows]


harness_client.serve({"softmax_topk": transposed_softmax_topk})
