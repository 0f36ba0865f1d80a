#!/usr/bin/env bash
# Issue 3 (upper links) on the GPU machine: acceptance 1-3.
#   1. the examined environment, TensorFlow's verdict and pin, the CUDA
#      libraries present with the file that wins, the driver verdict;
#   2. doctor's resolution against `ldconfig -p` and against what a process
#      maps after ctypes.CDLL (/proc/self/maps), library by library;
#   3. `doctor --quick` wall time with and without the python collector
#      (DOCTOR_SKIP_COLLECTORS=python), 20 runs each, and the collector's own
#      time, medians.
# Run from the repository root with the binary at ./.device/doctor. Writes
# $OUT/{summary.txt,report.json,report.txt,snapshot.json,compare.txt,timing.txt}.
set -u
OUT=${OUT:-/tmp/doctor-upper}
mkdir -p "$OUT"
D=./.device/doctor
# UPPER_DOCTOR_ARGS adds flags to every doctor run (e.g. --python PATH, to
# try the script on a machine whose python3 is not the environment to test).
read -r -a XA <<<"${UPPER_DOCTOR_ARGS:-}"
S=$OUT/summary.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }

PY=$(command -v python3 || true)
[ -x "$D" ] || { say "upper.sh: no doctor binary at $D (build it with CGO_ENABLED=1 go build -o .device/doctor ./cmd/doctor)"; exit 1; }
[ -n "$PY" ] || { say "upper.sh: python3 not found; only the reports are written"; }

timeout 60 "$D" --quick --format json "${XA[@]}" >"$OUT/report.json" 2>"$OUT/report.stderr"
say "doctor --quick --format json: exit $? ($(wc -c <"$OUT/report.json") bytes)"
timeout 60 "$D" --quick -v --no-color "${XA[@]}" >"$OUT/report.txt" 2>&1
say "doctor --quick -v: exit $?"
timeout 60 "$D" snapshot --quick -o "$OUT/snapshot.json" "${XA[@]}" 2>>"$OUT/report.stderr"
say "doctor snapshot --quick: exit $?"
[ -n "$PY" ] || exit 0

# Acceptance 1 and 2.
timeout 150 "$PY" - "$OUT" "$D" <<'PYEOF' 2>&1 | tee -a "$S"
import json, os, subprocess, sys, time
out, doctor = sys.argv[1], sys.argv[2]
try:
    snap = json.load(open(os.path.join(out, "snapshot.json")))
    rep = json.load(open(os.path.join(out, "report.json")))
except Exception as e:
    print("cannot read doctor's output:", e); sys.exit(0)
py, libs = snap.get("python") or {}, snap.get("libraries") or {}
print("== Acceptance 1: the examined environment and the verdicts")
print("python: %s (real %s), Python %s from %s, %s %s, chosen by %s" % (py.get("executable"), py.get("real_executable"), py.get("version"), py.get("version_from"), py.get("kind"), py.get("prefix"), py.get("source")))
print("python collector: %.1f ms; steps %s" % (snap.get("collectors", {}).get("python", {}).get("duration_ms", -1), json.dumps(libs.get("timings_ms", {}))))
rc = rep.get("root_cause") or {}
print("root cause: %s [%s] fix %s" % (rc.get("title"), rc.get("cause"), rc.get("fix")))
for f in rep.get("findings", []):
    if f["id"] in ("python.environment", "python.tensorflow", "libs.driver_cuda", "libs.toolkit") or f["id"].startswith("libs.cuda_libraries"):
        print("  [%s] %s: %s" % (f["severity"], f["id"], f["title"]))
        for x in f.get("fixes") or []:
            for st in x.get("steps", []):
                print("        $ " + st)
        if f["id"] == "libs.cuda_libraries/present":
            for line in (f.get("evidence") or {}).get("present") or []:
                print("        " + line)

print("\n== Acceptance 2: doctor's resolution against ldconfig -p and the loader")
# The search path doctor modelled: rpath entries (only when the caller has
# no RUNPATH), LD_LIBRARY_PATH, the caller's RUNPATH. The loader takes
# LD_LIBRARY_PATH before RUNPATH, so LD_LIBRARY_PATH=<rpath>:<ld path>:<runpath>
# in a fresh process reproduces TensorFlow's dlopen exactly.
sp = libs.get("search_path") or []
rpath = [d["dir"] for d in sp if d["from"] == "rpath" and d.get("exists")]
runpath = [d["dir"] for d in sp if d["from"] == "runpath" and d.get("exists")]
orig = os.environ.get("LD_LIBRARY_PATH", "")
emul = ":".join([p for p in rpath + ([orig] if orig else []) + runpath if p])
ldp = {}
try:
    for line in subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=20).stdout.splitlines():
        if "=>" not in line or not line.startswith("\t"):
            continue
        name, rest = line.strip().split(" (", 1)
        arch, path = rest.split(") => ", 1)
        if "x86-64" in arch or "AArch64" in arch or arch == "libc6":
            ldp.setdefault(name, path.strip())
