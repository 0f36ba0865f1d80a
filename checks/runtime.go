package checks

import (
	"fmt"
	"strings"

	"github.com/tfdoctor/doctor/host"
)

// Runtime checks turn the verification ladder (Snapshot.Verification) into
// findings. The ladder itself runs in package verify; these only read its
// result, so a saved snapshot replays them.

var rungCauses = []string{
	"driver_missing", "wsl_libcuda_not_found", "cuda_visible_devices_hides_gpu", "cuinit_unknown_error",
	"driver_too_old_for_cuda", "driver_library_mismatch", "ld_library_path_pollution", "gpu_out_of_memory_other_process",
	"compute_mode_prohibited", "gpu_ecc_errors", "unsupported_compute_capability", "device_node_permission",
	"driver_unresponsive", "gpu_compute_failed", "container_runtime_no_gpu", "gpu_hardware_xid_error",
}

// VerifyDriver is rung 1: a kernel compiled by the driver, run and checked.
var VerifyDriver = &Check{
	ID:       "runtime.driver_compute",
	Link:     LinkRuntime,
	Title:    "GPU computes through the driver",
	Causes:   rungCauses,
	Requires: []string{"ladder", "driver.nvml", "kernel.nvidia_uvm", "driver.device_nodes", "hardware.ecc", "env.cuda_visible_devices", "env.compute_mode", "env.mig", "env.gpu_memory"},
	Doc: `doctor loads libcuda.so.1 itself (no CUDA toolkit, no Python), initialises
CUDA, has the driver compile a small PTX kernel, runs it on GPU 0 over 2^20
elements and checks every element. A failure here is below every library and
framework: the CUDA error of the failing call names the cause (no device,
CUDA_VISIBLE_DEVICES, cuInit unknown error, driver/library mismatch, a driver
too old, out of memory, ...). It runs in a child process under a deadline: a
hang is reported as driver_unresponsive, never waited for.`,
	Run: rungCheck(host.RungDriver, "GPU compute through the driver failed: "),
}

// VerifyLibraries is rung 2: GEMMs through cuBLAS, checked and timed.
var VerifyLibraries = &Check{
	ID:       "runtime.cublas_gemm",
	Link:     LinkRuntime,
	Title:    "cuBLAS GEMM on the GPU",
	Causes:   append([]string{"libcublas_missing"}, rungCauses...),
	Requires: []string{"ladder", "runtime.driver_compute", "libs.cuda_libraries", "libs.cuda_major", "libs.driver_cuda", "libs.ld_library_path"},
	Doc: `doctor loads the libcublas that TensorFlow would load and multiplies
8192×8192 matrices generated on the GPU in float32 and, on compute capability
8.0 and newer, TF32 and bfloat16. Each product is timed with CUDA events after
warm-up (median of the runs) and checked against a float64 CPU reference on
sampled entries. It proves the CUDA libraries work with this driver and GPU,
and gives the speed next to what the GPU model should reach.`,
	Run: rungCheck(host.RungLibraries, "cuBLAS GEMM failed: "),
}

// VerifyFramework is rung 3: a matmul through TensorFlow (or a fallback
// framework) in the examined Python.
var VerifyFramework = &Check{
	ID:    "runtime.framework_matmul",
	Link:  LinkRuntime,
	Title: "Framework matmul on GPU:0",
	Causes: append([]string{"tf_not_installed", "tf_cpu_only_build_installed", "framework_import_failed", "libcudart_missing",
		"libcublas_missing", "libcudnn_missing", "libcufft_missing", "libcusparse_missing", "libcusolver_missing",
		"xla_ptxas_or_libdevice_missing"}, rungCauses...),
	Requires: []string{"ladder", "runtime.cublas_gemm", "python.environment", "python.tensorflow", "python.tf_conflict", "python.compute_capability", "libs.cudnn_version", "libs.xla", "libs.conda_files"},
	// The import is the probe's first step, before any CUDA call: a
	// framework whose import fails (a NumPy ABI mismatch, a jax/jaxlib
	// skew, an illegal CPU instruction, a DLL of its own) fails the same
	// with a working driver, and fixing the driver does not fix it.
	CauseRequires: map[string][]string{
		"framework_import_failed": {"python.environment", "python.tensorflow", "python.tf_conflict"},
	},
	Doc: `doctor runs the examined Python with a probe: import TensorFlow, read its
build info, list_physical_devices('GPU'), run a matmul placed on /GPU:0,
confirm the placement, check the result and time it (warm-up, the result
fetched to force completion, median of several runs). Without TensorFlow the
same probe runs through PyTorch, JAX or CuPy, whichever is installed, and the
report says so. The framework's stderr is kept for the log signatures of
doctor explain and shown with -v.`,
	Run: rungCheck(host.RungFramework, ""),
}

