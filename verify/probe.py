"""doctor's framework probe (the third rung of `doctor verify`).

Runs inside the examined Python. Reads one JSON request line from standard
input, imports TensorFlow (or, when it is not installed, PyTorch, JAX or CuPy),
lists the GPUs, and times a checked matrix product on GPU 0. It prints stage
lines ("DOCTOR_PROBE_STAGE <name>") as it goes and, at the end, one line
"DOCTOR_PROBE_RESULT <json>" (schema doctor.probe/v1). The framework's own log
goes to standard error untouched: doctor keeps it for its log signatures.

Timing: the products of one sample are queued back to back and the sample ends
when one entry of the last result has been copied to the host (TensorFlow's
.numpy(), PyTorch's .item(), JAX's block_until_ready()): the GPU work is
forced to finish inside the timed region. Warm-up first, then the median of
several samples. The result is checked on a few entries against a float64 dot
product computed on the CPU from the same inputs.

Only the standard library is imported besides the framework under test.
"""

import importlib.util
import json
import math
import sys
import time
import traceback

SCHEMA = "doctor.probe/v1"
RESULT = "DOCTOR_PROBE_RESULT "
STAGE = "DOCTOR_PROBE_STAGE "
NAMES = {"tensorflow": "TensorFlow", "torch": "PyTorch", "jax": "JAX", "cupy": "CuPy"}
ORDER = ["tensorflow", "torch", "jax", "cupy"]
TOLERANCE = {"bf16": 1e-2, "fp32": 1e-4}

WARMUP_MIN = 3
WARMUP_S = 0.1
SAMPLE_S = 0.02


def stage(out, name):
    out["stage"] = name
    sys.stdout.write(STAGE + name + "\n")
    sys.stdout.flush()


