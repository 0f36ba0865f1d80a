#!/usr/bin/env bash
# Issue 2 acceptance on the GPU machine. Expects ./.device/doctor and
# ./.device/host.test (go test -c ./host) built on the dev machine; writes to $OUT.
set -u
D=./.device/doctor
R=$OUT/foundation.txt
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
{
echo "=== A2: plain doctor (full run) ==="
t=$(date +%s%N); timeout 60 $D; echo "exit=$? wall_ms=$(ms $t)"
echo "=== A2: doctor -v --quick ==="
timeout 60 $D -v --quick --no-color; echo "exit=$?"
timeout 60 $D --quick --format json > $OUT/doctor.json; echo "json exit=$?"
timeout 120 $D snapshot -o $OUT/snapshot.json; echo "snapshot exit=$?"
timeout 30 nvidia-smi -q > $OUT/smi-q.txt 2>&1
timeout 30 nvidia-smi --query-gpu=driver_version,name,memory.total,compute_cap,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,uuid --format=csv
echo "=== A2: fact comparison (doctor JSON vs nvidia-smi -q) ==="
python3 - "$OUT/snapshot.json" "$OUT/smi-q.txt" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1])); q = open(sys.argv[2]).read()
def smi(label):
    m = re.search(r"^\s*" + re.escape(label) + r"\s*:\s*(.+)$", q, re.M)
    return m.group(1).strip() if m else "?"
n = s["nvml"]; g = n["gpus"][0] if n.get("gpus") else {}
rows = [("driver", n.get("driver_version"), smi("Driver Version")),
        ("cuda", "%d.%d" % (n.get("cuda_driver_version", 0)//1000, n.get("cuda_driver_version", 0)%1000//10), smi("CUDA Version")),
        ("name", g.get("name"), smi("Product Name")),
        ("memory MiB", g.get("memory_total_mib"), smi("Total").split()[0]),
        ("uuid", g.get("uuid"), smi("GPU UUID")),
        ("compute mode", g.get("compute_mode"), smi("Compute Mode")),
        ("pcie gen cur/max", "%s/%s" % (g.get("pcie", {}).get("current_gen"), g.get("pcie", {}).get("max_gen")), smi("Current") + "/" + smi("Max")),
        ("persistence", g.get("persistence"), smi("Persistence Mode")),
        ("compute capability", g.get("compute_capability"), "(not in -q; see --query-gpu compute_cap above)")]
for k, a, b in rows:
    print("%-20s doctor=%-45s nvidia-smi=%s" % (k, a, b))
print("pcie:", g.get("pcie"), "throttle:", g.get("throttle_reasons"), "ecc:", g.get("ecc"))
print("unsupported:", n.get("unsupported"))
print("collectors:", {k: v.get("duration_ms") for k, v in s["collectors"].items()})
PY
echo "=== A3: CUDA_VISIBLE_DEVICES=-1 ==="
CUDA_VISIBLE_DEVICES=-1 timeout 60 $D --quick --format json | python3 -c 'import json,sys; r=json.load(sys.stdin); print("status", r["status"], "root_cause", r["root_cause"])'
CUDA_VISIBLE_DEVICES=-1 timeout 60 $D --quick --no-color | head -4
echo "=== A3: another process holding 20 GiB ==="
python3 -c 'import torch,time,sys; x=torch.empty(20*2**30,dtype=torch.uint8,device="cuda"); x.fill_(1); torch.cuda.synchronize(); print("ready",flush=True); time.sleep(90)' > /tmp/holder.out 2>&1 &
HP=$!
for i in $(seq 1 60); do grep -q ready /tmp/holder.out && break; sleep 0.5; done
echo "holder pid=$HP: $(cat /tmp/holder.out | tail -1)"
timeout 60 $D --quick --format json | python3 -c '
import json,sys; r=json.load(sys.stdin); print("status", r["status"], "root_cause", r["root_cause"])
for f in r["findings"]:
    if f["cause"]=="gpu_out_of_memory_other_process" or f["id"].startswith("env.gpu_memory"): print(f["severity"], f["title"]); print(json.dumps(f["evidence"]))'
timeout 60 $D --quick --no-color | head -3
kill $HP; wait $HP 2>/dev/null
echo "=== A4: nvidia-smi that never returns, first on PATH ==="
mkdir -p /tmp/hang && printf '#!/bin/sh\nsleep 3599.5 &\nsleep 3599.5\n' > /tmp/hang/nvidia-smi && chmod +x /tmp/hang/nvidia-smi
t=$(date +%s%N); PATH=/tmp/hang:$PATH timeout 60 $D --quick --no-color; echo "exit=$? wall_ms=$(ms $t)"
sleep 0.3; echo "left behind: $(pgrep -fa 'sleep 3599.5' | wc -l)"
echo "=== A5: timings (ms) ==="
for i in $(seq 1 21); do t=$(date +%s%N); $D --quick >/dev/null 2>&1; ms $t; done > /tmp/q.txt
echo "doctor --quick: median $(med < /tmp/q.txt) min $(sort -n /tmp/q.txt | head -1) max $(sort -n /tmp/q.txt | tail -1) (21 runs)"
for i in $(seq 1 5); do t=$(date +%s%N); nvidia-smi -q >/dev/null 2>&1; ms $t; done > /tmp/s.txt
echo "nvidia-smi -q: median $(med < /tmp/s.txt) (5 runs)"
for i in $(seq 1 3); do t=$(date +%s%N); timeout 120 python3 -m torch.utils.collect_env >/dev/null 2>&1; ms $t; done > /tmp/c.txt
echo "python3 -m torch.utils.collect_env: median $(med < /tmp/c.txt) (3 runs)"
echo "=== A5: benchmarks ==="
[ -x ./.device/host.test ] && (cd host && timeout 120 ../.device/host.test -test.run xxx -test.bench . -test.benchtime 20x)
} > $R 2>&1
cat $R
