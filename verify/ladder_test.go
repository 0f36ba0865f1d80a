package verify

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/host"
)

func TestLadderPassesOnFakeGPU(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	var seen []string
	o := fakeOptions(dir)
	o.Progress = func(r host.Rung) { seen = append(seen, r.Name) }
	v := runLadder(t, o)
	if got := strings.Join(seen, ","); got != "driver,libraries" {
		t.Errorf("progress saw %q", got)
	}
	d := rung(t, v, host.RungDriver)
	if d.Status != host.RungPass {
		t.Fatalf("driver rung: %+v", d)
	}
	if d.Device == nil || d.Device.Name != "Fake GPU" || d.Device.ComputeCapability != "8.0" || d.Device.PCIBusID != "0000:18:00.0" {
		t.Errorf("driver rung device: %+v", d.Device)
	}
	if d.Library != filepath.Join(dir, "libcuda.so.1") {
		t.Errorf("driver rung library %q", d.Library)
	}
	if d.Summary != "PTX kernel compiled by the driver ran correctly on Fake GPU (cc 8.0)" || d.Facts["elements"] != "1048576" || d.PID == 0 || d.DurationMS <= 0 {
		t.Errorf("driver rung: %+v", d)
	}
	if d.Facts["driver_cuda_version"] != "12.4" || d.Facts["ptx_target"] != "sm_50 (PTX ISA 6.0)" {
		t.Errorf("driver facts: %v", d.Facts)
	}
	l := rung(t, v, host.RungLibraries)
	if l.Status != host.RungPass {
		t.Fatalf("libraries rung: %+v", l)
	}
	if len(l.Figures) != 3 {
		t.Fatalf("want bf16, tf32 and fp32 figures, got %+v", l.Figures)
	}
	for i, want := range []string{"bf16", "tf32", "fp32"} {
		f := l.Figures[i]
		if f.DType != want || !f.Correct || f.Checked != 32 || f.M != 48 || f.Runs != 3 || f.TFLOPS <= 0 || f.Timing != "cuda_events" {
			t.Errorf("figure %d: %+v", i, f)
		}
		if f.MinMS > f.MedianMS || f.MedianMS > f.MaxMS {
			t.Errorf("figure %d: min/median/max out of order: %+v", i, f)
		}
		if f.ExpectedTFLOPS != 0 {
			t.Errorf("no expectation for an unknown GPU, got %v", f.ExpectedTFLOPS)
		}
	}
	if l.Library != filepath.Join(dir, "libcublas.so.12") || l.Facts["cublas_version"] != "12.4.2" {
		t.Errorf("libraries rung library %q facts %v", l.Library, l.Facts)
	}
	if v.Conditions != nil || v.DurationMS <= 0 {
		t.Errorf("verification: %+v", v)
	}
}