except Exception as e:
    print("ldconfig -p failed:", e)
probe = r'''
import ctypes, os, sys
name = sys.argv[1]
try:
    ctypes.CDLL(name)
except OSError as e:
    print("-", str(e).split(":")[-1].strip()[:60]); sys.exit(0)
base = name.split(".so")[0] + ".so"
hits = []
for line in open("/proc/self/maps"):
    p = line.split(None, 5)[-1].strip() if len(line.split(None, 5)) == 6 else ""
    if p.startswith("/") and os.path.basename(p).startswith(base) and p not in hits:
        hits.append(p)
print(hits[0] if hits else "?")
'''
def mapped(name, env_path):
    env = dict(os.environ)
    if env_path is None:
        env.pop("LD_LIBRARY_PATH", None)
        if orig:
            env["LD_LIBRARY_PATH"] = orig
    else:
        env["LD_LIBRARY_PATH"] = env_path
    try:
        r = subprocess.run([sys.executable, "-I", "-c", probe, name], capture_output=True, text=True, timeout=20, env=env)
        return (r.stdout.strip() or r.stderr.strip()[:60] or "?")
    except Exception as e:
        return "error: %s" % e
rows, agree, total = [], 0, 0
libsall = (libs.get("needed") or []) + (libs.get("present") or [])
for l in sorted(libsall, key=lambda x: x["soname"]):
    offp = l.get("off_path") or []
    if not l.get("found") and not offp:
        continue
    name = l["soname"]
    doc = l.get("real_path") or "-"
    via = l.get("via") or ("off path" if offp else "-")
    real = mapped(name, emul)
    plain = mapped(name, None)
    cache = ldp.get(name, "-")
    cache_real = os.path.realpath(cache) if cache != "-" else "-"
    ok = (real == doc) or (doc == "-" and real.startswith("-"))
    cache_ok = (l.get("via") != "ld.so.cache") or cache_real == doc
    total += 1
    agree += ok and cache_ok
    rows.append((name, doc, via, cache, real, plain, "yes" if ok and cache_ok else "NO"))
with open(os.path.join(out, "compare.txt"), "w") as f:
    f.write("LD_LIBRARY_PATH used to reproduce TensorFlow's search: %s\n" % emul)
    f.write("columns: soname | doctor's winner (real path) | doctor via | ldconfig -p first entry | mapped by ctypes.CDLL with TF's search path | mapped by a plain ctypes.CDLL | agree\n")
    for r in rows:
        f.write(" | ".join(r) + "\n")
for r in rows:
    print("%-26s %-8s agree=%-3s doctor=%s" % (r[0], r[2][:8], r[6], r[1]))
    if r[6] != "yes" or r[3] != "-" or r[5] != r[4]:
        print("%26s ldconfig=%s mapped=%s plain=%s" % ("", r[3], r[4], r[5]))
print("resolution agrees with the loader for %d of %d libraries (table: compare.txt)" % (agree, total))
PYEOF

# Acceptance 3: whole-process time with and without the python collector,
# alternating so that drift hits both alike.
timeout 200 "$PY" - "$OUT" "$D" "${XA[@]}" <<'PYEOF' 2>&1 | tee -a "$S"
import json, os, statistics, subprocess, sys, time
out, doctor, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = {"with": [], "without": []}
coll, steps = [], {}
deadline = time.time() + 180
for i in range(20):
    for mode in ("with", "without"):
        if time.time() > deadline:
            break
        env = dict(os.environ)
        env.pop("DOCTOR_SKIP_COLLECTORS", None)
        if mode == "without":
            env["DOCTOR_SKIP_COLLECTORS"] = "python"
        t = time.perf_counter()
        r = subprocess.run([doctor, "--quick", "--format", "json"] + extra, capture_output=True, env=env, timeout=60)
        runs[mode].append((time.perf_counter() - t) * 1000)
        if mode == "with":
            try:
                rep = json.loads(r.stdout)
                coll.append(rep["timings_ms"]["python"])
            except Exception:
                pass
med = {k: statistics.median(v) for k, v in runs.items() if v}
with open(os.path.join(out, "timing.txt"), "w") as f:
    for k, v in runs.items():
        f.write("%s: %s\n" % (k, " ".join("%.1f" % x for x in v)))
    f.write("python collector ms: %s\n" % " ".join("%.1f" % x for x in coll))
print("\n== Acceptance 3: doctor --quick wall time, %d+%d runs" % (len(runs["with"]), len(runs["without"])))
if len(med) == 2:
    print("median with python collector %.1f ms, without %.1f ms: the environment analysis adds %.1f ms (limit 50)" % (med["with"], med["without"], med["with"] - med["without"]))
if coll:
    print("python collector's own time (runs concurrently with the others): median %.1f ms, max %.1f ms" % (statistics.median(coll), max(coll)))
PYEOF
say "upper.sh: done; files in $OUT"
