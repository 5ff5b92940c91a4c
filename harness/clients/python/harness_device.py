"""The GPU side of the Python client (harness_client.py): protocol 2 on a
CUDA device. The harness's device memory arrives on the memory socket as
CUDA IPC handles ({"kind": "cuda-ipc", "handle": hex, "device": index}, no
descriptor); each is opened once in this process's context of that device,
and a request's tensors become PyTorch tensors or CuPy arrays on it, zero
copy, through __cuda_array_interface__. Outputs are copied into their
places on the device; finish() synchronises the device, so that a reply
says the outputs are written.
"""

import ctypes
import ctypes.util
import json
import socket
import time

import numpy as np


# About 20 us at a Hopper GPU's 1.98 GHz: longer than launching a call's
# first kernel takes.
_HOLD_CYCLES = 40_000


class _IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * 64)]


class _CudaRuntime:
    """cudaIpcOpenMemHandle and cudaIpcCloseMemHandle of the CUDA runtime
    the array library loaded (found in this process's mappings), else of the
    system's."""

    def __init__(self):
        path = None
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "libcudart" in line and line.split()[-1].startswith("/"):
                    path = line.split()[-1]
                    break
        self.library = ctypes.CDLL(path or ctypes.util.find_library("cudart") or "libcudart.so")
        self.library.cudaIpcOpenMemHandle.argtypes = [ctypes.POINTER(ctypes.c_void_p), _IpcHandle, ctypes.c_uint]
        self.library.cudaIpcCloseMemHandle.argtypes = [ctypes.c_void_p]

    def open(self, handle_hex):
        handle = _IpcHandle()
        raw = bytes.fromhex(handle_hex)
        if len(raw) != 64:
            raise ValueError("a CUDA IPC handle of %d bytes, not 64" % len(raw))
        ctypes.memmove(ctypes.addressof(handle), raw, 64)
        pointer = ctypes.c_void_p()
        status = self.library.cudaIpcOpenMemHandle(ctypes.byref(pointer), handle, 1)  # lazy peer access
        if status != 0:
            raise RuntimeError("cudaIpcOpenMemHandle failed with CUDA error %d" % status)
        return pointer.value

    def close(self, pointer):
        self.library.cudaIpcCloseMemHandle(ctypes.c_void_p(pointer))


class _DevicePlace:
    """A tensor's place in device memory, as __cuda_array_interface__
    describes one (C order, no stream to wait on: the harness's copies
    are complete before its request goes out)."""

    def __init__(self, pointer, spec):
        self.__cuda_array_interface__ = {
            "shape": tuple(spec["shape"]),
            "typestr": np.dtype(spec["dtype"]).str,
            "data": (pointer, False),
            "strides": None,
            "version": 3,
        }


class _EventClock:
    """A timed call's claim on a GPU: CUDA events on the current stream from
    the function's start to its outputs in place, and the host clock from
    the start to the synchronisation after them (the harness compares the
    two: work on a stream the events do not see shows there). Where the
    library can, the device is first held by a short kernel so that the
    start event fires behind the call's first launch, as in a compiled
    worker."""

    def __init__(self, event, elapsed_ms, hold=None):
        self.begin, self.end = event(), event()
        self.elapsed_ms = elapsed_ms
        self.hold = hold

    def start(self):
        if self.hold:
            self.hold()
        self.begin.record()
        self.host = time.perf_counter_ns()

    def mark(self):
        self.end.record()

    def stop(self):
        host = time.perf_counter_ns() - self.host
        self.end.synchronize()  # complete already where the client synchronised; needed where a program did not
        return {"elapsed_ns": self.elapsed_ms(self.begin, self.end) * 1e6, "host_ns": host}


class _Torch:
    def __init__(self, index):
        import torch  # noqa: PLC0415

        self.torch = torch
        torch.cuda.set_device(index)
        torch.zeros(1, device="cuda")  # the context now, before the harness's first memory reading

    def wrap(self, place):
        return self.torch.as_tensor(place, device="cuda")

    def copy_into(self, view, value):
        source = self.torch.as_tensor(value, device=view.device)
        if tuple(source.shape) != tuple(view.shape):
            raise ValueError("output of shape %s where the op's is %s" % (tuple(source.shape), tuple(view.shape)))
        if source.data_ptr() == view.data_ptr() and source.stride() == view.stride() and source.dtype == view.dtype:
            return  # written in place (the `out` it was given)
        view.copy_(source)

    def synchronize(self):
        self.torch.cuda.synchronize()

    def trim(self):
        self.torch.cuda.empty_cache()

    def clock(self):
        cuda = self.torch.cuda
        hold = getattr(cuda, "_sleep", None)
        return _EventClock(lambda: cuda.Event(enable_timing=True), lambda a, b: a.elapsed_time(b),
                           (lambda: hold(_HOLD_CYCLES)) if hold else None)


class _CuPy:
    def __init__(self, index):
        import cupy  # noqa: PLC0415

        self.cupy = cupy
        cupy.cuda.Device(index).use()
        cupy.zeros(1)

    def wrap(self, place):
        return self.cupy.asarray(place)

    def copy_into(self, view, value):
        source = self.cupy.asarray(value)
        if source.shape != view.shape:
            raise ValueError("output of shape %s where the op's is %s" % (source.shape, view.shape))
        if source.data.ptr == view.data.ptr and source.strides == view.strides and source.dtype == view.dtype:
            return  # written in place (the `out` it was given)
        view[...] = source.astype(view.dtype, copy=False)

    def synchronize(self):
        self.cupy.cuda.runtime.deviceSynchronize()

    def trim(self):
        self.cupy.get_default_memory_pool().free_all_blocks()

    def clock(self):
        cuda = self.cupy.cuda
        return _EventClock(cuda.Event, cuda.get_elapsed_time)


class DeviceMemory:
    """The harness's device memory, as harness_client.SharedMemory is its
    host memory: load, store, finish and unmap for the client's calls."""

    def __init__(self, fd, index, arrays):
        self.socket = socket.socket(fileno=fd)
        self.arrays = {"torch": _Torch, "cupy": _CuPy}[arrays](index)
        self.runtime = _CudaRuntime()
        self.pointers = {}

    def pointer(self, memory):
        while memory not in self.pointers:
            data, fds, _, _ = socket.recv_fds(self.socket, 1 << 16, 1)
            if not data:
                raise RuntimeError("the memory socket closed")
            message = json.loads(data)
            if message.get("kind") != "cuda-ipc":
                raise RuntimeError("memory of kind %r on a GPU: %r" % (message.get("kind"), data))
            self.pointers[message["memory"]] = self.runtime.open(message["handle"])
        return self.pointers[memory]

    def view(self, spec):
        return self.arrays.wrap(_DevicePlace(self.pointer(spec["memory"]) + spec["offset"], spec))

    def load(self, spec):
        return self.view(spec)

    def place(self, spec):
        return self.view(spec)

    def store(self, spec, value):
        self.arrays.copy_into(self.view(spec), value)

    @staticmethod
    def written(spec, place):
        pass  # in the harness's memory already

    def finish(self):
        self.arrays.synchronize()

    def clock(self):
        return self.arrays.clock()

    def trim(self):
        """Device memory the array library's allocator keeps after it was
        freed goes back to the driver before the harness reads what the
        process holds (its cache is not the submission's state)."""
        self.arrays.synchronize()
        self.arrays.trim()

    def unmap(self, ids):
        self.arrays.synchronize()
        for memory in ids:
            pointer = self.pointers.pop(memory, None)
            if pointer is not None:
                self.runtime.close(pointer)