// The cause of each way the driver can fail, with the fake libcuda
// returning the CUresult a broken machine returns.
func TestDriverRungCauses(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	cases := []struct {
		name      string
		env       []string
		libcuda   string
		cause     string
		api, code string
	}{
		{"no device", []string{"FAKECUDA_INIT=100"}, "", "driver_missing", "cuInit", "CUDA_ERROR_NO_DEVICE"},
		{"hidden by CUDA_VISIBLE_DEVICES", []string{"FAKECUDA_INIT=100", "CUDA_VISIBLE_DEVICES=-1"}, "", "cuda_visible_devices_hides_gpu", "cuInit", "CUDA_ERROR_NO_DEVICE"},
		{"zero devices", []string{"FAKECUDA_COUNT=0", "CUDA_VISIBLE_DEVICES="}, "", "cuda_visible_devices_hides_gpu", "cuDeviceGetCount", "CUDA_ERROR_NO_DEVICE"},
		{"unknown error", []string{"FAKECUDA_INIT=999"}, "", "cuinit_unknown_error", "cuInit", "CUDA_ERROR_UNKNOWN"},
		{"driver mismatch", []string{"FAKECUDA_INIT=803"}, "", "driver_library_mismatch", "cuInit", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
		{"compat not supported", []string{"FAKECUDA_INIT=804"}, "", "driver_too_old_for_cuda", "cuInit", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
		{"stub library", []string{"FAKECUDA_INIT=34"}, "", "ld_library_path_pollution", "cuInit", "CUDA_ERROR_STUB_LIBRARY"},
		{"exclusive process", []string{"FAKECUDA_INIT=46"}, "", "compute_mode_prohibited", "cuInit", "CUDA_ERROR_DEVICE_UNAVAILABLE"},
		{"out of memory", []string{"FAKECUDA_OOM=1"}, "", "gpu_out_of_memory_other_process", "cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY"},
		{"wrong results", []string{"FAKECUDA_WRONG=1"}, "", "gpu_compute_failed", "doctor_saxpy", "WRONG_RESULT"},
		{"no libcuda", nil, "/nonexistent/libcuda.so.1", "driver_missing", "dlopen", "LIBRARY_NOT_FOUND"},
		// A file named by path that is not a library is not a missing driver.
		{"not a library", nil, "/etc/passwd", "gpu_compute_failed", "dlopen", "LIBRARY_NOT_LOADABLE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := fakeOptions(dir, c.env...)
			o.Rungs = []string{host.RungDriver}
			if c.libcuda != "" {
				o.LibCUDA = c.libcuda
			}
			r := rung(t, runLadder(t, o), host.RungDriver)
			if r.Status != host.RungFail || r.Cause != c.cause || r.API != c.api || r.Code != c.code {
				t.Errorf("got status %s cause %s api %s code %s (error %q), want fail %s %s %s", r.Status, r.Cause, r.API, r.Code, r.Error, c.cause, c.api, c.code)
			}
			if r.Error == "" || r.Summary == "" {
				t.Errorf("a failure needs an error and a summary: %+v", r)
			}
			if c.libcuda == "/etc/passwd" && (!strings.Contains(r.Summary, "not a loadable library") || strings.Contains(r.Summary, "driver")) {
				t.Errorf("summary %q", r.Summary)
			}
		})
	}
}

func TestDriverRungHangIsKilled(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	o := fakeOptions(dir, "FAKECUDA_HANG=1")
	o.DriverTimeout = 1500 * time.Millisecond
	o.LibrariesTimeout = 1500 * time.Millisecond
	start := time.Now()
	v := runLadder(t, o)
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("two hung rungs took %s", el)
	}
	for _, r := range v.Rungs {
		if r.Status != host.RungFail || !r.TimedOut || r.Cause != "driver_unresponsive" {
			t.Errorf("%s: %+v", r.Name, r)
		}
		// The child and its process group are gone.
		if err := syscall.Kill(r.PID, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s: child %d still exists (%v)", r.Name, r.PID, err)
		}
	}
}

func TestPTXFallbackHeader(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	o := fakeOptions(dir, "FAKECUDA_PTX=218")
	o.Rungs = []string{host.RungDriver}
	r := rung(t, runLadder(t, o), host.RungDriver)
	if r.Status != host.RungPass || r.Facts["ptx_target"] != "sm_75 (PTX ISA 8.0)" || !strings.Contains(r.Facts["ptx_first_error"], "fake refusal") {
		t.Errorf("%+v", r)
	}
}

