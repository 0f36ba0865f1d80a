#!/usr/bin/env bash
# doctor explain's speed on a quiet machine (issue 15: 1 MB in at most
# 100 ms, 50 MB in at most 2 s, bounded memory). The development machine
# has 2 cores shared by several builds, so its timings wander; the GPU
# machine's CPUs are idle. Expects ./.device/rules.test (go test -c -o
# .device/rules.test ./rules); writes $OUT/bench.txt.
set -u
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
T=$PWD/.device/rules.test
[ -x "$T" ] || { echo "bench.sh: $T is missing"; exit 1; }
nproc; grep -m1 'model name' /proc/cpuinfo
cd rules && "$T" -test.run '^$' -test.bench 'Explain' -test.benchtime 10x -test.count 3 -test.benchmem 2>&1 | tee "$OUT/bench.txt"