// VerifyLadder is the ladder's verdict as a whole: "no problem" needs
// evidence of health, so a ladder none of whose rungs could run (no
// framework, no cgo, every rung cut short by --timeout) is not a pass.
var VerifyLadder = &Check{
	ID:       "runtime.verified",
	Link:     LinkRuntime,
	Title:    "GPU work verified",
	Causes:   []string{"check_incomplete"},
	Requires: []string{"ladder"},
	Doc: `The ladder proves the GPU works only through a rung that ran and passed. When
every rung that was asked for was skipped (no framework installed for the
framework rung alone, doctor built without cgo, or the run's --timeout ran
out first), nothing was proved: this check says the GPU was not verified,
and doctor verify exits 1, instead of reporting no problem.`,
	Run: func(p *Pass) {
		v := p.Snap.Verification
		var passed, failed int
		var why []string
		for _, r := range v.Rungs {
			switch r.Status {
			case host.RungPass:
				passed++
			case host.RungFail:
				failed++
			default:
				why = append(why, r.Name+": "+r.Summary)
			}
		}
		switch {
		case failed > 0:
			p.Skip("a rung failed (see its finding)")
		case passed > 0:
			p.OK(fmt.Sprintf("%s passed", plural(passed, "rung", "rungs")))
		default:
			detail := "No rung of the ladder ran to a result, so nothing shows that the GPU computes."
			if len(why) > 0 {
				detail += " " + strings.Join(why, "; ") + "."
			}
			p.Warn("check_incomplete", "The GPU was not verified: no rung of the ladder could run", detail,
				Ev{"rungs": len(v.Rungs)})
		}
	},
}

// Verified reports whether a ladder proved the GPU works: a rung passed and
// none failed.
func Verified(v *host.Verification) bool {
	if v == nil {
		return false
	}
	passed := false
	for _, r := range v.Rungs {
		switch r.Status {
		case host.RungFail:
			return false
		case host.RungPass:
			passed = true
		}
	}
	return passed
}

func rungCheck(name, failPrefix string) func(*Pass) {
	return func(p *Pass) {
		v := p.Snap.Verification
		if v == nil {
			p.Skip("the runtime ladder did not run (--quick, --root, or a snapshot saved without it)")
			return
		}
		r := v.Rung(name)
		if r == nil {
			p.Skip("this rung was not run")
			return
		}
		ev := rungEvidence(r)
		switch r.Status {
		case host.RungPass:
			if r.Framework != "" && r.Framework != "tensorflow" && strings.HasPrefix(r.Summary, "TensorFlow not installed") {
				// The stack works; TensorFlow itself was not tried.
				p.Info("tf_not_installed", r.Summary, "", ev)
				return
			}
			p.OKf(r.Summary, ev)
		case host.RungSkip:
			if r.Cause != "" && r.Cause != "healthy" {
				p.Info(r.Cause, r.Summary, "", ev)
				return
			}
			p.Skip(r.Summary)
		default:
			cause := refineRungCause(p.Snap, r)
			title := failPrefix + r.Summary
			if cause != r.Cause {
				ev["ladder_cause"] = r.Cause
			}
			p.Error(cause, title, rungDetail(r), ev, rungFixes(p.Snap, cause)...)
		}
	}
}

// rungEvidence is what a rung's finding carries: enough to see what ran and
// how it ended, without the whole stderr (the verification section has it).
func rungEvidence(r *host.Rung) Ev {
	ev := Ev{"duration_ms": r.DurationMS}
	put := func(k, v string) {
		if v != "" {
			ev[k] = v
		}
	}
	put("api", r.API)
	put("code", r.Code)
	put("error", r.Error)
	put("library", r.Library)
	put("framework", r.Framework)
	put("framework_version", r.FrameworkVersion)
	put("python", r.Python)
	if r.TimedOut {
		ev["timed_out"] = true
	}
	if r.Device != nil {
		ev["device"] = r.Device.Name
		put("compute_capability", r.Device.ComputeCapability)
	}
	if len(r.Figures) > 0 {
		var figs []string
		for _, f := range r.Figures {
			figs = append(figs, figureLine(f))
		}
		ev["figures"] = figs
	}
	return ev
}