func TestLibrariesRung(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	cases := []struct {
		name    string
		env     []string
		cublas  string // "" keeps libcublas.so.12; "-" searches (none found)
		status  host.RungStatus
		cause   string
		library string
		dtypes  string
	}{
		{name: "compute capability 7.0: fp32 only", env: []string{"FAKECUDA_CC=70"}, status: host.RungPass, library: "libcublas.so.12", dtypes: "fp32"},
		{name: "wrong results", env: []string{"FAKECUBLAS_WRONG=1"}, status: host.RungFail, cause: "gpu_compute_failed"},
		{name: "cublasCreate fails", env: []string{"FAKECUBLAS_CREATE=14"}, status: host.RungFail, cause: "gpu_compute_failed"},
		{name: "alloc failed in cublas", env: []string{"FAKECUBLAS_CREATE=3"}, status: host.RungFail, cause: "gpu_out_of_memory_other_process"},
		{name: "cuBLAS 13 on a CUDA 12 driver", env: []string{"FAKECUBLAS_CREATE=1"}, cublas: "libcublas.so.13", status: host.RungFail, cause: "driver_too_old_for_cuda", library: "libcublas.so.13"},
		{name: "cuBLAS 13 on a CUDA 13 driver", env: []string{"FAKECUDA_DRIVER=13000"}, cublas: "libcublas.so.13", status: host.RungPass, library: "libcublas.so.13", dtypes: "bf16,tf32,fp32"},
		{name: "no libcublas", cublas: "-", status: host.RungFail, cause: "libcublas_missing"},
		{name: "driver broken below", env: []string{"FAKECUDA_INIT=999"}, status: host.RungFail, cause: "cuinit_unknown_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := fakeOptions(dir, c.env...)
			o.Rungs = []string{host.RungLibraries}
			o.Environ = append(o.Environ, "HOME=/nonexistent", "PATH=/nonexistent")
			switch c.cublas {
			case "":
			case "-":
				o.LibCublas = ""
			default:
				o.LibCublas = filepath.Join(dir, c.cublas)
			}
			r := rung(t, runLadder(t, o), host.RungLibraries)
			if r.Status != c.status || r.Cause != c.cause {
				t.Fatalf("got %s %s (error %q), want %s %s", r.Status, r.Cause, r.Error, c.status, c.cause)
			}
			if c.library != "" && filepath.Base(r.Library) != c.library {
				t.Errorf("library %q, want %s", r.Library, c.library)
			}
			if c.dtypes != "" {
				var got []string
				for _, f := range r.Figures {
					got = append(got, f.DType)
				}
				if strings.Join(got, ",") != c.dtypes {
					t.Errorf("figures %v, want %s", got, c.dtypes)
				}
			}
		})
	}
}

// With libcublas.so.13 first but a CUDA 12 driver, the rung prefers the
// cuBLAS the driver can run and says which it passed over.
func TestLibrariesPrefersCompatibleCublas(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	req := childRequest{Cublas: []string{filepath.Join(dir, "libcublas.so.13"), filepath.Join(dir, "libcublas.so.12")}}
	o := fakeOptions(dir)
	o.Rungs = []string{host.RungLibraries}
	o.LibCublas = req.Cublas[0]
	// The .so.12 file is found through the loader's path.
	o.Environ = append(o.Environ, "LD_LIBRARY_PATH="+dir, "HOME=/nonexistent", "PATH=/nonexistent")
	r := rung(t, runLadder(t, o), host.RungLibraries)
	if r.Status != host.RungPass || filepath.Base(r.Library) != "libcublas.so.12" {
		t.Fatalf("got %s with %s: %+v", r.Status, r.Library, r)
	}
}

// A figure far under the GPU model's peak makes the ladder read the GPU
// state again, for the performance finding's evidence.
func TestConditionsReadWhenFarUnderExpected(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	o := fakeOptions(dir, "FAKECUDA_NAME=NVIDIA H200")
	o.Rungs = []string{host.RungLibraries}
	src := &fakeSource{nv: host.NVML{Available: true, GPUs: []host.GPU{{Index: 0, Name: "NVIDIA H200", ThrottleReasons: []string{"hw_thermal_slowdown"}}}}}
	o.GPU = src
	v := runLadder(t, o)
	r := rung(t, v, host.RungLibraries)
	if r.Status != host.RungPass || len(r.Figures) != 3 || r.Figures[0].ExpectedTFLOPS != 989 || r.Figures[2].ExpectedTFLOPS != 67 {
		t.Fatalf("%+v", r)
	}
	if !FarUnderExpected(v) || v.Conditions == nil || src.reads != 1 || v.Conditions.GPUs[0].ThrottleReasons[0] != "hw_thermal_slowdown" {
		t.Errorf("conditions %+v after %d reads", v.Conditions, src.reads)
	}
}

type fakeSource struct {
	nv    host.NVML
	reads int
}

func (f *fakeSource) Read(ctx context.Context) (host.NVML, error) {
	f.reads++
	return f.nv, nil
}

func TestChildMainBadRequest(t *testing.T) {
	var out strings.Builder
	if code := ChildMain(strings.NewReader("not json\n"), &out); code != 2 || !strings.Contains(out.String(), "expects a JSON request") {
		t.Errorf("exit %d, output %q", code, out.String())
	}
	out.Reset()
	if code := ChildMain(strings.NewReader(`{"rung":"nonsense"}`+"\n"), &out); code != 0 || !strings.Contains(out.String(), `"status":"fail"`) {
		t.Errorf("exit %d, output %q", code, out.String())
	}
}

