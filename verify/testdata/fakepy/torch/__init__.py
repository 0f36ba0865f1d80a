"""A fake torch for doctor's tests, on machines without a GPU or PyTorch.

It implements, in plain Python on small matrices, exactly the part of the
PyTorch API that doctor's probe (verify/probe.py) calls, so that the probe's
PyTorch branch runs end to end in the tests. bfloat16 is emulated by rounding
to 8 significant bits. Environment:

  FAKETORCH_NO_GPU=1   torch.cuda.is_available() is False
  FAKETORCH_WRONG=1    matmul results are off by 1 in entry (0, 0)
  FAKETORCH_RAISE=msg  matmul raises RuntimeError(msg)
  FAKETORCH_STDERR=msg printed to stderr at import
  FAKETORCH_HANG=1     the import never finishes
"""
import os
import random
import struct
import sys
import time

if os.environ.get("FAKETORCH_STDERR"):
    sys.stderr.write(os.environ["FAKETORCH_STDERR"] + "\n")
while os.environ.get("FAKETORCH_HANG") == "1":
    time.sleep(1)

__version__ = "2.99.0+fake"

float32 = "float32"
bfloat16 = "bfloat16"


class _Version(object):
    cuda = "13.0"


version = _Version()


class _Cudnn(object):
    @staticmethod
    def is_available():
        return True

    @staticmethod
    def version():
        return 91000


class _Matmul(object):
    allow_tf32 = False


class _CudaBackend(object):
    matmul = _Matmul()


class backends(object):
    cudnn = _Cudnn
    cuda = _CudaBackend()


class device(object):
    def __init__(self, spec):
        kind, _, idx = str(spec).partition(":")
        self.type = kind
        self.index = int(idx or 0)

    def __str__(self):
        return "%s:%d" % (self.type, self.index)


def _bf16(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _conv(x, dtype):
    return _bf16(x) if dtype == bfloat16 else _f32(x)


def _map(data, f):
    if isinstance(data, list):
        return [_map(d, f) for d in data]
    return f(data)


class Generator(object):
    def __init__(self, device=None):
        self.rng = random.Random(0)

    def manual_seed(self, s):
        self.rng.seed(s)


class Tensor(object):
    def __init__(self, data, dtype=float32, dev=None):
        self.data = data
        self.dtype = dtype
        self.device = dev or device("cpu")

    def uniform_(self, lo, hi, generator=None):
        rng = generator.rng if generator else random.Random(0)
        self.data = _map(self.data, lambda _: _conv(rng.uniform(lo, hi), self.dtype))
        return self

    def to(self, dtype):
        return Tensor(_map(self.data, lambda x: _conv(x, dtype)), dtype, self.device)

    def float(self):
        return self.to(float32)

    def cpu(self):
        return Tensor(self.data, self.dtype, device("cpu"))

    def tolist(self):
        return _map(self.data, lambda x: x)

    def item(self):
        return self.data

    def t(self):
        return Tensor([list(col) for col in zip(*self.data)], self.dtype, self.device)

    def __getitem__(self, key):
        if isinstance(key, Tensor):  # rows
            return Tensor([list(self.data[i]) for i in key.data], self.dtype, self.device)
        a, b = key
        if isinstance(a, int) and isinstance(b, int):
            return Tensor(self.data[a][b], self.dtype, self.device)
        if isinstance(a, slice) and isinstance(b, Tensor):  # columns
            return Tensor([[row[j] for j in b.data] for row in self.data[a]], self.dtype, self.device)
        if isinstance(a, Tensor) and isinstance(b, Tensor):  # pairs
            return Tensor([self.data[i][j] for i, j in zip(a.data, b.data)], self.dtype, self.device)
        raise TypeError("fake torch: unsupported index %r" % (key,))


def tensor(data, device=None):
    return Tensor(list(data), float32, device)


def zeros(n, device=None):
    return Tensor([0.0] * n, float32, device)


def empty(shape, device=None, dtype=float32):
    rows, cols = shape
    return Tensor([[0.0] * cols for _ in range(rows)], dtype, device)


def matmul(a, b):
    msg = os.environ.get("FAKETORCH_RAISE")
    if msg:
        raise RuntimeError(msg)
    n, k, m = len(a.data), len(b.data), len(b.data[0])
    c = [[_conv(sum(a.data[i][l] * b.data[l][j] for l in range(k)), a.dtype) for j in range(m)] for i in range(n)]
    if os.environ.get("FAKETORCH_WRONG") == "1":
        c[0][0] += 1
    return Tensor(c, a.dtype, a.device)


class cuda(object):
    @staticmethod
    def is_available():
        return os.environ.get("FAKETORCH_NO_GPU") != "1"

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def get_device_capability(i=0):
        return (9, 0)

    @staticmethod
    def get_device_name(i=0):
        return "NVIDIA H200"

    @staticmethod
    def current_blas_handle():
        return 1

    @staticmethod
    def synchronize():
        pass