// figureLine is "bf16 8192³: 771 TFLOP/s of 989 expected, median 1.43 ms over 10 runs, 128 entries checked".
func figureLine(f host.Figure) string {
	s := fmt.Sprintf("%s %d³: %s TFLOP/s", f.DType, f.M, host.FormatTFLOPS(f.TFLOPS))
	if f.ExpectedTFLOPS > 0 {
		s += fmt.Sprintf(" of %s expected", host.FormatTFLOPS(f.ExpectedTFLOPS))
	}
	s += fmt.Sprintf(", median %.3g ms over %d runs (%s)", f.MedianMS, f.Runs, f.Timing)
	if f.Correct {
		s += fmt.Sprintf(", %d entries checked", f.Checked)
	} else {
		s += fmt.Sprintf(", WRONG: error %.3g > %.0e", f.MaxError, f.Tolerance)
	}
	return s
}

// rungDetail is the failure in words, with the end of the framework's log
// when there is one.
func rungDetail(r *host.Rung) string {
	d := r.Error
	if r.TimedOut {
		d += " The rung ran in a child process that was killed at its deadline; doctor never waits on a hung GPU."
	}
	if tb := r.Facts["traceback"]; tb != "" && r.Stderr == "" {
		d += "\n" + tb
	}
	if r.Stderr != "" {
		d += "\nLast lines of its standard error (doctor -v --format json has all of it):\n" + lastLogLines(r.Stderr, 6)
	}
	return strings.TrimSpace(d)
}

func lastLogLines(s string, n int) string {
	var keep []string
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > 240 {
			l = string(r[:239]) + "…"
		}
		keep = append(keep, "  "+l)
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	return strings.Join(keep, "\n")
}

// genericCauses are what the ladder reports when it cannot tell more; the
// snapshot or explain's log signatures may (the framework rung's stderr is
// read by package rules, an explicit step after the checks).
var genericCauses = map[string]bool{"gpu_compute_failed": true, "framework_import_failed": true}

// GenericRungCause reports whether a rung's cause says no more than that
// the rung failed.
func GenericRungCause(cause string) bool { return genericCauses[cause] }

// RungFixes are the repairs for a rung's cause, as the runtime checks
// attach them.
func RungFixes(s *host.Snapshot, cause string) []Fix {
	fixes := rungFixes(s, cause)
	for i := range fixes {
		fixes[i] = Normalize(fixes[i])
	}
	return fixes
}

// refineRungCause sharpens a rung's cause with what the snapshot knows.
func refineRungCause(s *host.Snapshot, r *host.Rung) string {
	cause := r.Cause
	switch {
	case cause == "driver_missing" && r.API == "dlopen" && isWSL2(s):
		return "wsl_libcuda_not_found"
	case cause == "driver_missing" && s.Platform.Container != "" && !isWSL(s) && len(gpuNodes(s)) == 0:
		return "container_runtime_no_gpu"
	case cause == "gpu_compute_failed" && r.Name != host.RungFramework && len(s.KernelLog.Xids) > 0:
		return "gpu_hardware_xid_error"
	}
	if cause == "" {
		return "gpu_compute_failed"
	}
	return cause
}

