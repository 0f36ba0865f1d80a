#!/usr/bin/env bash
# doctor explain on failures induced on a real GPU machine (issue 15): each
# case makes a real framework fail in a known way, captures what it printed
# (stdout and stderr, as a user would paste it) and asks doctor explain for
# the root cause. The cause is known because it was induced, so this scores
# explain on real framework output without a thread's word for the label.
#   torch-cvd-empty     CUDA_VISIBLE_DEVICES= and torch .cuda()       -> cuda_visible_devices_hides_gpu (undecided: the log does not show the variable)
#   torch-cvd-shown     the same, with the echo explain asks for       -> cuda_visible_devices_hides_gpu (decided)
#   cupy-cvd-empty      CUDA_VISIBLE_DEVICES= and CuPy                 -> cuda_visible_devices_hides_gpu (or undecided)
#   cupy-cvd-shown      the same, with the echo                        -> cuda_visible_devices_hides_gpu (decided)
#   jax-cvd-minus1      JAX_PLATFORMS=cuda CUDA_VISIBLE_DEVICES=-1     -> cuda_visible_devices_hides_gpu (or undecided)
#   jax-cvd-shown       the same, with the echo                        -> cuda_visible_devices_hides_gpu (decided)
#   torch-oom-other     another process holds 85% of the memory        -> gpu_out_of_memory_other_process
#   cupy-oom-other      the same, CuPy                                 -> gpu_out_of_memory_other_process
#   jax-oom-other       the same, JAX preallocating                    -> gpu_out_of_memory_other_process (or gpu_memory_preallocation)
#   torch-oom-huge      the job asks for twice the card's memory       -> gpu_out_of_memory_own_job
#   torch-oom-own       the job fills the card itself, then asks more  -> gpu_out_of_memory_own_job
#   cupy-oom-huge       CuPy asks for twice the card's memory          -> gpu_out_of_memory_own_job (or undecided)
#   jax-oom-huge        JAX asks for twice the card's memory           -> gpu_out_of_memory_own_job (or undecided)
#   torch-ordinal       torch on cuda:7 of a one-GPU machine           -> gpu_index_out_of_range
#   cupy-ordinal        CuPy on device 7 of a one-GPU machine          -> gpu_index_out_of_range
#   tf-missing          import tensorflow where it is not installed   -> tf_not_installed
#   torch-healthy       a matmul that works                            -> no error
#   jax-healthy         a JAX computation that works                   -> no error
#   smi-healthy         nvidia-smi's table                             -> no error
# Never resets the GPU or changes its settings; the holder process is
# killed at the end. Expects ./.device/doctor; writes under $OUT:
#   explain-<case>.log   what the framework printed
#   explain-<case>.json  doctor explain --format json of it
#   explain.tsv          case, expected, got, decided, verdict
set -u
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
DOCTOR=./.device/doctor
TMP=$(mktemp -d)
HOLDER=""
trap '[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null; rm -rf "$TMP"' EXIT
[ -x "$DOCTOR" ] || { echo "explain.sh: $DOCTOR is missing"; exit 1; }

# pyfor MODULE: an interpreter that imports MODULE (the machine has
# PyTorch, JAX and CuPy, not necessarily in one environment).
pyfor() {
  for py in /opt/torch/.venv/bin/python3 /opt/*/.venv/bin/python3 /opt/*/bin/python3 python3; do
    [ -x "$py" ] || command -v "$py" >/dev/null 2>&1 || continue
    if timeout 60 "$py" -c "import $1" >/dev/null 2>&1; then echo "$py"; return 0; fi
  done
  return 1
}
PYT=$(pyfor torch); PYJ=$(pyfor jax); PYC=$(pyfor cupy); PY=${PYT:-python3}
echo "torch: ${PYT:-none}  jax: ${PYJ:-none}  cupy: ${PYC:-none}"
printf 'case\texpected\tgot\tdecided\tverdict\n' >"$OUT/explain.tsv"

# judge CASE EXPECTED...: explain the captured log and score it. EXPECTED
# "-" means no error: a null root cause or benign_warning_only.
judge() {
  local name=$1; shift
  local log="$OUT/explain-$name.log"
  timeout 30 "$DOCTOR" explain --format json "$log" >"$OUT/explain-$name.json" 2>/dev/null
  local got
  got=$($PY - "$OUT/explain-$name.json" "$@" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("error\t-\tERROR"); sys.exit()
rc = r.get("root_cause")
cause = rc["cause"] if rc else "none"
decided = "-"
for f in r.get("findings") or []:
    if rc and f.get("id") == rc.get("id"):
        decided = str((f.get("evidence") or {}).get("decided", "-")).lower()
want = sys.argv[2:]
ok = cause in want or (want == ["-"] and cause in ("none", "benign_warning_only"))
print(f"{cause}\t{decided}\t{'right' if ok else 'WRONG'}")
PY
)
  printf '%s\t%s\t%s\n' "$name" "$*" "$got" | tee -a "$OUT/explain.tsv"
}

# run CASE ENV... -- CMD...: capture what CMD prints, as pasted.
run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 120 "$@" >"$OUT/explain-$name.log" 2>&1
}

# shown FROM TO VALUE: the log FROM with, before it, the output explain
# asks for (the variable echoed, as its ask_for prints it).
shown() {
  { echo "\$ echo \"CUDA_VISIBLE_DEVICES=[\$CUDA_VISIBLE_DEVICES]\""; echo "CUDA_VISIBLE_DEVICES=[$3]"; cat "$OUT/explain-$1.log"; } >"$OUT/explain-$2.log"
}

