#!/usr/bin/env bash
# Acceptance measurements of issue 4 (the verification ladder) on the GPU machine.
# Run from the repository root with the doctor binary at ./.device/doctor (CGO_ENABLED=1).
# Writes under $OUT: summary.txt (the table), verify.json, verify.txt, cvd.json, nolibcuda.json,
# torch.json, log.txt. Every step is bounded by `timeout`; the whole run stays under ~4 minutes.
#
#  1. doctor verify --format json, and text: all rungs pass; their figures.
#  2. In the same run, PyTorch times the same bf16, tf32 and fp32 8192^3 products with CUDA events
#     (warm-up >= 100 ms, median of 10), and the framework rung's product the same way.
#  3. CUDA_VISIBLE_DEVICES=-1 doctor verify, and doctor verify with libcuda hidden (private mount
#     namespace, /dev/null bound over every libcuda file): each rung fails, with its cause, no hang.
#  4. Wall time of doctor verify against `import torch` in a fresh python3.
set -u
OUT=${OUT:-/tmp/verify-out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
: >"$LOG"
DOC=./.device/doctor
PY=${PYTHON:-python3}
END=$((SECONDS + 225)) # hard budget for all steps

# t SECS CMD...: timeout bounded by what is left of the budget.
t() {
	local want=$1
	shift
	local left=$((END - SECONDS))
	((left < 5)) && left=5
	((want > left)) && want=$left
	timeout -k 5 "$want" "$@"
}
now() { date +%s%N; }
ms() { echo $((($(now) - $1) / 1000000)); }
log() { echo "== $*" >>"$LOG"; }

log "machine"
{
	uname -a
	t 20 nvidia-smi -L
	t 20 nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,pcie.link.gen.current,pcie.link.width.current --format=csv
	command -v "$PY"
	t 30 "$PY" -c 'import torch,sys;print("torch",torch.__version__,torch.version.cuda,sys.executable)'
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
	ldconfig -p | grep -E 'libcuda\.so|libcublas\.so' | head
} >>"$LOG" 2>&1

if [ ! -x "$DOC" ]; then
	echo "no doctor binary at $DOC (build it with CGO_ENABLED=1 go build -o .device/doctor ./cmd/doctor)" | tee "$OUT/summary.txt"
	exit 0
fi

# The hand-written PTX, assembled for this GPU by the toolkit's ptxas when there is one
# (the driver JIT-compiles the same text in rung 1; this tells a bad PTX from a bad driver).
log "ptxas"
PTXAS=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
if [ -n "$PTXAS" ]; then
	for sm in sm_90 sm_75; do
		t 30 "$PTXAS" -arch=$sm verify/kernels.ptx -o /dev/null >>"$LOG" 2>&1 && echo "ptxas $sm: ok" >>"$LOG" || echo "ptxas $sm: FAILED" >>"$LOG"
	done
else
	echo "no ptxas" >>"$LOG"
fi

# 1. The ladder, JSON then text, each timed from outside.
log "doctor verify --format json"
s=$(now)
t 100 "$DOC" verify --format json >"$OUT/verify.json" 2>>"$LOG"
rc_json=$?
wall_json=$(ms "$s")
log "doctor verify (text, -v on stderr)"
s=$(now)
t 100 "$DOC" verify -v --no-color >"$OUT/verify.txt" 2>>"$LOG"
rc_text=$?
wall_text=$(ms "$s")

# 2. PyTorch's own measurement of the same products, in the same run.
log "pytorch reference"
FW=$("$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [g for g in d["verification"]["rungs"] if g["name"] == "framework"][0]["figures"][0]
print(f["dtype"], f["m"])' "$OUT/verify.json" 2>>"$LOG") || FW="bf16 8192"
read -r FW_DTYPE FW_N <<<"$FW"
echo "framework product: $FW_DTYPE $FW_N" >>"$LOG"
t 90 "$PY" - "$FW_DTYPE" "$FW_N" >"$OUT/torch.json" 2>>"$LOG" <<'EOF'
import json, statistics, sys, time
import torch

fw_dtype, fw_n = sys.argv[1], int(sys.argv[2])
dev = torch.device("cuda:0")
out = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0)}

def precision(tf32):
    # torch >= 2.9 has fp32_precision; mixing it with allow_tf32 is refused, so use one.
    try:
        torch.backends.cuda.matmul.fp32_precision = "tf32" if tf32 else "ieee"
    except AttributeError:
        torch.backends.cuda.matmul.allow_tf32 = tf32