// rungFixes are the repairs for a rung's cause. The lower links' checks
// usually report the same cause with the full fix; these cover the case
// where only the ladder saw it.
func rungFixes(s *host.Snapshot, cause string) []Fix {
	switch cause {
	case "cuda_visible_devices_hides_gpu":
		return []Fix{{ID: FixUnsetCUDAVisibleDevices, Title: "Stop hiding the GPU", Risk: RiskSafe,
			Steps: []string{"unset CUDA_VISIBLE_DEVICES   # in this shell", "Remove the line that sets it (doctor --fix finds it in shell rc files, conda env vars and /etc/environment)"}}}
	case "driver_library_mismatch":
		return mismatchFixes()
	case "cuinit_unknown_error":
		return []Fix{uvmFix(s, "If it persists after suspend/resume: reboot")}
	case "driver_missing", "driver_too_old_for_cuda":
		if isWSL(s) {
			return []Fix{windowsDriverFix()}
		}
		return []Fix{{ID: FixInstallDriver, Title: "Install a current NVIDIA driver", Risk: RiskDangerous, NeedsRoot: true, Steps: distroInstallDriver(s)}}
	case "wsl_libcuda_not_found":
		return []Fix{windowsDriverFix()}
	case "container_runtime_no_gpu":
		return []Fix{{ID: FixContainerGPUs, Title: "Start the container with GPU access", Risk: RiskSafe, Manual: true,
			Steps: []string{"docker run --gpus all ... (or -e NVIDIA_VISIBLE_DEVICES=all with the NVIDIA runtime)"}}}
	case "gpu_out_of_memory_other_process", "compute_mode_prohibited":
		return []Fix{{ID: FixUseFreeGPU, Title: "Use a free GPU, or wait for the job", Risk: RiskSafe, Manual: true,
			Steps: []string{"nvidia-smi   # find a GPU with free memory and no process", "export CUDA_VISIBLE_DEVICES=<that index>"}}}
	case "driver_unresponsive", "gpu_hardware_xid_error", "gpu_ecc_errors":
		return []Fix{{ID: FixReboot, Title: "Reboot the machine (doctor never resets a GPU)", Risk: RiskDangerous, Manual: true,
			Steps: []string{"sudo dmesg | grep -i -e xid -e nvrm", "Reboot when the GPU is idle; if it recurs, check power, cooling and seating"}}}
	}
	return nil
}

// VerifySpeed turns a verification figure far under the GPU model's
// expected speed into a finding, with what the GPU state says about why.
var VerifySpeed = &Check{
	ID:       "perf.verify_speed",
	Link:     LinkPerformance,
	Title:    "Verification matmul speed",
	Causes:   []string{"gpu_throttled", "gpu_busy_other_process", "pcie_link_degraded", "gpu_slow_unexplained"},
	Requires: []string{"ladder", "runtime.cublas_gemm", "runtime.framework_matmul"},
	Doc: `Each timed product of the ladder is set against the datasheet dense peak of
the GPU model (a measured GEMM reaches 60-85% of it). A result under half of
it means the GPU is held back: clocks throttled by heat or power, another
process computing on the same GPU, or a degraded PCIe link. The evidence is
the GPU state doctor read right after the ladder.`,
	Run: func(p *Pass) {
		v := p.Snap.Verification
		if v == nil {
			p.Skip("the runtime ladder did not run")
			return
		}
		judged := 0
		for _, r := range v.Rungs {
			for _, f := range r.Figures {
				if f.ExpectedTFLOPS <= 0 {
					continue
				}
				judged++
				ratio := f.TFLOPS / f.ExpectedTFLOPS
				if ratio >= slowRatio {
					continue
				}
				var dev *host.RungDevice
				if r.Device != nil {
					dev = r.Device
				}
				cause, why, ev := slowCause(p.Snap, v, dev)
				ev["figure"] = figureLine(f)
				ev["rung"] = r.Name
				ev["ratio"] = round2(ratio)
				title := fmt.Sprintf("%s %s reached %s TFLOP/s, %.0f%% of the %s expected of this GPU", rungLabel(r.Name), f.DType,
					host.FormatTFLOPS(f.TFLOPS), 100*ratio, host.FormatTFLOPS(f.ExpectedTFLOPS))
				var fixes []Fix
				switch cause {
				case "gpu_throttled":
					fixes = append(fixes, Fix{ID: FixCheckCooling, Title: "Check cooling and power", Risk: RiskSafe, Manual: true,
						Steps: []string{"nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER", "Check fans, airflow and the power cables; clean dust filters"}})
				case "pcie_link_degraded":
					fixes = append(fixes, Fix{ID: FixPCIeReseat, Title: "Check how the GPU is seated", Risk: RiskSafe, Manual: true,
						Steps: []string{"Power off; reseat the GPU in a x16 slot wired for x16", "Check the BIOS PCIe settings for the slot"}})
				case "gpu_busy_other_process":
					fixes = append(fixes, Fix{ID: FixUseFreeGPU, Title: "Use a free GPU, or wait for the other job", Risk: RiskSafe, Manual: true,
						Steps: []string{"nvidia-smi   # see what else runs on the GPU", "export CUDA_VISIBLE_DEVICES=<index of an idle GPU>"}})
				}
				p.Warn(cause, title, why, ev, fixes...).ID = fmt.Sprintf("%s/%s-%s", p.check.ID, r.Name, f.DType)
			}
		}
		switch {
		case len(p.findings) > 0:
		case judged == 0:
			p.Skip("no figure with a known expectation for this GPU model")
		default:
			p.OK(fmt.Sprintf("%s at the expected speed", plural(judged, "timed product", "timed products")))
		}
	},
}

