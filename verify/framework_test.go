package verify

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/testenv"
)

func needPython(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 is needed")
	}
	return p
}

// CI compiles the probe: the TensorFlow branch cannot run on doctor's own
// machines, so a syntax error there would otherwise reach users first.
func TestProbeScriptCompiles(t *testing.T) {
	py := needPython(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.py")
	if err := os.WriteFile(src, []byte(ProbeScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-m", "py_compile", src).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m py_compile probe.py: %v\n%s", err, out)
	}
}

// pythonPath makes a folder holding only the named fake frameworks of
// testdata/fakepy.
func pythonPath(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		abs, err := filepath.Abs(filepath.Join("testdata", "fakepy", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The framework rung end to end: the real probe in the real python3, on
// fake frameworks (testdata/fakepy) that compute on the CPU.
func TestFrameworkRung(t *testing.T) {
	t.Parallel()
	needPython(t)
	cases := []struct {
		name       string
		frameworks []string
		env        []string
		status     host.RungStatus
		cause      string
		framework  string
		summary    string
	}{
		{"tensorflow", []string{"tensorflow", "torch"}, nil, host.RungPass, "", "tensorflow",
			"TensorFlow 2.99.0 computes on the GPU: bf16 matmul 16³ on /job:localhost/replica:0/task:0/device:GPU:0"},
		{"tensorflow lists no GPU", []string{"tensorflow"}, []string{"FAKETF_NO_GPU=1"}, host.RungFail, "gpu_compute_failed", "tensorflow",
			"TensorFlow 2.99.0 does not see the GPU"},
		{"tensorflow hidden by CUDA_VISIBLE_DEVICES", []string{"tensorflow"}, []string{"FAKETF_NO_GPU=1", "CUDA_VISIBLE_DEVICES=-1"}, host.RungFail, "cuda_visible_devices_hides_gpu", "tensorflow", ""},
		{"tensorflow CPU-only build", []string{"tensorflow"}, []string{"FAKETF_CPU_BUILD=1"}, host.RungFail, "tf_cpu_only_build_installed", "tensorflow", ""},
		{"tensorflow places the matmul on the CPU", []string{"tensorflow"}, []string{"FAKETF_CPU_PLACE=1"}, host.RungFail, "gpu_compute_failed", "tensorflow", ""},
		{"pytorch without tensorflow", []string{"torch"}, nil, host.RungPass, "", "torch",
			"TensorFlow not installed; GPU stack verified with PyTorch 2.99.0+fake: bf16 matmul 16³ on cuda:0"},
		{"pytorch sees no GPU", []string{"torch"}, []string{"FAKETORCH_NO_GPU=1", "FAKETORCH_STDERR=UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment"},
			host.RungFail, "cuinit_unknown_error", "torch", "TensorFlow not installed; PyTorch 2.99.0+fake does not see the GPU"},
		{"pytorch wrong result", []string{"torch"}, []string{"FAKETORCH_WRONG=1"}, host.RungFail, "gpu_compute_failed", "torch", ""},
		{"pytorch out of memory", []string{"torch"}, []string{"FAKETORCH_RAISE=CUDA out of memory. Tried to allocate 128.00 MiB"}, host.RungFail, "gpu_out_of_memory_other_process", "torch", ""},
		{"nothing installed", nil, nil, host.RungSkip, "tf_not_installed", "", "none of TensorFlow, PyTorch, JAX, CuPy is installed in "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := Options{Size: 16, Runs: 3, Rungs: []string{host.RungFramework}, FrameworkTimeout: time.Minute,
				Environ: append(baseEnv(), append([]string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH=" + pythonPath(t, c.frameworks...)}, c.env...)...)}
			r := rung(t, runLadder(t, o), host.RungFramework)
			if r.Status != c.status || r.Cause != c.cause || r.Framework != c.framework {
				t.Fatalf("got %s %s %s (error %q, stderr %q)", r.Status, r.Cause, r.Framework, r.Error, r.Stderr)
			}
			if !strings.HasPrefix(r.Summary, c.summary) {
				t.Errorf("summary %q, want it to start with %q", r.Summary, c.summary)
			}
			if r.Python == "" || r.PID == 0 {
				t.Errorf("python %q pid %d", r.Python, r.PID)
			}
			if c.status == host.RungPass {
				if len(r.Figures) != 1 {
					t.Fatalf("figures: %+v", r.Figures)
				}
				f := r.Figures[0]
				if f.DType != "bf16" || !f.Correct || f.Checked != 16 || f.Runs != 3 || f.ExpectedTFLOPS != 989 || f.Timing != "forced_completion" || f.PerSample < 1 {
					t.Errorf("figure %+v", f)
				}
				if r.Device == nil || r.Device.Name != "NVIDIA H200" || r.Device.ComputeCapability != "9.0" {
					t.Errorf("device %+v", r.Device)
				}
			}
		})
	}
}

// The framework child waits at its gate while the rung below runs, and a
// probe that hangs is killed at its deadline.
func TestFrameworkRungGateAndHang(t *testing.T) {
	t.Parallel()
	needPython(t)
	dir := fakes(t)
	o := fakeOptions(dir, "PYTHONPATH="+pythonPath(t, "torch"))
	o.Framework = "auto"
	o.Rungs = []string{host.RungDriver, host.RungFramework}
	o.Size = 16
	v := runLadder(t, o)
	if d, f := rung(t, v, host.RungDriver), rung(t, v, host.RungFramework); d.Status != host.RungPass || f.Status != host.RungPass {
		t.Fatalf("driver %+v\nframework %+v", d, f)
	}

	o = fakeOptions(dir, "PYTHONPATH="+pythonPath(t, "torch"), "FAKETORCH_HANG=1")
	o.Framework = "auto"
	o.Rungs = []string{host.RungFramework}
	o.FrameworkTimeout = 3 * time.Second
	start := time.Now()
	f := rung(t, runLadder(t, o), host.RungFramework)
	// "start" when python3 itself was slow to come up (a pyenv shim on a
	// loaded machine); either way the import never finished.
	if time.Since(start) > 15*time.Second || f.Status != host.RungFail || !f.TimedOut || f.Cause != "framework_import_failed" || (f.API != "stage import" && f.API != "stage start") {
		t.Errorf("%+v", f)
	}
}

func TestFrameworkRungNoPython(t *testing.T) {
	o := Options{Rungs: []string{host.RungFramework}, Python: "/nonexistent/python3", Environ: []string{"PATH=/nonexistent"}}
	r := rung(t, Run(t.Context(), o), host.RungFramework)
	if r.Status != host.RungSkip || !strings.Contains(r.Summary, "no Python to probe") {
		t.Errorf("%+v", r)
	}
}

// Recorded probe outputs, above all of the TensorFlow branch, which no
// machine of doctor's can run: the parser must turn each into the right
// rung and cause.
func TestParseRecordedProbeOutputs(t *testing.T) {
	const tfPass = `DOCTOR_PROBE_STAGE import
DOCTOR_PROBE_STAGE devices
DOCTOR_PROBE_STAGE init
DOCTOR_PROBE_STAGE gate
DOCTOR_PROBE_STAGE alloc
DOCTOR_PROBE_STAGE matmul
DOCTOR_PROBE_STAGE check
DOCTOR_PROBE_STAGE time
DOCTOR_PROBE_RESULT {"build": {"cuda_compute_capabilities": "['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']", "cuda_version": "12.5.1", "cudnn_version": "9", "is_cuda_build": "True"}, "built_with_cuda": true, "checked": 16, "device": {"compute_capability": "8.0", "name": "NVIDIA A100-SXM4-80GB"}, "devices": ["/physical_device:GPU:0"], "duration_s": 9.1, "executable": "/home/u/venv/bin/python", "figure": {"checked": 16, "correct": true, "dtype": "bf16", "k": 8192, "m": 8192, "max_error": 0.0012, "max_s": 0.0042, "median_s": 0.0041, "min_s": 0.0040, "n": 8192, "per_sample": 5, "placement": "/job:localhost/replica:0/task:0/device:GPU:0", "runs": 10, "tflops": 268.2, "tolerance": 0.01}, "framework": "tensorflow", "framework_version": "2.20.0", "import_s": 4.2, "init_s": 1.3, "installed": ["tensorflow"], "prefix": "/home/u/venv", "python": "3.12.3", "schema": "doctor.probe/v1", "stage": "time", "status": "pass", "tensorflow_installed": true}
`
	const tfNoGPU = `DOCTOR_PROBE_STAGE import
DOCTOR_PROBE_STAGE devices
DOCTOR_PROBE_RESULT {"build": {"cuda_version": "12.5.1", "cudnn_version": "9", "is_cuda_build": "True"}, "built_with_cuda": true, "devices": [], "error": "TensorFlow lists no GPU (tf.config.list_physical_devices('GPU') is empty)", "executable": "/usr/bin/python3", "framework": "tensorflow", "framework_version": "2.20.0", "import_s": 3.1, "installed": ["tensorflow"], "python": "3.12.3", "schema": "doctor.probe/v1", "stage": "devices", "status": "fail", "tensorflow_installed": true}
`
	const tfImport = `DOCTOR_PROBE_STAGE import
DOCTOR_PROBE_RESULT {"error": "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory", "error_type": "ImportError", "executable": "/usr/bin/python3", "framework": "tensorflow", "installed": ["tensorflow"], "python": "3.8.10", "schema": "doctor.probe/v1", "stage": "import", "status": "fail", "tensorflow_installed": true, "traceback": "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"}
`
	const tfOOM = `DOCTOR_PROBE_STAGE matmul
DOCTOR_PROBE_RESULT {"error": "ResourceExhaustedError: {{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:GPU:0}} OOM when allocating tensor with shape[8192,8192] and type bfloat16", "error_type": "ResourceExhaustedError", "executable": "/usr/bin/python3", "framework": "tensorflow", "framework_version": "2.20.0", "schema": "doctor.probe/v1", "stage": "matmul", "status": "fail", "tensorflow_installed": true}
`
	const tfXLA = `DOCTOR_PROBE_RESULT {"error": "InternalError: libdevice not found at ./libdevice.10.bc", "error_type": "InternalError", "framework": "tensorflow", "framework_version": "2.15.0", "schema": "doctor.probe/v1", "stage": "matmul", "status": "fail", "tensorflow_installed": true}
`
	const torchCompat = `DOCTOR_PROBE_RESULT {"build": {"cuda_version": "12.8"}, "built_with_cuda": true, "error": "PyTorch sees no GPU (torch.cuda.is_available() is False)", "framework": "torch", "framework_version": "2.8.0", "schema": "doctor.probe/v1", "stage": "devices", "status": "fail", "tensorflow_installed": false}
`
	cases := []struct {
		name   string
		stdout string
		stderr string
		env    map[string]string
		out    outcome
		status host.RungStatus
		cause  string
		check  func(t *testing.T, r host.Rung)
	}{
		{name: "tensorflow passes", stdout: tfPass, status: host.RungPass, check: func(t *testing.T, r host.Rung) {
			f := r.Figures[0]
			if f.ExpectedTFLOPS != 312 || math.Abs(f.MedianMS-4.1) > 1e-9 || f.TFLOPS != 268.2 || f.PerSample != 5 {
				t.Errorf("figure %+v", f)
			}
			if r.Facts["build.cuda_version"] != "12.5.1" || r.Facts["import_s"] != "4.20" || r.Facts["placement"] == "" || r.FrameworkVersion != "2.20.0" {
				t.Errorf("facts %v", r.Facts)
			}
			if r.Summary != "TensorFlow 2.20.0 computes on the GPU: bf16 matmul 8192³ on /job:localhost/replica:0/task:0/device:GPU:0, 268 TFLOP/s (of 312); result checked" {
				t.Errorf("summary %q", r.Summary)
			}
		}},
		{name: "no GPU: libcudnn missing", stdout: tfNoGPU, status: host.RungFail, cause: "libcudnn_missing",
			stderr: "2023-01-01 W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\nW tensorflow/core/common_runtime/gpu/gpu_device.cc:1934] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU. Skipping registering GPU devices..."},
		{name: "no GPU: cuInit no device", stdout: tfNoGPU, status: host.RungFail, cause: "driver_missing",
			stderr: "E tensorflow/stream_executor/cuda/cuda_driver.cc:466] failed call to cuInit: CUDA_ERROR_NO_DEVICE\nI tensorflow/stream_executor/cuda/cuda_diagnostics.cc:86] kernel driver does not appear to be running on this host (joao): /proc/driver/nvidia/version does not exist"},
		{name: "no GPU: hidden", stdout: tfNoGPU, status: host.RungFail, cause: "cuda_visible_devices_hides_gpu", env: map[string]string{"CUDA_VISIBLE_DEVICES": "-1"},
			stderr: "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"},
		{name: "no GPU: unknown error", stdout: tfNoGPU, status: host.RungFail, cause: "cuinit_unknown_error",
			stderr: "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error"},
		{name: "no GPU: and-cuda libraries missing", stdout: tfNoGPU, status: host.RungFail, cause: "tf_cpu_only_build_installed",
			stderr: "I external/local_xla/xla/tsl/cuda/cudart_stub.cc:32] Could not find cuda drivers on your machine, GPU will not be used."},
		{name: "no GPU: old cudart", stdout: tfNoGPU, status: host.RungFail, cause: "libcudart_missing",
			stderr: "2020-08-08 23:41:49.327601: W tensorflow/stream_executor/platform/default/dso_loader.cc:59] Could not load dynamic library 'libcudart.so.10.1'; dlerror: libcudart.so.10.1: cannot open shared object file: No such file or directory"},
		{name: "import fails on libcudart", stdout: tfImport, status: host.RungFail, cause: "libcudart_missing", check: func(t *testing.T, r host.Rung) {
			if r.Code != "ImportError" || r.API != "stage import" || !strings.HasPrefix(r.Summary, "import tensorflow failed: ImportError: libcudart") || r.Facts["traceback"] == "" {
				t.Errorf("%+v", r)
			}
		}},
		{name: "import fails on libcuda", stdout: strings.Replace(tfImport, "libcudart.so.11.0: cannot open", "libcuda.so.1: file too short; libcudart.so.11.0: cannot open", 1), status: host.RungFail, cause: "driver_missing"},
		{name: "out of memory", stdout: tfOOM, status: host.RungFail, cause: "gpu_out_of_memory_other_process"},
		{name: "libdevice", stdout: tfXLA, status: host.RungFail, cause: "xla_ptxas_or_libdevice_missing"},
		{name: "torch: forward compatibility", stdout: torchCompat, status: host.RungFail, cause: "driver_too_old_for_cuda",
			stderr: "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)"},
		{name: "torch: no driver", stdout: torchCompat, status: host.RungFail, cause: "driver_missing",
			stderr: "/opt/torch/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:119.)"},
		{name: "crash during import", stdout: "DOCTOR_PROBE_STAGE import\n", out: outcome{exitCode: -1, signal: "segmentation fault"}, status: host.RungFail, cause: "framework_import_failed",
			check: func(t *testing.T, r host.Rung) {
				if !strings.Contains(r.Error, "crashed: segmentation fault (last stage: import)") {
					t.Errorf("%q", r.Error)
				}
			}},
		{name: "hang in matmul", stdout: "DOCTOR_PROBE_STAGE import\nDOCTOR_PROBE_STAGE matmul\n", out: outcome{timedOut: true}, status: host.RungFail, cause: "driver_unresponsive"},
		{name: "hang compiling PTX", stdout: "DOCTOR_PROBE_STAGE matmul\n", out: outcome{timedOut: true}, status: host.RungFail, cause: "unsupported_compute_capability",
			stderr: "W tensorflow/core/common_runtime/gpu/gpu_device.cc:2131] TensorFlow was not built with CUDA kernel binaries compatible with compute capability 12.0. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or longer."},
		{name: "killed at the gate", stdout: "DOCTOR_PROBE_STAGE import\nDOCTOR_PROBE_STAGE gate\n", out: outcome{timedOut: true}, status: host.RungFail, cause: "driver_unresponsive", check: func(t *testing.T, r host.Rung) {
			if !strings.Contains(r.Summary, "stopped before its GPU work") {
				t.Errorf("%q", r.Summary)
			}
		}},
		{name: "wrong schema is ignored", stdout: `DOCTOR_PROBE_RESULT {"schema": "other/v9", "status": "pass"}` + "\n", out: outcome{exitCode: 0}, status: host.RungFail, cause: "gpu_compute_failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := c.out
			out.stdout, out.stderr = []byte(c.stdout), []byte(c.stderr)
			r := frameworkResult(out, c.env)
			if r.Status != c.status || r.Cause != c.cause {
				t.Fatalf("got %s %s (error %q, summary %q)", r.Status, r.Cause, r.Error, r.Summary)
			}
			if r.Stderr != strings.TrimRight(c.stderr, "\n") {
				t.Errorf("stderr not kept: %q", r.Stderr)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func FuzzParseProbeOutput(f *testing.F) {
	f.Add([]byte("DOCTOR_PROBE_STAGE import\nDOCTOR_PROBE_RESULT {\"schema\": \"doctor.probe/v1\", \"status\": \"pass\", \"figure\": {\"dtype\": \"bf16\", \"median_s\": 0.001}}\n"))
	f.Add([]byte("DOCTOR_PROBE_RESULT {\"schema\": \"doctor.probe/v1\", \"status\": \"fail\", \"stage\": \"devices\", \"error\": \"CUDA_ERROR_NO_DEVICE\"}"))
	f.Add([]byte("DOCTOR_PROBE_RESULT {"))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, ok := parseProbeOutput(b)
		if ok && res.Status != "pass" && res.Status != "fail" && res.Status != "skip" {
			t.Errorf("accepted status %q", res.Status)
		}
		r := frameworkResult(outcome{stdout: b, stderr: b}, map[string]string{})
		if r.Status == host.RungFail && r.Cause == "" {
			t.Errorf("a failure without a cause: %+v", r)
		}
	})
}

func TestInheritCause(t *testing.T) {
	mk := func(api, cause string) *host.Verification {
		return &host.Verification{Rungs: []host.Rung{
			{Name: host.RungDriver, Status: host.RungFail, Cause: "driver_missing"},
			{Name: host.RungFramework, Status: host.RungFail, Cause: cause, API: api},
		}}
	}
	v := mk("stage devices", "gpu_compute_failed")
	inheritCause(v)
	if f := v.Rung(host.RungFramework); f.Cause != "driver_missing" || f.Facts["cause_from"] != "the driver rung" {
		t.Errorf("%+v", f)
	}
	for _, v := range []*host.Verification{mk("stage matmul", "gpu_compute_failed"), mk("stage devices", "tf_cpu_only_build_installed")} {
		want := v.Rungs[1].Cause
		inheritCause(v)
		if v.Rungs[1].Cause != want {
			t.Errorf("%+v", v.Rungs[1])
		}
	}
}