if [ -n "$PYT" ]; then
  run torch-cvd-empty CUDA_VISIBLE_DEVICES= -- "$PYT" -c "import torch; print(torch.cuda.is_available()); torch.zeros(1).cuda()"
  judge torch-cvd-empty cuda_visible_devices_hides_gpu
  shown torch-cvd-empty torch-cvd-shown ""
  judge torch-cvd-shown cuda_visible_devices_hides_gpu
  run torch-healthy -- "$PYT" -c "import torch; x=torch.randn(4096,4096,device='cuda'); print((x@x).sum().item(), torch.cuda.get_device_name())"
  judge torch-healthy -
fi
if [ -n "$PYC" ]; then
  run cupy-cvd-empty CUDA_VISIBLE_DEVICES= -- "$PYC" -c "import cupy; cupy.zeros(1)"
  judge cupy-cvd-empty cuda_visible_devices_hides_gpu
  shown cupy-cvd-empty cupy-cvd-shown ""
  judge cupy-cvd-shown cuda_visible_devices_hides_gpu
fi
if [ -n "$PYJ" ]; then
  run jax-cvd-minus1 JAX_PLATFORMS=cuda CUDA_VISIBLE_DEVICES=-1 -- "$PYJ" -c "import jax; print(jax.devices())"
  judge jax-cvd-minus1 cuda_visible_devices_hides_gpu
  shown jax-cvd-minus1 jax-cvd-shown -1
  judge jax-cvd-shown cuda_visible_devices_hides_gpu
  run jax-healthy -- "$PYJ" -c "import jax, jax.numpy as jnp; x=jnp.ones((4096,4096)); print(jax.devices(), (x@x).sum())"
  judge jax-healthy -
fi
# The job's own memory: no other process holds any.
if [ -n "$PYT" ]; then
  run torch-oom-huge -- "$PYT" -c "import torch; f,t=torch.cuda.mem_get_info(); x=torch.empty(2*t, dtype=torch.uint8, device='cuda')"
  judge torch-oom-huge gpu_out_of_memory_own_job
  run torch-oom-own -- "$PYT" -c "
import torch
xs = []
while True:
    xs.append(torch.empty(4 << 30, dtype=torch.uint8, device='cuda'))"
  judge torch-oom-own gpu_out_of_memory_own_job
  run torch-ordinal -- "$PYT" -c "import torch; print(torch.cuda.device_count()); torch.zeros(1, device='cuda:7')"
  judge torch-ordinal gpu_index_out_of_range
fi
if [ -n "$PYC" ]; then
  run cupy-oom-huge -- "$PYC" -c "import cupy; f,t=cupy.cuda.runtime.memGetInfo(); x=cupy.empty(2*t, dtype=cupy.uint8)"
  judge cupy-oom-huge gpu_out_of_memory_own_job
  run cupy-ordinal -- "$PYC" -c "import cupy; cupy.cuda.Device(7).use(); cupy.zeros(1)"
  judge cupy-ordinal gpu_index_out_of_range
fi
if [ -n "$PYJ" ]; then
  run jax-oom-huge -- "$PYJ" -c "import jax, jax.numpy as jnp; print(jnp.ones((1<<36,), dtype=jnp.float32).sum())"
  judge jax-oom-huge gpu_out_of_memory_own_job
fi
run tf-missing -- "$PY" -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"
judge tf-missing tf_not_installed
run smi-healthy -- nvidia-smi
judge smi-healthy -

# Another process holds 85% of the GPU's memory while each framework asks
# for a quarter of it.
if [ -n "$PYT" ]; then
  "$PYT" -c "
import torch, time, os
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(total*0.85), dtype=torch.uint8, device='cuda')
open('$TMP/ready','w').write(str(os.getpid()))
time.sleep(300)" >"$TMP/holder.log" 2>&1 &
  HOLDER=$!
  for _ in $(seq 1 120); do [ -e "$TMP/ready" ] && break; sleep 0.5; done
  if [ -e "$TMP/ready" ]; then
    run torch-oom-other -- "$PYT" -c "import torch; f,t=torch.cuda.mem_get_info(); x=torch.empty(int(t*0.25), dtype=torch.uint8, device='cuda')"
    judge torch-oom-other gpu_out_of_memory_other_process
    if [ -n "$PYC" ]; then
      run cupy-oom-other -- "$PYC" -c "import cupy; f,t=cupy.cuda.runtime.memGetInfo(); x=cupy.empty(int(t*0.25), dtype=cupy.uint8)"
      judge cupy-oom-other gpu_out_of_memory_other_process
    fi
    if [ -n "$PYJ" ]; then
      run jax-oom-other -- "$PYJ" -c "import jax, jax.numpy as jnp; print(jnp.ones((1<<28,)).sum())"
      judge jax-oom-other gpu_out_of_memory_other_process gpu_memory_preallocation
    fi
  else
    echo "holder did not start:"; cat "$TMP/holder.log"
  fi
  kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null; HOLDER=""
fi
echo "== summary"; cat "$OUT/explain.tsv"
awk -F'\t' 'NR>1 {n++; if ($5=="right") r++} END {printf "right %d of %d\n", r, n}' "$OUT/explain.tsv"