def bench(kind, n, runs=10):
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}[kind]
    precision(kind == "tf32")
    a = torch.empty(n, n, device=dev).uniform_(-1, 1).to(dtype)
    b = torch.empty(n, n, device=dev).uniform_(-1, 1).to(dtype)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    spent, it = 0.0, 0
    while it < 3 or spent < 100.0:  # warm-up: >= 3 products and >= 100 ms, as doctor does
        s.record(); torch.matmul(a, b); e.record(); e.synchronize()
        spent += s.elapsed_time(e); it += 1
    evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for st, en in evs:
        st.record(); torch.matmul(a, b); en.record()
    torch.cuda.synchronize()
    times = [st.elapsed_time(en) for st, en in evs]
    med = statistics.median(times)
    return {"dtype": kind, "n": n, "median_ms": med, "min_ms": min(times), "tflops": 2.0 * n ** 3 / (med / 1e3) / 1e12}

out["gemm"] = [bench(k, 8192) for k in ("bf16", "tf32", "fp32")]
out["framework_product"] = bench(fw_dtype, fw_n)
print(json.dumps(out))
EOF
rc_torch=$?

# 3a. CUDA_VISIBLE_DEVICES=-1.
log "CUDA_VISIBLE_DEVICES=-1 doctor verify"
s=$(now)
CUDA_VISIBLE_DEVICES=-1 t 100 "$DOC" verify --format json --rung-timeout 60s >"$OUT/cvd.json" 2>>"$LOG"
rc_cvd=$?
wall_cvd=$(ms "$s")

