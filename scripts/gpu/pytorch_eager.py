#!/usr/bin/env python3
"""PyTorch eager on the perf cases of a results file, timed in-process: the
same code as the PyTorch eager peers the harness judges
(submissions/<challenge>/pytorch-eager), for how far a judged row's median
lies from it; or, for kv_cache (whose peer keeps a cache across calls) and
with --code ops, PyTorch's own fused ops, set beside our kernels by
`harness report --peer`.

    python3 scripts/gpu/pytorch_eager.py results.json -o peer.json
    python3 scripts/gpu/pytorch_eager.py results.json -o peer.json --backend numpy --device-kind cpu   # dry run

For every perf case that a `--device-kind` entry of the results ran, the same
shapes go through the peer's functions (softmax_topk, layernorm_backward's
forward and backward, attention's forward and backward), or with --code ops
through the framework's own ops, as a user of it would write them:
  softmax_topk        torch.softmax then torch.topk
  layernorm_backward  F.layer_norm forward, or its backward through autograd
  kv_cache (decode)   F.scaled_dot_product_attention over the dense K/V that
                      the paged cache holds, in fp32 and in fp16
  attention           F.scaled_dot_product_attention in float32 on the
                      memory-efficient backend (query heads grouped natively
                      where that backend takes enable_gqa, else K/V repeated
                      once, outside the timing), forward; or its backward
                      through autograd

Timing: warm-up, then batches of calls queued back to back between two CUDA
events (so host launch latency between batches is not counted, as in the
harness), rotating through input sets that together exceed twice the L2
cache; the median of the per-call times of the batches is reported. The
numpy backend runs the same plan on the CPU with a monotonic clock, to check
the script and the report on a machine without a GPU: its figures mean
nothing about PyTorch.
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import time


def perf_cases(results, device_kind):
    """(challenge, case) for each perf case an entry of that device kind ran, once each."""
    seen = {}
    for entry in results.get("results", []):
        if not entry.get("device", "").startswith(device_kind):
            continue
        for case in entry.get("cases", []):
            if case.get("suite") != "perf":
                continue
            key = (entry["challenge"], case["id"])
            if key not in seen:
                seen[key] = case
    return [(challenge, case) for (challenge, _), case in seen.items()]


class TorchBackend:
    name = "torch"

    def __init__(self):
        import torch
        import torch.nn.functional as F
        if not torch.cuda.is_available():
            raise SystemExit("pytorch_eager: torch sees no CUDA device")
        self.torch, self.F = torch, F
        self.device = torch.device("cuda")
        props = torch.cuda.get_device_properties(0)
        self.cache_bytes = props.L2_cache_size
        self.description = f"{props.name}, torch {torch.__version__}"
        self.generator = torch.Generator(device=self.device).manual_seed(20261123)

    def normal(self, shape, scale=1.0, dtype="float32"):
        t = self.torch.randn(*shape, device=self.device, generator=self.generator) * scale
        return t.to(getattr(self.torch, dtype))

    def softmax_topk(self, logits, k):
        return self.torch.topk(self.torch.softmax(logits, dim=-1), k, dim=-1)

    def layer_norm(self, x, gamma, beta, eps):
        return self.F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)

    def layer_norm_backward_setup(self, x, gamma, beta, eps, dy):
        x, gamma, beta = (t.detach().requires_grad_(True) for t in (x, gamma, beta))
        y = self.F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)
        return lambda: self.torch.autograd.grad(y, (x, gamma, beta), dy, retain_graph=True)

    def attention(self, q, k, v):
        return self.F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    def sdpa_setup(self, q, k, v, scale, causal, dout):
        """A call of the float32 SDPA forward (dout None) or of its backward,
        and how it was run: the memory-efficient backend, GQA native if it
        takes it."""
        from torch.nn.attention import SDPBackend, sdpa_kernel
        torch, F = self.torch, self.F
        group = q.shape[1] // k.shape[1]

        def run(q, k, v, gqa):
            with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, scale=scale, is_causal=causal, enable_gqa=gqa)
        how = "efficient backend"
        try:
            run(q[:, :, :1], k[:, :, :1], v[:, :, :1], group > 1)
        except RuntimeError:
            k, v = (t.repeat_interleave(group, dim=1).contiguous() for t in (k, v))
            how += ", K/V repeated per query head"
        gqa = group > 1 and k.shape[1] != q.shape[1]
        if dout is None:
            return (lambda: run(q, k, v, gqa)), how
        q, k, v = (t.detach().requires_grad_(True) for t in (q, k, v))
        o = run(q, k, v, gqa)
        return (lambda: torch.autograd.grad(o, (q, k, v), dout, retain_graph=True)), how

    def time_batches(self, calls, policy):
        torch = self.torch
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for call in calls:  # warm-up: every set once, then until warmup_s
            call()
        torch.cuda.synchronize()
        t0 = time.monotonic()
        while time.monotonic() - t0 < policy["warmup_s"]:
            for call in calls:
                call()
            torch.cuda.synchronize()
        per_call, spent, i = [], 0.0, 0
        while len(per_call) < policy["batches"] and (spent < policy["max_s"] or len(per_call) < 5):
            n = policy["batch_calls"]
            start.record()
            for _ in range(n):
                calls[i % len(calls)]()
                i += 1
            stop.record()
            stop.synchronize()
            ms = start.elapsed_time(stop)
            spent += ms / 1e3
            per_call.append(ms * 1e6 / n)
        return per_call


class NumpyBackend:
    """The same plan on the CPU, for a dry run of the script and the report."""
    name = "numpy"

    def __init__(self):
        import numpy as np
        self.np = np
        self.cache_bytes = 32 << 20
        self.description = f"CPU, numpy {np.__version__} (dry run: not PyTorch)"
        self.rng = np.random.default_rng(20261123)

    def normal(self, shape, scale=1.0, dtype="float32"):
        return (self.rng.standard_normal(shape) * scale).astype(dtype)

    def softmax_topk(self, logits, k):
        np = self.np
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        idx = np.argpartition(-p, k - 1, axis=-1)[:, :k]
        return np.take_along_axis(p, idx, axis=-1), idx

    def layer_norm(self, x, gamma, beta, eps):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / self.np.sqrt(var + eps) * gamma + beta

    def layer_norm_backward_setup(self, x, gamma, beta, eps, dy):
        np = self.np
        mean = x.mean(axis=-1, keepdims=True)
        rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
        xhat = (x - mean) * rstd

        def backward():
            g = dy * gamma
            dx = rstd * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
            return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)
        return backward

    def attention(self, q, k, v):
        np = self.np
        group = q.shape[1] // k.shape[1]
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        return (p / p.sum(axis=-1, keepdims=True)) @ v

    def sdpa_setup(self, q, k, v, scale, causal, dout):
        np = self.np
        group = q.shape[1] // k.shape[1]
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        n_q, n_kv = q.shape[2], k.shape[2]
        hidden = np.triu(np.ones((n_q, n_kv), dtype=bool), 1 + n_kv - n_q) if causal else None

        def forward():
            s = q @ k.transpose(0, 1, 3, 2) * scale
            if hidden is not None:
                s = np.where(hidden, -np.inf, s)
            p = np.exp(s - s.max(axis=-1, keepdims=True))
            return (p / p.sum(axis=-1, keepdims=True)) @ v
        return forward, "numpy dry run: the forward whichever the op"

    def time_batches(self, calls, policy):
        for call in calls:
            call()
        per_call, spent, i = [], 0.0, 0
        while len(per_call) < policy["batches"] and (spent < policy["max_s"] or len(per_call) < 5):
            t0 = time.perf_counter()
            calls[i % len(calls)]()
            i += 1
            dt = time.perf_counter() - t0
            spent += dt
            per_call.append(dt * 1e9)
        return per_call


def set_count(backend, set_bytes):
    return max(2, min(16, math.ceil(2 * backend.cache_bytes / max(set_bytes, 1))))


def plan_softmax_topk(b, p):
    rows, vocab, k = p["rows"], p["vocab"], p["k"]
    sets = [b.normal((rows, vocab), 2.0) for _ in range(set_count(b, rows * vocab * 4))]
    return [("", "softmax + topk", {}, [lambda x=x: b.softmax_topk(x, k) for x in sets])]


def plan_layernorm(b, p):
    rows, dim, eps, ops = p["rows"], p["dim"], p.get("eps", 1e-5), p.get("ops", "both")
    gamma, beta = b.normal((dim,), 0.1) + 1, b.normal((dim,), 0.1)
    n = set_count(b, rows * dim * 4 * (2 if ops == "forward" else 3))
    xs = [b.normal((rows, dim)) for _ in range(n)]
    if ops == "forward":
        return [("", "layer_norm forward", {}, [lambda x=x: b.layer_norm(x, gamma, beta, eps) for x in xs])]
    calls = [b.layer_norm_backward_setup(x, gamma, beta, eps, b.normal((rows, dim))) for x in xs]
    return [("", "layer_norm backward (autograd)", {}, calls)]


def plan_kv_decode(b, p):
    if p.get("workload") != "decode":
        return []
    batch, tokens, hq, hkv, d = p["batch"], p["tokens"], p["q_heads"], p["kv_heads"], p["head_dim"]
    plans = []
    for variant, dtype, code, size in (("fp32", "float32", 0, 4), ("fp16", "float16", 1, 2)):
        n = set_count(b, 2 * batch * hkv * tokens * d * size)
        calls = []
        for _ in range(n):
            q = b.normal((batch, hq, 1, d), 1.0, dtype)
            k, v = b.normal((batch, hkv, tokens, d), 1.0, dtype), b.normal((batch, hkv, tokens, d), 1.0, dtype)
            calls.append(lambda q=q, k=k, v=v: b.attention(q, k, v))
        plans.append((variant, f"scaled_dot_product_attention, {variant} K/V", {"format": code}, calls))
    return plans


def plan_attention(b, p):
    batch, hq, hkv, n_q, n_kv, d = p["batch"], p["heads_q"], p["heads_kv"], p["n_q"], p["n_kv"], p["dim"]
    causal, scale, backward = bool(p["causal"]), p["scale"], p["op"] == "backward"
    q_bytes, kv_bytes = 4 * batch * hq * n_q * d, 4 * batch * hkv * n_kv * d
    calls, how = [], ""
    for _ in range(set_count(b, (4 if backward else 2) * q_bytes + (4 if backward else 2) * kv_bytes)):
        q, k, v = b.normal((batch, hq, n_q, d)), b.normal((batch, hkv, n_kv, d)), b.normal((batch, hkv, n_kv, d))
        call, how = b.sdpa_setup(q, k, v, scale, causal, b.normal((batch, hq, n_q, d)) if backward else None)
        calls.append(call)
    op = "backward (autograd)" if backward else "forward"
    return [("", f"scaled_dot_product_attention fp32 {op}, {how}", {}, calls)]


PLANNERS = {"softmax_topk": plan_softmax_topk, "layernorm_backward": plan_layernorm, "kv_cache": plan_kv_decode,
            "attention": plan_attention}


def load_peer(challenge):
    """The PyTorch eager peer's module, imported: its functions, not serving."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    client = os.path.join(root, "harness", "clients", "python")
    if client not in sys.path:
        sys.path.insert(0, client)
    spec = importlib.util.spec_from_file_location(
        "peer_" + challenge, os.path.join(root, "submissions", challenge, "pytorch-eager", "eager.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scalars_of(p, names):
    return {name: p[name] for name in names}


def plan_peer_softmax_topk(b, p):
    peer = load_peer("softmax_topk")
    scalars = scalars_of(p, ("rows", "vocab", "k"))
    sets = [b.normal((p["rows"], p["vocab"]), 2.0) for _ in range(set_count(b, p["rows"] * p["vocab"] * 4))]
    return [("", "the peer's softmax_topk", {}, [lambda x=x: peer.softmax_topk(scalars, x) for x in sets])]


def plan_peer_layernorm(b, p):
    peer = load_peer("layernorm_backward")
    rows, dim = p["rows"], p["dim"]
    scalars = {"rows": rows, "dim": dim, "eps": p.get("eps", 1e-5)}
    gamma, beta = b.normal((dim,), 0.1) + 1, b.normal((dim,), 0.1)
    forward = p.get("ops", "both") == "forward"
    xs = [b.normal((rows, dim)) for _ in range(set_count(b, rows * dim * 4 * (2 if forward else 3)))]
    if forward:
        return [("", "the peer's forward", {}, [lambda x=x: peer.forward(scalars, x, gamma, beta) for x in xs])]
    calls = []
    for x in xs:
        saved, dy = peer.forward(scalars, x, gamma, beta)["saved"], b.normal((rows, dim))
        calls.append(lambda x=x, saved=saved, dy=dy: peer.backward(scalars, dy, x, gamma, saved))
    return [("", "the peer's backward", {}, calls)]


def plan_peer_attention(b, p):
    peer = load_peer("attention")
    scalars = scalars_of(p, ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "dim", "scale", "causal"))
    batch, hq, hkv, n_q, n_kv, d = (p[n] for n in ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "dim"))
    backward = p["op"] == "backward"
    q_bytes, kv_bytes = 4 * batch * hq * n_q * d, 4 * batch * hkv * n_kv * d
    calls = []
    for _ in range(set_count(b, (4 if backward else 2) * q_bytes + (4 if backward else 2) * kv_bytes)):
        q, k, v = b.normal((batch, hq, n_q, d)), b.normal((batch, hkv, n_kv, d)), b.normal((batch, hkv, n_kv, d))
        if not backward:
            calls.append(lambda q=q, k=k, v=v: peer.forward(scalars, q, k, v))
            continue
        out = peer.forward(scalars, q, k, v)
        dout = b.normal((batch, hq, n_q, d))
        calls.append(lambda q=q, k=k, v=v, o=out["o"], lse=out["lse"], dout=dout:
                     peer.backward(scalars, q, k, v, o, lse, dout))
    return [("", "the peer's " + p["op"], {}, calls)]


