"""softmax_topk in PyTorch eager, the two calls everyone writes."""

import torch

import harness_client


def softmax_topk(scalars, logits):
    indices = torch.topk(logits, scalars["k"], dim=1).indices
    probs = torch.softmax(logits, dim=1).gather(1, indices)
    return {"probs": probs, "indices": indices.int()}


if __name__ == "__main__":  # run by the harness; imported (scripts/gpu/pytorch_eager.py), the functions alone
    harness_client.serve({"softmax_topk": softmax_topk})
