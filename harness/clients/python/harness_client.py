"""The client side of the harness's process protocol (docs/PROCESS_PROTOCOL.md).

A submission in Python is one function per operation and a call to serve():

    import numpy as np
    import harness_client

    def softmax_topk(scalars, logits):
        ...
        return {"probs": probs, "indices": indices}

    harness_client.serve({"softmax_topk": softmax_topk})

Each function receives the request's scalars (a dict) and its input tensors
as keyword arguments (NumPy arrays, by the names of the challenge's ABI), and
returns a dict: arrays for the outputs, numbers for scalar results. Outputs
are cast to the dtype the harness asks for when NumPy calls that a same-kind
cast (float64 to float32, int64 to int32); their shape is never changed.
A function that takes a keyword parameter `out` is also given a dict of
its outputs' places, writable arrays of the dtype and shape asked for (in
version 2 the harness's own memory): an output it writes there in place
need not be returned, which saves the copy a returned array costs. Raise
Unsupported for a case the submission does not handle, OutOfMemory for an
operation that would exceed its budget. Functions may keep state
between calls (kv_cache's cache lives from its create to its destroy).

The harness's hello carries the challenge's declared ops; a function whose
signature cannot take its op's declared inputs, or a function for an op the
challenge does not declare, is refused at the hello, naming both.

The client speaks both versions of the protocol, the one the harness's
hello asks for (the manifest's "protocol"): in version 1 the arrays are
loaded from and saved to .npy files; in version 2 the inputs are read-only
views of memory the harness owns and the outputs are copied into it, with
no file in between. On a GPU ("device": "cuda", version 2) the functions
get PyTorch tensors or CuPy arrays (the manifest's "arrays") on the
harness's device memory instead, and may return either; harness_device.py
does that part, and the client synchronises the device before it replies. A function that keeps an input beyond its call (a
cache's state) keeps a copy of it: the harness reuses that memory.

Standard output carries the protocol: print diagnostics to standard error.
Needs only the standard library and NumPy.
"""

import ctypes
import inspect
import json
import mmap
import os
import socket
import sys
import time
import traceback

import numpy as np

PROTOCOLS = (1, 2)


class Unsupported(Exception):
    """Raised by an operation for a case it does not handle."""


class OutOfMemory(Exception):
    """Raised by an operation that would exceed its memory budget, having
    changed nothing (kv_cache's append)."""


def _reply(stream, message):
    stream.write(json.dumps(message) + "\n")
    stream.flush()


def _host_output(value, spec):
    """An output as a NumPy array of the dtype the harness asks for (a
    same-kind cast: float64 to float32, int64 to int32); never reshaped."""
    return np.asarray(value).astype(np.dtype(spec["dtype"]), casting="same_kind", copy=False)


class HostClock:
    """A timed call's claim on the host's monotonic clock, from the
    function's start to its outputs in place (what a CPU call claims; the
    harness witnesses it with its own clock around the request)."""

    def start(self):
        self.begun = time.perf_counter_ns()

    def mark(self):
        pass

    def stop(self):
        ns = time.perf_counter_ns() - self.begun
        return {"elapsed_ns": ns, "host_ns": ns}


class _Files:
    """Protocol 1: tensors in .npy files."""

    @staticmethod
    def load(path):
        return np.load(path)

    @staticmethod
    def place(spec):
        return np.empty(tuple(spec["shape"]), dtype=np.dtype(spec["dtype"]))

    @staticmethod
    def store(spec, value):
        np.save(spec["path"], np.ascontiguousarray(_host_output(value, spec)), allow_pickle=False)

    written = store  # an output written in its place, an array of the client's, goes to its file

    @staticmethod
    def finish():
        pass