def emit(out):
    sys.stdout.write(RESULT + json.dumps(out, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


class Gate(object):
    """Holds the probe before its timed GPU work until doctor says "go"."""

    def __init__(self, enabled):
        self.enabled = enabled

    def wait(self, out):
        if not self.enabled:
            return
        stage(out, "gate")
        t = time.perf_counter()
        sys.stdin.readline()
        out["gate_wait_s"] = round(time.perf_counter() - t, 4)
        self.enabled = False


def choose_dtype(cc):
    """bf16 on GPUs with native bfloat16 tensor cores (compute capability 8.0
    and newer), float32 otherwise."""
    try:
        major = int(str(cc).split(".")[0]) if "." in str(cc) else int(cc[0])
    except Exception:
        major = 0
    return "bf16" if major >= 8 else "fp32"


def sample_entries(n, count):
    picks = [(0, 0), (n - 1, n - 1), (0, n - 1), (n - 1, 0)]
    x = 12345
    while len(picks) < count:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        i = x % n
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        picks.append((i, x % n))
    return picks[:count]


def check_entries(rows, cols, got, picks):
    """rows[s] is row i of A, cols[s] column j of B (lists of floats), got[s]
    the product's entry (i, j). Returns the largest error relative to
    sum |a*b|."""
    worst = 0.0
    for s in range(len(picks)):
        ref = 0.0
        scale = 0.0
        for a, b in zip(rows[s], cols[s]):
            ref += a * b
            scale += abs(a * b)
        g = float(got[s])
        if math.isnan(g) or math.isinf(g):
            return float("inf")
        err = abs(g - ref) / (scale or 1.0)
        worst = max(worst, err)
    return worst


def calibrate(run, sync):
    """Warms up (at least WARMUP_MIN products and WARMUP_S seconds) and
    returns how many products one sample needs to last about SAMPLE_S, so
    that the cost of forcing completion is small against the work. run()
    queues one product; sync() forces completion."""
    t = time.perf_counter()
    run()
    sync()
    first = time.perf_counter() - t
    per = max(first, 1e-6)
    done, spent = 1, first
    while done < WARMUP_MIN or spent < WARMUP_S:
        t = time.perf_counter()
        run()
        sync()
        dt = time.perf_counter() - t
        per = min(per, dt)
        done += 1
        spent += dt
        if done > 2000:
            break
    reps = max(1, min(256, int(math.ceil(SAMPLE_S / per))))
    return reps


def measure(run, sync, reps, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(reps):
            run()
        sync()
        times.append((time.perf_counter() - t) / reps)
    times.sort()
    mid = len(times) // 2
    median = times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2
    return median, times[0], times[-1]


def figure(out, dtype, n, reps, runs, med, lo, hi, err, placement):
    out["figure"] = {
        "dtype": dtype, "m": n, "n": n, "k": n,
        "median_s": med, "min_s": lo, "max_s": hi,
        "runs": runs, "per_sample": reps,
        "tflops": 2.0 * n * n * n / med / 1e12 if med > 0 else 0.0,
        "checked": out.get("checked", 0),
        "max_error": err if not math.isinf(err) else 1e308,
        "tolerance": TOLERANCE[dtype],
        "correct": err <= TOLERANCE[dtype],
        "placement": placement,
    }


def conclude(out, req, n, dtype, picks, rows, cols, got, run, sync, placement):
    """Checks the sampled entries, times the product and records the figure:
    the same last steps for every framework."""
    out["checked"] = len(picks)
    err = check_entries(rows, cols, got, picks)
    stage(out, "time")
    reps = calibrate(run, sync)
    med, lo, hi = measure(run, sync, reps, req["runs"])
    figure(out, dtype, n, reps, req["runs"], med, lo, hi, err, placement)
    out["status"] = "pass" if out["figure"]["correct"] else "fail"
    if not out["figure"]["correct"]:
        out["error"] = "the matmul result differs from the CPU reference by %.3g" % err


def probe_tensorflow(req, out, gate):
    stage(out, "import")
    t = time.perf_counter()
    import tensorflow as tf
    out["import_s"] = round(time.perf_counter() - t, 4)
    out["framework_version"] = tf.__version__
    try:
        out["build"] = {k: str(v) for k, v in dict(tf.sysconfig.get_build_info()).items()}
    except Exception as e:  # old TensorFlow
        out["build"] = {"error": repr(e)}
    out["built_with_cuda"] = bool(tf.test.is_built_with_cuda())
    stage(out, "devices")
    t = time.perf_counter()
    gpus = tf.config.list_physical_devices("GPU")
    out["devices"] = [g.name for g in gpus]
    if not gpus:
        out["status"] = "fail"
        out["error"] = "TensorFlow lists no GPU (tf.config.list_physical_devices('GPU') is empty)"
        return
    try:
        details = tf.config.experimental.get_device_details(gpus[0])
        cc = details.get("compute_capability")
        out["device"] = {"name": details.get("device_name", ""),
                         "compute_capability": "%d.%d" % tuple(cc) if cc else ""}
    except Exception:
        cc = None
    n = req["size"]
    dtype = choose_dtype(cc or (0, 0))
    tdt = tf.bfloat16 if dtype == "bf16" else tf.float32
    if dtype == "fp32":
        tf.config.experimental.enable_tensor_float_32_execution(False)
    stage(out, "init")
    with tf.device("/GPU:0"):
        tf.zeros([1]).numpy()  # creates the device: loads cuBLAS, cuDNN, the allocator
    out["init_s"] = round(time.perf_counter() - t, 4)
    gate.wait(out)
    stage(out, "alloc")
    with tf.device("/GPU:0"):
        a = tf.cast(tf.random.stateless_uniform([n, n], seed=[1, 2], minval=-1, maxval=1), tdt)
        b = tf.cast(tf.random.stateless_uniform([n, n], seed=[3, 4], minval=-1, maxval=1), tdt)
        holder = {}

        def run():
            holder["c"] = tf.linalg.matmul(a, b)

        def sync():
            holder["c"][0, 0].numpy()

        stage(out, "matmul")
        run()
        c = holder["c"]
        placement = c.device
        if "GPU:0" not in placement:
            out["status"] = "fail"
            out["error"] = "the matmul ran on %s, not on GPU:0" % placement
            return
        stage(out, "check")
        picks = sample_entries(n, req["samples"])
        ii = tf.constant([p[0] for p in picks])
        jj = tf.constant([p[1] for p in picks])
        rows = tf.cast(tf.gather(a, ii), tf.float32).numpy().tolist()
        cols = tf.transpose(tf.cast(tf.gather(b, jj, axis=1), tf.float32)).numpy().tolist()
        got = tf.cast(tf.gather_nd(c, tf.stack([ii, jj], axis=1)), tf.float32).numpy().tolist()
        out["checked"] = len(picks)
        err = check_entries(rows, cols, got, picks)
        stage(out, "time")
        reps = calibrate(run, sync)
        med, lo, hi = measure(run, sync, reps, req["runs"])
    figure(out, dtype, n, reps, req["runs"], med, lo, hi, err, placement)
    out["status"] = "pass" if out["figure"]["correct"] else "fail"
    if not out["figure"]["correct"]:
        out["error"] = "the matmul result differs from the CPU reference by %.3g" % err


def probe_torch(req, out, gate):
    stage(out, "import")
    t = time.perf_counter()
    import torch
    out["import_s"] = round(time.perf_counter() - t, 4)
    out["framework_version"] = torch.__version__
    out["build"] = {"cuda_version": str(torch.version.cuda), "cudnn_version": str(torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)}
    out["built_with_cuda"] = torch.version.cuda is not None
    stage(out, "devices")
    t = time.perf_counter()
    if not torch.cuda.is_available():
        out["status"] = "fail"
        out["error"] = "PyTorch sees no GPU (torch.cuda.is_available() is False)"
        return
    count = torch.cuda.device_count()
    out["devices"] = ["cuda:%d" % i for i in range(count)]
    cc = torch.cuda.get_device_capability(0)
    out["device"] = {"name": torch.cuda.get_device_name(0), "compute_capability": "%d.%d" % cc}
    n = req["size"]
    dtype = choose_dtype(cc)
    tdt = torch.bfloat16 if dtype == "bf16" else torch.float32
    if dtype == "fp32":
        torch.backends.cuda.matmul.allow_tf32 = False
    stage(out, "init")
    dev = torch.device("cuda:0")
    torch.zeros(1, device=dev)
    torch.cuda.current_blas_handle()  # loads cuBLAS without GPU work
    torch.cuda.synchronize()
    out["init_s"] = round(time.perf_counter() - t, 4)
    gate.wait(out)
    stage(out, "alloc")
    g = torch.Generator(device=dev)
    g.manual_seed(1)
    a = torch.empty((n, n), device=dev, dtype=torch.float32).uniform_(-1, 1, generator=g).to(tdt)
    b = torch.empty((n, n), device=dev, dtype=torch.float32).uniform_(-1, 1, generator=g).to(tdt)
    holder = {}

    def run():
        holder["c"] = torch.matmul(a, b)

    def sync():
        holder["c"][0, 0].item()

    stage(out, "matmul")
    run()
    c = holder["c"]
    placement = str(c.device)
    if c.device.type != "cuda":
        out["status"] = "fail"
        out["error"] = "the matmul ran on %s, not on the GPU" % placement
        return
    stage(out, "check")
    picks = sample_entries(n, req["samples"])
    ii = torch.tensor([p[0] for p in picks], device=dev)
    jj = torch.tensor([p[1] for p in picks], device=dev)
    rows = a[ii].float().cpu().tolist()
    cols = b[:, jj].t().float().cpu().tolist()
    got = c[ii, jj].float().cpu().tolist()
    conclude(out, req, n, dtype, picks, rows, cols, got, run, sync, placement)


def probe_jax(req, out, gate):
    stage(out, "import")
    t = time.perf_counter()
    import jax
    import jax.numpy as jnp
    out["import_s"] = round(time.perf_counter() - t, 4)
    out["framework_version"] = jax.__version__
    stage(out, "devices")
    t = time.perf_counter()
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        out["status"] = "fail"
        out["error"] = "JAX sees no GPU: %s" % e
        return
    out["devices"] = [str(d) for d in gpus]
    d0 = gpus[0]
    cc = getattr(d0, "compute_capability", "") or ""
    out["device"] = {"name": getattr(d0, "device_kind", ""), "compute_capability": str(cc)}
    n = req["size"]
    dtype = choose_dtype(cc if cc else (0, 0))
    jdt = jnp.bfloat16 if dtype == "bf16" else jnp.float32
    prec = jax.lax.Precision.HIGHEST if dtype == "fp32" else None
    stage(out, "init")
    jax.device_put(jnp.zeros(1), d0).block_until_ready()
    out["init_s"] = round(time.perf_counter() - t, 4)
    gate.wait(out)
    stage(out, "alloc")
    ka, kb = jax.random.split(jax.random.PRNGKey(1))
    a = jax.device_put(jax.random.uniform(ka, (n, n), minval=-1, maxval=1), d0).astype(jdt)
    b = jax.device_put(jax.random.uniform(kb, (n, n), minval=-1, maxval=1), d0).astype(jdt)
    mm = jax.jit(lambda x, y: jnp.matmul(x, y, precision=prec))
    holder = {}

    def run():
        holder["c"] = mm(a, b)

    def sync():
        holder["c"].block_until_ready()

    stage(out, "matmul")
    run()
    c = holder["c"]
    placement = ",".join(sorted(str(d) for d in c.devices()))
    if not any(d.platform == "gpu" for d in c.devices()):
        out["status"] = "fail"
        out["error"] = "the matmul ran on %s, not on the GPU" % placement
        return
    stage(out, "check")
    picks = sample_entries(n, req["samples"])
    ii = jnp.array([p[0] for p in picks])
    jj = jnp.array([p[1] for p in picks])
    rows = a[ii].astype(jnp.float32).tolist()
    cols = b[:, jj].T.astype(jnp.float32).tolist()
    got = c[ii, jj].astype(jnp.float32).tolist()
    conclude(out, req, n, dtype, picks, rows, cols, got, run, sync, placement)


def probe_cupy(req, out, gate):
    stage(out, "import")
    t = time.perf_counter()
    import cupy as cp
    out["import_s"] = round(time.perf_counter() - t, 4)
    out["framework_version"] = cp.__version__
    stage(out, "devices")
    t = time.perf_counter()
    count = cp.cuda.runtime.getDeviceCount()
    out["devices"] = ["cuda:%d" % i for i in range(count)]
    if count == 0:
        out["status"] = "fail"
        out["error"] = "CuPy sees no GPU"
        return
    dev = cp.cuda.Device(0)
    cc = dev.compute_capability  # "90"
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props.get("name", b"")
    out["device"] = {"name": name.decode() if isinstance(name, bytes) else str(name),
                     "compute_capability": "%s.%s" % (cc[:-1], cc[-1:])}
    n = req["size"]
    dtype = "fp32"  # CuPy has no bfloat16 type
    stage(out, "init")
    cp.zeros(1).sum().item()
    out["init_s"] = round(time.perf_counter() - t, 4)
    gate.wait(out)
    stage(out, "alloc")
    rng = cp.random.default_rng(1)
    a = rng.random((n, n), dtype=cp.float32) * 2 - 1
    b = rng.random((n, n), dtype=cp.float32) * 2 - 1
    holder = {}

    def run():
        holder["c"] = cp.matmul(a, b)

    def sync():
        holder["c"][0, 0].item()

    stage(out, "matmul")
    run()
    c = holder["c"]
    placement = "cuda:%d" % c.device.id
    stage(out, "check")
    picks = sample_entries(n, req["samples"])
    ii = cp.array([p[0] for p in picks])
    jj = cp.array([p[1] for p in picks])
    rows = a[ii].tolist()
    cols = b[:, jj].T.tolist()
    got = c[ii, jj].tolist()
    conclude(out, req, n, dtype, picks, rows, cols, got, run, sync, placement)


PROBES = {"tensorflow": probe_tensorflow, "torch": probe_torch, "jax": probe_jax, "cupy": probe_cupy}


def installed(name):
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False


def main():
    line = sys.stdin.readline()
    try:
        req = json.loads(line) if line.strip() else {}
    except ValueError:
        req = {}
    req.setdefault("framework", "auto")
    req.setdefault("size", 8192)
    req.setdefault("runs", 10)
    req.setdefault("samples", 16)
    gate = Gate(bool(req.get("gate")))
    out = {
        "schema": SCHEMA,
        "status": "skip",
        "stage": "start",
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "prefix": sys.prefix,
    }
    order = ORDER if req["framework"] == "auto" else [req["framework"]]
    found = [name for name in ORDER if installed(name)]
    out["installed"] = found
    out["tensorflow_installed"] = "tensorflow" in found
    chosen = [name for name in order if name in found]
    if not chosen:
        out["status"] = "skip"
        out["error"] = "none of %s is installed" % ", ".join(NAMES[n] for n in order)
        emit(out)
        return
    name = chosen[0]
    out["framework"] = name
    try:
        PROBES[name](req, out, gate)
    except BaseException as e:  # the framework's failure is the finding
        out["status"] = "fail"
        out["error_type"] = type(e).__name__
        out["error"] = "%s: %s" % (type(e).__name__, e)
        out["traceback"] = traceback.format_exc()[-6000:]
    if out.get("status") == "skip":
        out["status"] = "fail"
    out["duration_s"] = round(time.perf_counter() - START, 4)
    emit(out)


START = time.perf_counter()

if __name__ == "__main__":
    main()
