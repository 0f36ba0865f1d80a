package checks

import (
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/host"
)

func TestRuntimeChecksValid(t *testing.T) {
	if err := Validate([]*Check{VerifyDriver, VerifyLibraries, VerifyFramework, VerifySpeed}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Check{VerifyDriver, VerifyLibraries, VerifyFramework, VerifySpeed} {
		if Lookup(All, c.ID) == nil {
			t.Errorf("%s is not in the registry", c.ID)
		}
	}
}

func passLadder() *host.Verification {
	dev := &host.RungDevice{Name: "NVIDIA H200", ComputeCapability: "9.0", PCIBusID: "0000:18:00.0"}
	return &host.Verification{Rungs: []host.Rung{
		{Name: host.RungDriver, Status: host.RungPass, Summary: "PTX kernel compiled by the driver ran correctly on NVIDIA H200 (cc 9.0)", Device: dev, PID: 101},
		{Name: host.RungLibraries, Status: host.RungPass, Summary: "cuBLAS 13.0.0 8192³: bf16 771 TFLOP/s (of 989)", Device: dev, PID: 102,
			Figures: []host.Figure{{DType: "bf16", M: 8192, N: 8192, K: 8192, TFLOPS: 771, ExpectedTFLOPS: 989, MedianMS: 1.43, Runs: 10, Timing: "cuda_events", Checked: 128, Correct: true}}},
		{Name: host.RungFramework, Status: host.RungPass, Framework: "torch", FrameworkVersion: "2.11.0", PID: 103,
			Summary: "TensorFlow not installed; GPU stack verified with PyTorch 2.11.0: bf16 matmul 8192³ on cuda:0, 740 TFLOP/s (of 989); result checked",
			Device:  &host.RungDevice{Name: "NVIDIA H200", ComputeCapability: "9.0"},
			Figures: []host.Figure{{DType: "bf16", M: 8192, N: 8192, K: 8192, TFLOPS: 740, ExpectedTFLOPS: 989, Runs: 10, Timing: "forced_completion", Checked: 16, Correct: true}}},
	}}
}

func findingsOf(t *testing.T, c *Check, s *host.Snapshot) []Finding {
	t.Helper()
	return Run(c, s)
}

func TestRungChecks(t *testing.T) {
	fail := func(name, cause, api string, mod func(r *host.Rung)) *host.Verification {
		v := passLadder()
		for i := range v.Rungs {
			if v.Rungs[i].Name == name {
				r := &v.Rungs[i]
				r.Status, r.Cause, r.API, r.Summary, r.Error, r.Figures = host.RungFail, cause, api, api+" failed", api+": CUDA_ERROR", nil
				if mod != nil {
					mod(r)
				}
			}
		}
		return v
	}
	cases := []struct {
		name  string
		check *Check
		snap  host.Snapshot
		sev   Severity
		cause string
		fix   string
		title string
	}{
		{"no ladder", VerifyDriver, host.Snapshot{}, SevInfo, "healthy", "", "GPU computes through the driver: not checked"},
		{"driver passes", VerifyDriver, host.Snapshot{Verification: passLadder()}, SevOK, "healthy", "", "PTX kernel compiled by the driver ran correctly on NVIDIA H200"},
		{"libraries pass", VerifyLibraries, host.Snapshot{Verification: passLadder()}, SevOK, "healthy", "", "cuBLAS 13.0.0"},
		{"framework passes without TensorFlow", VerifyFramework, host.Snapshot{Verification: passLadder()}, SevInfo, "tf_not_installed", "", "TensorFlow not installed; GPU stack verified with PyTorch"},
		{"hidden GPU", VerifyDriver, host.Snapshot{Verification: fail(host.RungDriver, "cuda_visible_devices_hides_gpu", "cuInit", nil)}, SevError, "cuda_visible_devices_hides_gpu", FixUnsetCUDAVisibleDevices, "GPU compute through the driver failed: cuInit failed"},
		{"mismatch", VerifyDriver, host.Snapshot{Verification: fail(host.RungDriver, "driver_library_mismatch", "cuInit", nil)}, SevError, "driver_library_mismatch", FixReboot, ""},
		{"no libcuda in WSL 2", VerifyDriver, host.Snapshot{Platform: host.Platform{WSL: host.WSL{Version: 2}}, Verification: fail(host.RungDriver, "driver_missing", "dlopen", nil)}, SevError, "wsl_libcuda_not_found", FixWindowsDriver, ""},
		{"no libcuda in a container", VerifyDriver, host.Snapshot{Platform: host.Platform{Container: "docker"}, Verification: fail(host.RungDriver, "driver_missing", "dlopen", nil)}, SevError, "container_runtime_no_gpu", FixContainerGPUs, ""},
		{"no libcuda", VerifyDriver, host.Snapshot{Platform: host.Platform{DistroID: "ubuntu"}, Verification: fail(host.RungDriver, "driver_missing", "dlopen", nil)}, SevError, "driver_missing", FixInstallDriver, ""},
		{"wrong result with Xids", VerifyLibraries, host.Snapshot{KernelLog: host.KernelLog{Xids: []host.XidEvent{{Code: 79}}}, Verification: fail(host.RungLibraries, "gpu_compute_failed", "cublasGemm", nil)}, SevError, "gpu_hardware_xid_error", FixReboot, "cuBLAS GEMM failed: "},
		{"hang", VerifyDriver, host.Snapshot{Verification: fail(host.RungDriver, "driver_unresponsive", "", func(r *host.Rung) { r.TimedOut = true })}, SevError, "driver_unresponsive", FixReboot, ""},
		{"no cublas", VerifyLibraries, host.Snapshot{Verification: fail(host.RungLibraries, "libcublas_missing", "dlopen", nil)}, SevError, "libcublas_missing", "", ""},
		{"no framework", VerifyFramework, host.Snapshot{Verification: fail(host.RungFramework, "tf_not_installed", "", func(r *host.Rung) {
			r.Status, r.Summary = host.RungSkip, "no framework to probe in /usr/bin/python3: none of TensorFlow, PyTorch, JAX, CuPy is installed"
		})}, SevInfo, "tf_not_installed", "", "no framework to probe"},
		{"no python", VerifyFramework, host.Snapshot{Verification: fail(host.RungFramework, "", "", func(r *host.Rung) {
			r.Status, r.Summary = host.RungSkip, "no Python to probe"
		})}, SevInfo, "healthy", "", "Framework matmul on GPU:0: not checked"},
		{"framework without cause", VerifyFramework, host.Snapshot{Verification: fail(host.RungFramework, "", "stage matmul", nil)}, SevError, "gpu_compute_failed", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := findingsOf(t, c.check, &c.snap)
			if len(fs) != 1 {
				t.Fatalf("want one finding, got %+v", fs)
			}
			f := fs[0]
			if f.Severity != c.sev || f.Cause != c.cause || f.Link != LinkRuntime {
				t.Errorf("got %s %s %s (%q)", f.Severity, f.Cause, f.Link, f.Title)
			}
			if c.title != "" && !strings.HasPrefix(f.Title, c.title) {
				t.Errorf("title %q, want prefix %q", f.Title, c.title)
			}
			if c.fix != "" && (len(f.Fixes) == 0 || f.Fixes[0].ID != c.fix) {
				t.Errorf("fixes %+v, want %s", f.Fixes, c.fix)
			}
			if f.Severity == SevError && (f.Detail == "" || f.Evidence["api"] == nil && f.Evidence["error"] == nil) {
				t.Errorf("a failure needs its error as detail and evidence: %+v", f)
			}
		})
	}
}