class SharedMemory:
    """Protocol 2: tensors in memory the harness owns. Each piece of it
    arrives once on the memory socket (a SOCK_SEQPACKET socket: one JSON
    message and one file descriptor per message), before the first request
    that names it; requests name a tensor by its memory's id, its offset in
    it, its dtype and its shape. Public for programs that speak the protocol
    themselves."""

    def __init__(self, fd, arrays="numpy"):
        self.socket = socket.socket(fileno=fd)
        self.maps = {}
        self.torch = None
        if arrays == "torch":
            import torch  # noqa: PLC0415 (only where the manifest asks for it)

            self.torch = torch

    def mapping(self, memory):
        """The whole piece of memory `memory` (an mmap), received first if it
        has not been yet."""
        while memory not in self.maps:
            data, fds, _, _ = socket.recv_fds(self.socket, 1 << 16, 1)
            if not data or len(fds) != 1:
                raise RuntimeError("the memory socket closed or sent no descriptor: %r" % data)
            message = json.loads(data)
            try:
                self.maps[message["memory"]] = mmap.mmap(fds[0], message["bytes"], mmap.MAP_SHARED,
                                                         mmap.PROT_READ | mmap.PROT_WRITE)
            finally:
                os.close(fds[0])
        return self.maps[memory]

    def view(self, spec):
        """The tensor a request describes, as a NumPy array on that memory."""
        return np.ndarray(tuple(spec["shape"]), dtype=np.dtype(spec["dtype"]), buffer=self.mapping(spec["memory"]),
                          offset=spec["offset"])

    def load(self, spec):
        view = self.view(spec)
        if self.torch is not None:
            return self.torch.from_numpy(view)  # zero copy; torch has no read-only tensors
        view.flags.writeable = False
        return view

    def place(self, spec):
        view = self.view(spec)
        return self.torch.from_numpy(view) if self.torch is not None else view

    def store(self, spec, value):
        view = self.view(spec)
        array = _host_output(value, spec)
        if array.shape != view.shape:
            raise ValueError("output of shape %s where the op's is %s" % (array.shape, view.shape))
        if array.__array_interface__["data"][0] == view.__array_interface__["data"][0] and \
                array.strides == view.strides:
            return  # written in place (the `out` it was given)
        np.copyto(view, array)

    @staticmethod
    def written(spec, place):
        pass  # in the harness's memory already

    @staticmethod
    def finish():
        pass

    @staticmethod
    def clock():
        return HostClock()

    def unmap(self, ids):
        for memory in ids:
            mapped = self.maps.pop(memory, None)
            if mapped is not None:
                try:
                    mapped.close()
                except BufferError:
                    pass  # an array still views it: unmapped when that goes


def _call(ops, request, tensors):
    """Runs one request; returns the reply."""
    reply = {"type": "reply", "id": request["id"], "scalars": {}}
    function = ops.get(request["op"])
    if function is None:
        return dict(reply, status="unsupported", message="no function for op " + request["op"])
    try:
        inputs = {name: tensors.load(spec) for name, spec in request["inputs"].items()}
        places = None
        if _takes_out(function):
            if "out" in inputs:
                raise ValueError("op %s has an input named 'out': its function cannot take `out` too" % request["op"])
            places = {name: tensors.place(spec) for name, spec in request["outputs"].items()}
            inputs["out"] = places
        # A timed call (protocol 2) claims its time, from the function's
        # start to its outputs in place.
        clock = tensors.clock() if request.get("timed") else None
        if clock:
            clock.start()
        results = function(request["scalars"], **inputs) or {}
        for name, spec in request["outputs"].items():
            if name in results:
                tensors.store(spec, results[name])
            elif places is not None:
                tensors.written(spec, places[name])
            else:
                raise ValueError("the function returned no output named %r" % name)
        if clock:
            clock.mark()
        tensors.finish()  # on a GPU: every output written before the reply says so
        if clock:
            reply.update(clock.stop())
        for name, value in results.items():
            if name not in request["outputs"]:
                reply["scalars"][name] = value.item() if isinstance(value, np.generic) else value
        reply["status"] = "ok"
    except Unsupported as reason:
        reply.update(status="unsupported", message=str(reason))
    except OutOfMemory as reason:
        reply.update(status="out_of_memory", message=str(reason))
    except Exception:  # the submission's own failure: reported, never fatal
        reply.update(status="error", message=traceback.format_exc(limit=3))
    return reply


