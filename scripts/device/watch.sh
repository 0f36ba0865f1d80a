#!/usr/bin/env bash
# Acceptance of `doctor watch` (issue 7) on the GPU machine: three real
# PyTorch jobs, each watched for 15 s while `nvidia-smi dmon` samples the same
# GPU in parallel.
#   busy     a GPU-bound matmul loop                        -> healthy (watch.busy)
#   starved  single-threaded Python preprocessing per step
#            feeding tiny GPU steps                         -> data_pipeline_bottleneck
#   cpuonly  the same kind of work, on the CPU only         -> gpu_not_used
# While the busy job is watched, three `doctor snapshot --quick` runs read
# NVML too: host NVML and watch NVML go through one boundary
# (host.OpenNVML) and neither shuts NVML down under the other.
# Expects the doctor binary at ./.device/doctor; writes under $OUT:
#   watch-<job>.json   the doctor.report/v1 report (stdout of doctor watch)
#   watch.log          dmon output, doctor's live lines, per-second doctor vs
#                      dmon utilisation, job logs, and the summary table
# Every step is bounded with timeout; the whole script takes about 70 s
# (at most about 3 minutes). Without a GPU it still runs and reports what
# failed.
set -u
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
DOCTOR=./.device/doctor
PY=/opt/torch/.venv/bin/python3
[ -x "$PY" ] || PY=python3
LOG="$OUT/watch.log"
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
: >"$LOG"
log() { echo "$*" | tee -a "$LOG"; }

[ -x "$DOCTOR" ] || { log "watch.sh: $DOCTOR is missing (build it with CGO_ENABLED=1 go build -o .device/doctor ./cmd/doctor)"; exit 1; }
log "== $(date -u +%FT%TZ) $(uname -r) python $PY"
timeout 10 nvidia-smi -L >>"$LOG" 2>&1 || log "nvidia-smi -L failed"

# The jobs: each signals readiness (imports done, CUDA context and warm-up
# done) by creating $READY, then runs until killed or 40 s have passed.
cat >"$TMP/busy.py" <<'EOF'
import os, signal, sys, time, torch
x = torch.randn(8192, 8192, device="cuda"); y = torch.randn(8192, 8192, device="cuda")
for _ in range(3): z = x @ y
torch.cuda.synchronize(); open(os.environ["READY"], "w").close()
end, n, t0 = time.time() + 40, 0, time.time()
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
try:
    while time.time() < end:
        for _ in range(8): z = x @ y
        torch.cuda.synchronize(); n += 8
finally:
    print("busy: %d matmuls of 8192x8192 in %.1f s" % (n, time.time() - t0))
EOF
cat >"$TMP/starved.py" <<'EOF'
import os, signal, sys, time, torch
w = torch.randn(4096, 4096, device="cuda")
def preprocess(step):
    # Pure-Python work on one thread (~15 ms), as a tf.data map() without
    # num_parallel_calls; the GPU step after it takes a few ms.
    acc = 0
    for i in range(200_000):
        acc += (i * step) % 7
    return torch.full((256, 4096), float(acc % 3))
torch.cuda.synchronize(); open(os.environ["READY"], "w").close()
end, n, t0 = time.time() + 40, 0, time.time()
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
try:
    while time.time() < end:
        batch = preprocess(n).cuda().repeat(16, 1)
        out = torch.relu(torch.relu(batch @ w) @ w).sum()
        out.item(); n += 1
finally:
    print("starved: %d steps in %.1f s" % (n, time.time() - t0))
EOF
cat >"$TMP/cpuonly.py" <<'EOF'
import os, signal, sys, time
try:
    import torch
    torch.set_num_threads(2)
    x = torch.randn(1024, 1024)
    step = lambda: (x @ x).sum().item()
except ImportError:  # no PyTorch here: plain Python keeps the CPU busy
    step = lambda: sum(i * i for i in range(100_000))
open(os.environ["READY"], "w").close()
end, n, t0 = time.time() + 40, 0, time.time()
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
try:
    while time.time() < end:
        step(); n += 1
finally:
    print("cpuonly: %d steps in %.1f s" % (n, time.time() - t0))
EOF