func TestVerifySpeed(t *testing.T) {
	slow := func(mod func(v *host.Verification, s *host.Snapshot)) *host.Snapshot {
		v := passLadder()
		v.Rungs[1].Figures[0].TFLOPS = 300
		s := &host.Snapshot{Verification: v, NVML: host.NVML{Available: true, GPUs: []host.GPU{{Index: 0, PCIBusID: "00000000:18:00.0"}}}}
		if mod != nil {
			mod(v, s)
		}
		return s
	}
	temp := 91
	cases := []struct {
		name  string
		snap  *host.Snapshot
		sev   Severity
		cause string
		ev    string // an evidence key that must be there
	}{
		{"fast enough", &host.Snapshot{Verification: passLadder()}, SevOK, "healthy", ""},
		{"no ladder", &host.Snapshot{}, SevInfo, "healthy", ""},
		{"unknown GPU", &host.Snapshot{Verification: &host.Verification{Rungs: []host.Rung{{Name: host.RungLibraries, Figures: []host.Figure{{DType: "bf16", TFLOPS: 1}}}}}}, SevInfo, "healthy", ""},
		{"throttled", slow(func(v *host.Verification, s *host.Snapshot) {
			v.Conditions = &host.NVML{Available: true, GPUs: []host.GPU{{Index: 0, PCIBusID: "00000000:18:00.0", ThrottleReasons: []string{"sw_power_cap", "hw_thermal_slowdown"}, TemperatureC: &temp}}}
		}), SevWarning, "gpu_throttled", "throttle_reasons"},
		{"another process", slow(func(v *host.Verification, s *host.Snapshot) {
			s.NVML.GPUs[0].Processes = []host.GPUProcess{{PID: 102}, {PID: 4242, User: "bob", Command: "python train.py"}, {PID: 7, Self: true}}
		}), SevWarning, "gpu_busy_other_process", "other_processes"},
		{"only doctor's own rungs", slow(func(v *host.Verification, s *host.Snapshot) {
			s.NVML.GPUs[0].Processes = []host.GPUProcess{{PID: 101}, {PID: 102}, {PID: 103}}
		}), SevWarning, "gpu_slow_unexplained", ""},
		{"narrow PCIe link", slow(func(v *host.Verification, s *host.Snapshot) {
			s.NVML.GPUs[0].PCIe = &host.PCIe{CurrentGen: 5, MaxGen: 5, CurrentWidth: 4, MaxWidth: 16}
		}), SevWarning, "pcie_link_degraded", "pcie"},
		{"no NVML", slow(func(v *host.Verification, s *host.Snapshot) { s.NVML = host.NVML{} }), SevWarning, "gpu_slow_unexplained", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Run(VerifySpeed, c.snap)
			if len(fs) != 1 {
				t.Fatalf("want one finding, got %+v", fs)
			}
			f := fs[0]
			if f.Severity != c.sev || f.Cause != c.cause {
				t.Fatalf("got %s %s: %q %q", f.Severity, f.Cause, f.Title, f.Detail)
			}
			if c.ev != "" && f.Evidence[c.ev] == nil {
				t.Errorf("evidence %v lacks %s", f.Evidence, c.ev)
			}
			if f.Severity == SevWarning {
				if f.ID != "perf.verify_speed/libraries-bf16" || !strings.Contains(f.Title, "cuBLAS bf16 reached 300 TFLOP/s, 30% of the 989 expected") {
					t.Errorf("%s %q", f.ID, f.Title)
				}
			}
		})
	}
}

func TestMatchGPU(t *testing.T) {
	gpus := []host.GPU{{Index: 0, PCIBusID: "00000000:17:00.0"}, {Index: 1, PCIBusID: "00000000:18:00.0"}}
	if g, ok := matchGPU(gpus, &host.RungDevice{PCIBusID: "0000:18:00.0"}); !ok || g.Index != 1 {
		t.Errorf("by bus ID: %+v", g)
	}
	if g, ok := matchGPU(gpus, nil); !ok || g.Index != 0 {
		t.Errorf("default: %+v", g)
	}
	if _, ok := matchGPU(nil, nil); ok {
		t.Error("no GPUs")
	}
}