_TAKES_OUT = {}


def _takes_out(function):
    """Whether the function takes its outputs' places as a keyword `out`
    (looked up once per function: a call's time includes this)."""
    if function not in _TAKES_OUT:
        try:
            parameter = inspect.signature(function).parameters.get("out")
        except (TypeError, ValueError):
            parameter = None
        _TAKES_OUT[function] = parameter is not None and parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                                            inspect.Parameter.KEYWORD_ONLY)
    return _TAKES_OUT[function]


def _disagreements(ops, declared_ops):
    """What the functions given to serve() disagree with in the declared ops
    (the hello's "declared_ops"): each is called as function(scalars, **inputs)."""
    declared = {op["op"]: op for op in declared_ops}
    problems = []
    for name in sorted(ops):
        op = declared.get(name)
        if op is None:
            problems.append("%r is not an op of this challenge (its ops: %s)" % (name, ", ".join(sorted(declared))))
            continue
        inputs = [p["name"] for p in op.get("parameters", []) if p.get("kind") == "in"]
        try:
            signature = inspect.signature(ops[name])
        except (TypeError, ValueError):
            continue  # a callable without an inspectable signature: judged by its calls
        try:
            signature.bind({}, **{i: None for i in inputs + (["out"] if _takes_out(ops[name]) else [])})
        except TypeError as reason:
            problems.append("op %r is called as %s(scalars, %s), which the function %s%s cannot take: %s"
                            % (name, name, ", ".join(inputs), name, signature, reason))
    return problems


_MALLOC_TRIM = []


def _give_back_freed_memory():
    """Returns the heap's free pages to the system (glibc's malloc_trim), so
    that the harness's memory witness sees what the process holds rather
    than what its allocator keeps for reuse. Nothing where libc has no
    malloc_trim. The symbol is looked up once, in the process's own
    namespace: find_library would run ldconfig at every trim."""
    if not _MALLOC_TRIM:
        try:
            _MALLOC_TRIM.append(ctypes.CDLL(None).malloc_trim)
        except (OSError, AttributeError, TypeError):
            _MALLOC_TRIM.append(None)
    if _MALLOC_TRIM[0] is not None:
        _MALLOC_TRIM[0](0)


def serve(ops, stdin=None, stdout=None):
    """Answers the harness's requests until it says exit or closes stdin."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    tensors = _Files()
    for line in stdin:
        request = json.loads(line)
        kind = request.get("type")
        if kind == "hello":
            protocol = request.get("protocol")
            if protocol not in PROTOCOLS:
                _reply(stdout, {"type": "error", "message": "this client speaks protocols %s, not %r"
                                % (" and ".join(map(str, PROTOCOLS)), protocol)})
                return
            problems = _disagreements(ops, request.get("declared_ops", []))
            if problems:
                _reply(stdout, {"type": "error", "message": "the functions disagree with the challenge's declared "
                                "ops: " + "; ".join(problems)})
                return
            if protocol == 2 and request.get("device", {}).get("kind", "cpu") == "cuda":
                import harness_device  # noqa: PLC0415 (needs torch or cupy, imported only on a GPU)

                tensors = harness_device.DeviceMemory(request["memory_fd"], request["device"]["index"],
                                                      request.get("arrays", "torch"))
            elif protocol == 2:
                tensors = SharedMemory(request["memory_fd"], request.get("arrays", "numpy"))
            _reply(stdout, {"type": "hello", "protocol": protocol, "ops": sorted(ops), "trim": True})
        elif kind == "trim":
            _give_back_freed_memory()
            if hasattr(tensors, "trim"):
                tensors.trim()
            _reply(stdout, {"type": "trimmed"})
        elif kind == "call":
            _reply(stdout, _call(ops, request, tensors))
        elif kind == "unmap":
            tensors.unmap(request["memory"])
            _reply(stdout, {"type": "unmapped"})
        elif kind == "exit":
            return