declare -A VERDICT UTIL DMON SELF COST
for job in busy starved cpuonly; do
  log "== job $job"
  ready="$TMP/$job.ready"
  READY="$ready" OMP_NUM_THREADS=1 timeout 60 "$PY" "$TMP/$job.py" >"$TMP/$job.out" 2>&1 &
  pid=$!
  for _ in $(seq 300); do   # at most 30 s for imports and CUDA start-up
    [ -e "$ready" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ ! -e "$ready" ]; then
    log "job $job did not start:"; tail -5 "$TMP/$job.out" | tee -a "$LOG"
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    VERDICT[$job]="job failed"; continue
  fi
  timeout 30 nvidia-smi dmon -s u -c 15 >"$TMP/$job.dmon" 2>&1 &
  dmon=$!
  if [ "$job" = busy ]; then
    # One NVML boundary (host.OpenNVML): diagnoses read NVML while the
    # watch samples; neither may shut NVML down under the other.
    ( for i in 1 2 3; do sleep 3; timeout 30 "$DOCTOR" snapshot --quick -o "$TMP/snap-during-watch-$i.json" 2>>"$TMP/snaps.err"; done ) &
    snaps=$!
  fi
  timeout 40 "$DOCTOR" watch --pid "$pid" --duration 15s --format json --samples "$TMP/$job.samples.json" \
    >"$OUT/watch-$job.json" 2>"$TMP/$job.stderr"
  rc=$?
  wait "$dmon" 2>/dev/null
  [ "$job" = busy ] && wait "$snaps" 2>/dev/null
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  if [ "$job" = busy ]; then
    NVMLB=$(timeout 20 "$PY" - "$TMP" "$TMP/$job.samples.json" 2>>"$LOG" <<'EOF' || echo "unreadable"
import glob, json, sys
snaps = sorted(glob.glob(sys.argv[1] + "/snap-during-watch-*.json"))
ok = sum(1 for p in snaps if (lambda n: n.get("available") and n.get("gpus"))(json.load(open(p)).get("nvml") or {}))
samples = json.load(open(sys.argv[2]))["samples"]
bad = sum(1 for s in samples for g in (s.get("gpus") or []) if g.get("errors"))
nogpu = sum(1 for s in samples if not s.get("gpus"))
print("snapshots during the watch with NVML available: %d/3; watch samples with GPU errors: %d, without GPUs: %d of %d" % (ok, bad, nogpu, len(samples)))
EOF
    )
    { echo "-- one NVML boundary: $NVMLB"; cat "$TMP/snaps.err" 2>/dev/null; } >>"$LOG"
  fi
  {
    echo "-- doctor watch exit $rc; stderr:"; cat "$TMP/$job.stderr"
    echo "-- nvidia-smi dmon -s u -c 15:"; cat "$TMP/$job.dmon"
    echo "-- job output:"; cat "$TMP/$job.out"
  } >>"$LOG"
  # One line of figures from the report, the samples and dmon.
  read -r v u s c < <(timeout 20 "$PY" - "$OUT/watch-$job.json" "$TMP/$job.samples.json" "$TMP/$job.dmon" 2>>"$LOG" <<'EOF' || echo "unreadable - - -"
import json, sys
rep = json.load(open(sys.argv[1]))
rc = rep.get("root_cause") or {}
summ = next(f for f in rep["findings"] if f["id"] == "watch.summary")
ev = summ["evidence"]
gpus = ev.get("gpus") or []
util = gpus[0]["util_percent"]["mean"] if gpus else "-"
verdict = rc.get("cause") or next((f["cause"] + ":" + f["id"] for f in rep["findings"] if f["id"] != "watch.summary"), "none")
print(verdict, util, ev.get("self_cpu_percent", "-"), ev.get("sample_cost_ms", {}).get("mean", "-"))
# Per second, doctor's GPU util beside dmon's sm column, for the log.
try:
    samples = json.load(open(sys.argv[2]))["samples"]
    mine = [str(s["gpus"][0].get("util", "-")) if s.get("gpus") else "-" for s in samples]
    print("per-second doctor util:", " ".join(mine), file=sys.stderr)  # dmon's line follows
except Exception as e:
    print("no samples:", e, file=sys.stderr)
EOF
  )
  # dmon: "# gpu sm mem ..." headers, then one row per second per GPU.
  d=$(awk '!/^#/ && NF>2 && $2 ~ /^[0-9]+$/ { s+=$2; n++; l=l " " $2 }
    END { print "per-second dmon sm:   " l > "/dev/stderr"; if (n) printf "%.1f", s/n; else printf "-" }' "$TMP/$job.dmon" 2>>"$LOG")
  VERDICT[$job]=$v UTIL[$job]=$u DMON[$job]=$d SELF[$job]=$s COST[$job]=$c
done

{
  echo
  echo "== summary (doctor watch --duration 15s, nvidia-smi dmon -s u -c 15 in the same window)"
  printf '%-8s %-44s %10s %10s %10s %10s\n' job verdict doctor_util dmon_sm self_cpu% ms/sample
  for job in busy starved cpuonly; do
    printf '%-8s %-44s %10s %10s %10s %10s\n' "$job" "${VERDICT[$job]:--}" "${UTIL[$job]:--}" "${DMON[$job]:--}" "${SELF[$job]:--}" "${COST[$job]:--}"
  done
  echo "expected: busy -> healthy (watch.busy); starved -> data_pipeline_bottleneck; cpuonly -> gpu_not_used"
  echo "one NVML boundary (3 doctor snapshots while the busy job was watched): ${NVMLB:-not run}"
  echo "expected: 3/3 available, 0 samples with GPU errors, 0 without GPUs"
} | tee -a "$LOG"
