import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "numpy"))

import harness_client  # noqa: E402
from topk_numpy import softmax_topk  # noqa: E402


def noisy_softmax_topk(scalars, logits):
    print("debug: logits", logits.shape)  # the bug: stdout is the protocol
    return softmax_topk(scalars, logits)


harness_client.serve({"softmax_topk": noisy_softmax_topk})