func TestStartFailure(t *testing.T) {
	o := Options{Rungs: []string{host.RungDriver}, ChildCommand: []string{"/nonexistent/doctor", "__rung"}, Environ: []string{}}
	r := rung(t, Run(context.Background(), o), host.RungDriver)
	if r.Status != host.RungFail || r.Cause != "gpu_compute_failed" || !strings.Contains(r.Error, "no such file") {
		t.Errorf("%+v", r)
	}
}

func TestParseChildOutput(t *testing.T) {
	cases := []struct {
		in     string
		ok     bool
		status host.RungStatus
	}{
		{`{"rung":{"name":"driver","status":"pass","summary":"x"}}`, true, host.RungPass},
		{"noise\n" + `{"rung":{"name":"driver","status":"fail"}}` + "\n", true, host.RungFail},
		{`{"rung":{"name":"driver","status":"maybe"}}`, false, ""},
		{`{"rung":{}}`, false, ""},
		{`{"rung":`, false, ""},
		{"", false, ""},
	}
	for _, c := range cases {
		r, ok := parseChildOutput([]byte(c.in))
		if ok != c.ok || r.Status != c.status {
			t.Errorf("%q: got %v %q", c.in, ok, r.Status)
		}
	}
}

func FuzzParseChildOutput(f *testing.F) {
	f.Add([]byte(`{"rung":{"name":"driver","status":"pass","figures":[{"dtype":"bf16","tflops":1}]}}`))
	f.Add([]byte("x\n{\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := parseChildOutput(b)
		if ok && r.Status != host.RungPass && r.Status != host.RungFail && r.Status != host.RungSkip {
			t.Errorf("accepted status %q", r.Status)
		}
	})
}

func TestValidate(t *testing.T) {
	good := []Options{{}, {Size: 1024, Runs: 5, Framework: "torch"}, {Rungs: []string{"driver", "framework"}}}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	bad := []Options{{Size: 8}, {Size: 1 << 20}, {Runs: -1}, {Runs: 5000}, {Framework: "mxnet"}, {Rungs: []string{"kernel"}}, {Samples: -2}}
	for _, o := range bad {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestTail(t *testing.T) {
	if got := tail([]byte("a\nb\n"), 10); got != "a\nb" {
		t.Errorf("%q", got)
	}
	got := tail([]byte(strings.Repeat("line\n", 100)), 22)
	if !strings.HasPrefix(got, "…\nline") || len(got) > 30 {
		t.Errorf("%q", got)
	}
}

// A libcublas whose sibling libcublasLt is not on the loader's path and
// that has no $ORIGIN run path still loads: the rung loads the sibling
// first.
func TestLibrariesLoadsCublasLtSibling(t *testing.T) {
	t.Parallel()
	dir := fakes(t)
	wheel := filepath.Join(t.TempDir(), "nvidia", "cublas", "lib")
	if err := os.MkdirAll(wheel, 0o755); err != nil {
		t.Fatal(err)
	}
	lt := filepath.Join(wheel, "libcublasLt.so.12")
	if b, err := exec.Command("gcc", "-shared", "-fPIC", "-Wl,-soname,libcublasLt.so.12", "-o", lt, "-x", "c", "-").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	lib := filepath.Join(wheel, "libcublas.so.12")
	cmd := exec.Command("gcc", "-shared", "-fPIC", "-DFAKE_MAJOR=12", "-o", lib, filepath.Join("testdata", "fakecublas.c"), "-L"+wheel, "-Wl,--no-as-needed", "-l:libcublasLt.so.12")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	o := fakeOptions(dir, "HOME=/nonexistent", "PATH=/nonexistent")
	o.Rungs = []string{host.RungLibraries}
	o.LibCublas = lib
	r := rung(t, runLadder(t, o), host.RungLibraries)
	if r.Status != host.RungPass || r.Library != lib {
		t.Errorf("%s %s: %s", r.Status, r.Library, r.Error)
	}
}
