#!/usr/bin/env bash
# Acceptance for the causal model (issue 10) on the GPU machine, run from the
# repository root with the binary at ./.device/doctor (built here with
# CGO_ENABLED=1 and carried):
#  1. the healthy run (full, with the ladder) in JSON: root_cause and causes,
#     expected to name what they named before (the recorded H200 snapshot:
#     python.tensorflow tf_not_installed, no other cause);
#  2. the same with CUDA_VISIBLE_DEVICES=-1: root cause
#     env.cuda_visible_devices (cuda_visible_devices_hides_gpu); the rungs
#     that fail because of it are blocked_by it; TensorFlow not installed
#     stays an independent cause;
#  3. doctor verify passes (exit 0) on the GPU; with --timeout 2s the ladder
#     is cut short: no rung reads as a hang, nothing left running;
#  4. timings of each run.
# Writes $OUT/causal-summary.txt and the JSON reports.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
D=$PWD/.device/doctor
SUM=$OUT/causal-summary.txt
: >"$SUM"
PY=$(command -v python3 || true)
say() { echo "$*" | tee -a "$SUM"; }
fails=0
verdict() { # name, ok(0/1), detail
  if [ "$2" = 0 ]; then say "PASS $1${3:+: $3}"; else say "FAIL $1${3:+: $3}"; fails=$((fails + 1)); fi
}
if [ ! -x "$D" ]; then say "FAIL: no doctor binary at $D"; exit 1; fi
if [ -z "$PY" ]; then say "FAIL: python3 is needed to read the JSON reports"; exit 1; fi
unset CUDA_VISIBLE_DEVICES
pyflag=(--python "$PY")

# summary FILE: one line per cause and per blocked finding.
summary() {
  "$PY" - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rc = r.get("root_cause") or {}
print("root_cause:", rc.get("id"), rc.get("cause"))
for c in r.get("causes", []):
    print("cause:", c["id"], c["cause"], "fix=" + str(c.get("fix")))
for f in r["findings"]:
    if f.get("blocked_by"):
        print("blocked:", f["id"], f["cause"], "by", f["blocked_by"])
for g in (r.get("verification") or {}).get("rungs", []):
    print("rung:", g["name"], g["status"], g.get("cause", ""), "%.0f ms" % g.get("duration_ms", 0), g.get("summary", "")[:100])
EOF
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
field() { "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

# --- 1. healthy run --------------------------------------------------------
s=$(date +%s%N)
timeout 300 "$D" "${pyflag[@]}" --format json >"$OUT/healthy.json" 2>"$OUT/healthy.stderr"; rc=$?
t=$(ms_since "$s")
say "== healthy run: exit $rc, ${t} ms"
summary "$OUT/healthy.json" | tee -a "$SUM"
root=$(field "$OUT/healthy.json" '(r["root_cause"] or {}).get("cause")')
verdict "healthy: root cause as recorded before (tf_not_installed, or none where TensorFlow is installed)" \
  "$([ "$root" = tf_not_installed ] || [ "$root" = None ]; echo $?)" "$root"
ncauses=$(field "$OUT/healthy.json" 'len(r["causes"])')
verdict "healthy: no other independent cause" "$([ "${ncauses:-9}" -le 1 ]; echo $?)" "$ncauses causes"

# --- 2. CUDA_VISIBLE_DEVICES=-1 --------------------------------------------
s=$(date +%s%N)
CUDA_VISIBLE_DEVICES=-1 timeout 300 "$D" "${pyflag[@]}" --format json >"$OUT/cvd.json" 2>"$OUT/cvd.stderr"; rc=$?
t=$(ms_since "$s")
say "== CUDA_VISIBLE_DEVICES=-1: exit $rc, ${t} ms"
summary "$OUT/cvd.json" | tee -a "$SUM"
root=$(field "$OUT/cvd.json" '(r["root_cause"] or {}).get("id")')
verdict "cvd: root cause env.cuda_visible_devices" "$([ "$root" = env.cuda_visible_devices ]; echo $?)" "$root"
unblocked=$(field "$OUT/cvd.json" '",".join(f["id"] for f in r["findings"] if f["id"].startswith("runtime.") and f["severity"]=="error" and not f.get("blocked_by"))')
verdict "cvd: every failing rung is blocked_by the variable" "$([ -z "$unblocked" ]; echo $?)" "${unblocked:-none unexplained}"
tf=$(field "$OUT/cvd.json" '[c["cause"] for c in r["causes"]]')
say "cvd: causes $tf"

# --- 3. verify, and a run cut short by --timeout ---------------------------
timeout 300 "$D" verify "${pyflag[@]}" --format json >"$OUT/verify.json" 2>"$OUT/verify.stderr"; rc=$?
verdict "verify on the GPU exits 0" "$rc"
s=$(date +%s%N)
timeout 60 "$D" "${pyflag[@]}" --timeout 2s --format json >"$OUT/cut.json" 2>"$OUT/cut.stderr"; rc=$?
t=$(ms_since "$s")
say "== --timeout 2s: exit $rc, ${t} ms"
summary "$OUT/cut.json" | tee -a "$SUM"
verdict "--timeout 2s ends within 4 s" "$([ "$t" -lt 4000 ]; echo $?)" "${t} ms"
hang=$(field "$OUT/cut.json" '",".join(f["id"] for f in r["findings"] if f["cause"]=="driver_unresponsive")')
verdict "--timeout 2s: nothing cut short reads as a hung driver" "$([ -z "$hang" ]; echo $?)" "${hang:-none}"
left=$(pgrep -f "$D verify __rung" || true)
verdict "no rung child left running" "$([ -z "$left" ]; echo $?)" "${left:-none}"
say "stderr of the cut run:"; head -5 "$OUT/cut.stderr" | tee -a "$SUM"

say "== $fails failed"
exit $((fails > 0))