// slowRatio matches verify.SlowRatio (checks cannot import verify).
const slowRatio = 0.5

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

func rungLabel(name string) string {
	switch name {
	case host.RungLibraries:
		return "cuBLAS"
	case host.RungFramework:
		return "The framework matmul in"
	}
	return name
}

// slowCause reads the GPU state (the ladder's Conditions, else the
// snapshot's NVML) for why a product was slow.
func slowCause(s *host.Snapshot, v *host.Verification, dev *host.RungDevice) (string, string, Ev) {
	ev := Ev{}
	nv := s.NVML
	if v.Conditions != nil {
		nv = *v.Conditions
		ev["state"] = "read right after the ladder"
	}
	g, ok := matchGPU(nv.GPUs, dev)
	if !nv.Available || !ok {
		return "gpu_slow_unexplained", "doctor could not read the GPU's state (NVML) to tell why.", ev
	}
	ev["gpu"] = g.Index
	if len(g.ThrottleReasons) > 0 {
		ev["throttle_reasons"] = g.ThrottleReasons
	}
	if g.TemperatureC != nil {
		ev["temperature_c"] = *g.TemperatureC
	}
	if g.Utilization != nil {
		ev["utilization_gpu"] = g.Utilization.GPU
	}
	var serious []string
	for _, r := range g.ThrottleReasons {
		if d, ok := seriousThrottle[r]; ok {
			serious = append(serious, d)
		}
	}
	if len(serious) > 0 {
		return "gpu_throttled", "The GPU's clocks are held down: " + strings.Join(serious, "; ") + ".", ev
	}
	own := map[int]bool{}
	for _, r := range v.Rungs {
		if r.PID > 0 {
			own[r.PID] = true
		}
	}
	var others []string
	for _, pr := range g.Processes {
		if pr.Self || own[pr.PID] {
			continue
		}
		others = append(others, fmt.Sprintf("PID %d (%s, %s)", pr.PID, orUnknown(pr.User), shortCmd(pr.Command)))
	}
	if len(others) > 0 {
		ev["other_processes"] = others
		return "gpu_busy_other_process", "Other processes compute on the same GPU: " + strings.Join(others, ", ") + ".", ev
	}
	if l := g.PCIe; l != nil && l.CurrentWidth > 0 && l.CurrentWidth < l.MaxWidth {
		ev["pcie"] = fmt.Sprintf("Gen%d x%d of Gen%d x%d", l.CurrentGen, l.CurrentWidth, l.MaxGen, l.MaxWidth)
		return "pcie_link_degraded", fmt.Sprintf("The GPU's PCIe link runs at x%d of x%d.", l.CurrentWidth, l.MaxWidth), ev
	}
	return "gpu_slow_unexplained", "Neither throttling, other processes nor the PCIe link explain it: a power cap set below the default, a virtualised or shared GPU (vGPU, MIG slice), or a GPU model that differs from its name.", ev
}

// matchGPU finds the NVML GPU the ladder ran on: by PCI bus ID, else the
// only GPU, else GPU 0.
func matchGPU(gpus []host.GPU, dev *host.RungDevice) (host.GPU, bool) {
	if len(gpus) == 0 {
		return host.GPU{}, false
	}
	if dev != nil && dev.PCIBusID != "" {
		want := normBusID(dev.PCIBusID)
		for _, g := range gpus {
			if normBusID(g.PCIBusID) == want {
				return g, true
			}
		}
	}
	for _, g := range gpus {
		if g.Index == 0 {
			return g, true
		}
	}
	return gpus[0], true
}

// normBusID reduces "00000000:18:00.0" and "0000:18:00.0" to "18:00.0" with
// the domain as a number.
func normBusID(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	dom, rest, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	dom = strings.TrimLeft(dom, "0")
	return dom + ":" + rest
}
