"""A fake tensorflow for doctor's tests: TensorFlow cannot be installed on
doctor's machines, so this implements, in plain Python on small matrices,
exactly the part of the TensorFlow API that doctor's probe (verify/probe.py)
calls. It checks the probe's TensorFlow branch for Python errors; what the
real TensorFlow prints is covered by recorded outputs in the Go tests.

  FAKETF_NO_GPU=1      list_physical_devices('GPU') is empty
  FAKETF_CPU_BUILD=1   a build without CUDA (implies FAKETF_NO_GPU)
  FAKETF_CPU_PLACE=1   ops run on the CPU despite tf.device('/GPU:0')
"""
import contextlib
import os
import random as _pyrandom
import struct

__version__ = "2.99.0"

float32 = "float32"
bfloat16 = "bfloat16"

_placement = ["/job:localhost/replica:0/task:0/device:CPU:0"]


def _bf16(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _conv(x, dtype):
    return _bf16(x) if dtype == bfloat16 else struct.unpack("<f", struct.pack("<f", x))[0]


def _map(data, f):
    if isinstance(data, list):
        return [_map(d, f) for d in data]
    return f(data)


class _Array(object):
    def __init__(self, data):
        self.data = data

    def tolist(self):
        return _map(self.data, lambda x: x)


class Tensor(object):
    def __init__(self, data, dtype=float32):
        self.data = data
        self.dtype = dtype
        self.device = _placement[-1]

    def numpy(self):
        return _Array(self.data) if isinstance(self.data, list) else self.data

    def __getitem__(self, key):
        i, j = key
        return Tensor(self.data[i][j], self.dtype)


def _gpu_ok():
    return os.environ.get("FAKETF_NO_GPU") != "1" and os.environ.get("FAKETF_CPU_BUILD") != "1"


class _PhysicalDevice(object):
    def __init__(self, name):
        self.name = name


class _Experimental(object):
    @staticmethod
    def get_device_details(dev):
        return {"device_name": "NVIDIA H200", "compute_capability": (9, 0)}

    @staticmethod
    def enable_tensor_float_32_execution(on):
        pass


class config(object):
    experimental = _Experimental

    @staticmethod
    def list_physical_devices(kind):
        if kind == "GPU" and _gpu_ok():
            return [_PhysicalDevice("/physical_device:GPU:0")]
        return []


class sysconfig(object):
    @staticmethod
    def get_build_info():
        if os.environ.get("FAKETF_CPU_BUILD") == "1":
            return {"is_cuda_build": False, "is_rocm_build": False}
        return {"cuda_version": "12.5.1", "cudnn_version": "9", "is_cuda_build": True,
                "cuda_compute_capabilities": ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]}


class test(object):
    @staticmethod
    def is_built_with_cuda():
        return os.environ.get("FAKETF_CPU_BUILD") != "1"


@contextlib.contextmanager
def device(name):
    if "GPU" in name and _gpu_ok() and os.environ.get("FAKETF_CPU_PLACE") != "1":
        _placement.append("/job:localhost/replica:0/task:0/device:GPU:0")
    else:
        _placement.append("/job:localhost/replica:0/task:0/device:CPU:0")
    try:
        yield
    finally:
        _placement.pop()


def zeros(shape):
    return Tensor([0.0] * shape[0])


def constant(values):
    return Tensor(list(values), "int32")


def cast(t, dtype):
    return Tensor(_map(t.data, lambda x: _conv(x, dtype)), dtype)


def transpose(t):
    return Tensor([list(c) for c in zip(*t.data)], t.dtype)


def gather(t, idx, axis=0):
    if axis == 0:
        return Tensor([list(t.data[i]) for i in idx.data], t.dtype)
    return Tensor([[row[j] for j in idx.data] for row in t.data], t.dtype)


def gather_nd(t, pairs):
    return Tensor([t.data[i][j] for i, j in pairs.data], t.dtype)


def stack(ts, axis=0):
    assert axis == 1
    return Tensor([list(p) for p in zip(*[t.data for t in ts])], "int32")


class random_ns(object):
    @staticmethod
    def stateless_uniform(shape, seed, minval=0, maxval=1, dtype=float32):
        rng = _pyrandom.Random(seed[0] * 1000 + seed[1])
        rows, cols = shape
        return Tensor([[_conv(rng.uniform(minval, maxval), dtype) for _ in range(cols)] for _ in range(rows)], dtype)


random = random_ns  # tf.random


class linalg(object):
    @staticmethod
    def matmul(a, b):
        n, k, m = len(a.data), len(b.data), len(b.data[0])
        return Tensor([[_conv(sum(a.data[i][l] * b.data[l][j] for l in range(k)), a.dtype) for j in range(m)]
                       for i in range(n)], a.dtype)
