#!/usr/bin/env bash
# Acceptance of the Prometheus export and doctor fleet (issue 16) on the GPU
# machine: a full run (the ladder included) and a --quick run written with
# -o as node_exporter's textfile collector reads them, the ladder's series
# checked to be there, and doctor fleet over the machine's JSON report.
# Expects the doctor binary at ./.device/doctor; writes under $OUT:
#   full.prom, quick.prom   the expositions (checked with promtool when present)
#   report.json             doctor --quick --format json
#   fleet.txt, fleet.json   doctor fleet over report.json
#   prometheus.log          what was checked, with PASS/FAIL lines
# Every step is bounded with timeout (about 1-4 minutes in all).
set -u
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
DOCTOR=./.device/doctor
LOG="$OUT/prometheus.log"
: >"$LOG"
log() { echo "$*" | tee -a "$LOG"; }
check() { if "$@" >>"$LOG" 2>&1; then log "PASS: $*"; else log "FAIL: $*"; fi; }
[ -x "$DOCTOR" ] || { log "prometheus.sh: $DOCTOR is missing (CGO_ENABLED=1 go build -o .device/doctor ./cmd/doctor)"; exit 1; }
log "== $(date -u +%FT%TZ) $(uname -r)"

timeout 200 "$DOCTOR" --format prometheus -o "$OUT/full.prom"; log "full run: exit $?"
timeout 60 "$DOCTOR" --quick --format prometheus -o "$OUT/quick.prom"; log "quick run: exit $?"
for f in full quick; do
  check test -s "$OUT/$f.prom"
  check grep -q '^doctor_last_run_timestamp_seconds ' "$OUT/$f.prom"
  check grep -q '^doctor_gpu_info{' "$OUT/$f.prom"
  check grep -q '^doctor_driver_info{' "$OUT/$f.prom"
  if command -v promtool >/dev/null; then check promtool check metrics <"$OUT/$f.prom"; else log "promtool not installed: the expositions were checked in CI"; fi
done
# The ladder's figures, only in the full run.
check grep -q '^doctor_ladder_rung_passed{rung="driver"} 1' "$OUT/full.prom"
check grep -q '^doctor_ladder_tflops{dtype="fp32",rung="libraries"' "$OUT/full.prom"
check grep -q '^doctor_ladder_expected_tflops{' "$OUT/full.prom"
grep '^doctor_ladder_\|^doctor_gpu_\|^doctor_status\|^doctor_root_cause' "$OUT/full.prom" >>"$LOG"

timeout 60 "$DOCTOR" --quick --format json -o "$OUT/report.json"; log "json run: exit $?"
timeout 30 "$DOCTOR" fleet "$OUT/report.json" >"$OUT/fleet.txt"; log "fleet: exit $?"
timeout 30 "$DOCTOR" fleet --format json -o "$OUT/fleet.json" "$OUT/report.json"
check grep -q '"total": 1' "$OUT/fleet.json"
cat "$OUT/fleet.txt" >>"$LOG"
grep -c '^PASS' "$LOG" | sed 's/^/passed: /' | tee -a "$LOG"
grep -c '^FAIL' "$LOG" | sed 's/^/failed: /' | tee -a "$LOG"