PEER_PLANNERS = {"softmax_topk": plan_peer_softmax_topk, "layernorm_backward": plan_peer_layernorm,
                 "attention": plan_peer_attention}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    parser.add_argument("--device-kind", default="cuda", help="measure the perf cases of entries on this device kind")
    parser.add_argument("--case", action="append", default=[], help="only these case ids (repeatable)")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter batches")
    parser.add_argument("--code", choices=["peers", "ops"], default="peers",
                        help="the peers' own functions where a challenge has one (torch only), or PyTorch's fused ops")
    args = parser.parse_args()

    with open(args.results) as f:
        results = json.load(f)
    backend = TorchBackend() if args.backend == "torch" else NumpyBackend()
    policy = {"warmup_s": 0.05, "batches": 30, "batch_calls": 10, "max_s": 2.0}
    if args.quick or args.backend == "numpy":
        policy = {"warmup_s": 0.0, "batches": 5, "batch_calls": 2, "max_s": 0.5}
    name = "PyTorch eager" + (" (the peers' code)" if args.code == "peers" else "")
    peer = {"schema": "harness.peer/v1", "peer": name if args.backend == "torch" else "numpy (dry run)",
            "device": backend.description, "device_kind": args.device_kind, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "results": args.results, "timing": "median per call over batches of calls queued back to back",
            "cases": []}
    cases = perf_cases(results, args.device_kind)
    if not cases:
        print(f"pytorch_eager: no perf case of a {args.device_kind} entry in {args.results}", file=sys.stderr)
        return 2
    for challenge, case in cases:
        if args.case and case["id"] not in args.case:
            continue
        planner = PLANNERS.get(challenge)
        if args.code == "peers" and args.backend == "torch":
            planner = PEER_PLANNERS.get(challenge, planner)
        if planner is None:
            print(f"pytorch_eager: no PyTorch equivalent known for {challenge}; skipped", file=sys.stderr)
            continue
        for variant, ops, when, calls in planner(backend, case["params"]):
            samples = sorted(backend.time_batches(calls, policy))
            median = samples[len(samples) // 2]
            peer["cases"].append({"challenge": challenge, "id": case["id"], "variant": variant, "ops": ops,
                                  "when": when, "median_ns": median, "min_ns": samples[0], "batches": len(samples),
                                  "bytes_moved": case.get("bytes_moved", 0)})
            print(f"{challenge:20s} {case['id']:45s} {variant:5s} {median / 1e3:12.1f} us  ({ops})", flush=True)
            del calls
    with open(args.output, "w") as f:
        json.dump(peer, f, indent=1)
        f.write("\n")
    print(f"pytorch_eager: wrote {args.output} ({len(peer['cases'])} timings)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