# 3b. libcuda hidden: a private mount namespace with /dev/null over every libcuda file the loader
# could find (LD_LIBRARY_PATH folders, ldconfig's cache, the driver folders). The driver folder
# itself is a read-only mount; binding over a file in it works all the same.
log "libcuda hidden"
LIBS=$({
	ldconfig -p | awk '/libcuda\.so/{print $NF}'
	llp=${LD_LIBRARY_PATH:-}
	for d in ${llp//:/ } /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /lib/x86_64-linux-gnu /usr/local/cuda/compat; do
		ls -1 "$d"/libcuda.so* 2>/dev/null
	done
	t 20 "$PY" -c 'import ctypes;ctypes.CDLL("libcuda.so.1");print("\n".join(l.split()[-1] for l in open("/proc/self/maps") if "libcuda.so" in l))' 2>/dev/null
} | xargs -r -n1 readlink -f | sort -u)
echo "libcuda files: $LIBS" >>"$LOG"
rc_hide=skipped
wall_hide=0
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && [ -n "$LIBS" ]; then
	HIDE=$(mktemp /tmp/doctor-hide.XXXXXX)
	{
		echo "for f in $(echo $LIBS); do mount --bind /dev/null \"\$f\" || echo \"could not hide \$f\" >&2; done"
		echo "$PY -c 'import ctypes
try:
    ctypes.CDLL(\"libcuda.so.1\"); print(\"libcuda STILL loads\")
except OSError as e:
    print(\"libcuda hidden:\", e)' >&2"
		echo "exec $DOC verify --format json --rung-timeout 60s"
	} >"$HIDE"
	cat "$HIDE" >>"$LOG"
	s=$(now)
	t 110 unshare -m sh "$HIDE" >"$OUT/nolibcuda.json" 2>>"$LOG"
	rc_hide=$?
	wall_hide=$(ms "$s")
	rm -f "$HIDE"
else
	echo "cannot hide libcuda here (needs root, unshare and a libcuda file)" >>"$LOG"
fi

# 4. Import time of the framework, in a fresh interpreter, twice (cold and warm cache).
log "import time"
imp=()
for i in 1 2; do
	s=$(now)
	t 60 "$PY" -c 'import torch' >>"$LOG" 2>&1
	imp+=("$(ms "$s")")
done

# The table.
"$PY" - "$OUT" "$wall_json" "$wall_text" "$wall_cvd" "$wall_hide" "${imp[0]}" "${imp[1]}" "$rc_json" "$rc_text" "$rc_torch" "$rc_cvd" "$rc_hide" >"$OUT/summary.txt" 2>>"$LOG" <<'EOF'
import json, os, sys
out = sys.argv[1]
wall_json, wall_text, wall_cvd, wall_hide, imp1, imp2 = (int(x) for x in sys.argv[2:8])
rcs = dict(zip(["verify-json", "verify-text", "torch", "cvd", "nolibcuda"], sys.argv[8:13]))

def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except Exception as e:
        return {"_error": "%s: %s" % (name, e)}

def rungs(d):
    return {r["name"]: r for r in ((d.get("verification") or {}).get("rungs") or [])}

v, tj, cvd, hide = load("verify.json"), load("torch.json"), load("cvd.json"), load("nolibcuda.json")
rv = rungs(v)
print("exit codes:", " ".join("%s=%s" % kv for kv in rcs.items()))
print("ladder (doctor verify --format json):")
for name in ("driver", "libraries", "framework"):
    r = rv.get(name, {})
    print("  %-9s %-4s %7.0f ms  %s%s" % (name, r.get("status", "-"), r.get("duration_ms", 0), r.get("summary", v.get("_error", ""))[:110],
                                        "  [%s]" % r["cause"] if r.get("cause") else ""))
print()
print("%-34s %10s %10s %8s %s" % ("product", "doctor", "pytorch", "ratio", "verdict"))
def row(label, mine, ref, rule, lo, hi):
    if not mine or not ref:
        print("%-34s %10s %10s %8s %s" % (label, mine and "%.1f" % mine or "-", ref and "%.1f" % ref or "-", "-", "n/a")); return
    ratio = mine / ref
    ok = lo <= ratio <= hi
    print("%-34s %10.1f %10.1f %8.3f %s (%s)" % (label, mine, ref, ratio, "PASS" if ok else "FAIL", rule))
libs = {f["dtype"]: f for f in rv.get("libraries", {}).get("figures", [])}
tg = {g["dtype"]: g for g in tj.get("gemm", [])}
row("rung 2 cuBLAS bf16 8192^3 TFLOP/s", libs.get("bf16", {}).get("tflops"), tg.get("bf16", {}).get("tflops"), ">= 0.90", 0.90, 99)
row("rung 2 cuBLAS fp32 8192^3 TFLOP/s", libs.get("fp32", {}).get("tflops"), tg.get("fp32", {}).get("tflops"), "within 10%", 0.90, 1.10)
row("rung 2 cuBLAS tf32 8192^3 TFLOP/s", libs.get("tf32", {}).get("tflops"), tg.get("tf32", {}).get("tflops"), "info", 0, 99)
fw = (rv.get("framework", {}).get("figures") or [{}])[0]
fp = tj.get("framework_product", {})
row("rung 3 %s %s^3 TFLOP/s (events)" % (fw.get("dtype", "?"), fw.get("m", "?")), fw.get("tflops"), fp.get("tflops"), "within 10%", 0.90, 1.10)
for f in list(libs.values()) + ([fw] if fw else []):
    if f:
        print("  %-5s expected %6s  median %.3f ms  runs %s x %s  checked %s max_error %.2g correct %s" % (
            f["dtype"], f.get("expected_tflops", "-"), f["median_ms"], f["runs"], f.get("per_sample", 1), f["checked"], f["max_error"], f["correct"]))
print()
for label, d, want in (("CUDA_VISIBLE_DEVICES=-1", cvd, "cuda_visible_devices_hides_gpu"), ("libcuda hidden", hide, "driver_missing")):
    rs = rungs(d)
    if not rs:
        print("%-24s no result (%s)" % (label, d.get("_error", "")))
        continue
    parts = []
    for name in ("driver", "libraries", "framework"):
        r = rs.get(name, {})
        parts.append("%s=%s/%s%s" % (name, r.get("status"), r.get("cause", "-"), " TIMEOUT" if r.get("timed_out") else ""))
    ok = all(rs.get(n, {}).get("status") == "fail" and rs.get(n, {}).get("cause") == want for n in ("driver", "libraries", "framework"))
    print("%-24s %s  root=%s  %s" % (label, " ".join(parts), (d.get("root_cause") or {}).get("cause"), "PASS" if ok else "CHECK (want %s)" % want))
print()
imp = min(imp1, imp2)
print("wall: verify json %d ms, text %d ms; cvd %d ms; nolibcuda %d ms" % (wall_json, wall_text, wall_cvd, wall_hide))
print("import torch (fresh python3): %d ms, %d ms" % (imp1, imp2))
print("verify wall <= import + 2 s: json %s, text %s (limit %d ms)" % (
    "PASS" if wall_json <= imp + 2000 else "FAIL", "PASS" if wall_text <= imp + 2000 else "FAIL", imp + 2000))
fr = rv.get("framework", {}).get("facts", {})
print("framework facts: import_s=%s gpu_init_s=%s placement=%s" % (fr.get("import_s"), fr.get("gpu_init_s"), fr.get("placement")))
EOF
cat "$OUT/summary.txt"
