package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/google/go-cmp/cmp"
)

func TestParseProcDriverVersion(t *testing.T) {
	cases := map[string]string{
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 19:01:24 UTC 2025\nGCC version: gcc 12": "580.159.04",
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build":                             "570.86.15",
		"NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:48 UTC 2023":                     "535.104.05",
		"garbage":  "",
		"":         "",
		"Module 1": "",
	}
	for in, want := range cases {
		if got := ParseProcDriverVersion(in); got != want {
			t.Errorf("ParseProcDriverVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseOSRelease(t *testing.T) {
	got := parseOSRelease("# comment\nNAME=\"Ubuntu\"\nVERSION_ID='22.04'\nID=ubuntu\nBROKEN\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n")
	want := map[string]string{"NAME": "Ubuntu", "VERSION_ID": "22.04", "ID": "ubuntu", "PRETTY_NAME": "Ubuntu 22.04.4 LTS"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

func TestParseKernelLog(t *testing.T) {
	log := strings.Join([]string{
		"[    1.000000] Linux version 6.5.0",
		"<4>[83211.551240] NVRM: Xid (PCI:0000:17:00): 79, pid=2211, name=python3, GPU has fallen off the bus.",
		"Mar  3 11:02:11 host kernel: [1.2] NVRM: Xid (PCI:0000:65:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.",
		"[    4.1] nvidia: module verification failed: signature and/or required key missing - tainting kernel",
		"[    5.0] usb 1-1: new high-speed USB device",
		"NVRM: Xid (PCI:0000:17:00): notanumber, bad",
	}, "\n")
	lines, xids := ParseKernelLog(log)
	if len(lines) != 4 {
		t.Errorf("kept %d lines, want 4: %q", len(lines), lines)
	}
	want := []XidEvent{
		{PCI: "0000:17:00", Code: 79, Text: "pid=2211, name=python3, GPU has fallen off the bus."},
		{PCI: "0000:65:00", Code: 48, Text: "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0."},
	}
	if d := cmp.Diff(want, xids); d != "" {
		t.Error(d)
	}
}

func TestParseKernelLogKeepsNewest(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxKernelLines+50; i++ {
		b.WriteString("NVRM: line " + strings.Repeat("x", i%7) + "\n")
	}
	b.WriteString("NVRM: the last one\n")
	lines, _ := ParseKernelLog(b.String())
	if len(lines) != MaxKernelLines || lines[len(lines)-1] != "NVRM: the last one" {
		t.Errorf("got %d lines ending %q", len(lines), lines[len(lines)-1])
	}
}

func TestFilterEnv(t *testing.T) {
	in := map[string]string{
		"CUDA_VISIBLE_DEVICES": "-1", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": "/usr/bin",
		"TF_CPP_MIN_LOG_LEVEL": "1", "TF_VAR_password": "x", "TF_TOKEN_app_terraform_io": "y",
		"AWS_SECRET_ACCESS_KEY": "z", "GITHUB_TOKEN": "t", "HF_TOKEN": "h", "OPENAI_API_KEY": "k",
		"CONDA_PREFIX": "/opt/conda/envs/tf", "EDITOR": "vim", "NVIDIA_VISIBLE_DEVICES": "all",
		"XLA_FLAGS": "--xla_gpu_cuda_data_dir=/usr/local/cuda", "MY_PASSWORD": "p", "WANDB_API_KEY": "w",
		// The leaks: every NVIDIA_ name passed, PASS was not PASSW,
		// and credentials inside a URL went through.
		"NVIDIA_NGC_PASS": "ngc-secret", "NVIDIA_API": "nv", "CUDA_SOMETHING_NEW": "c", "PYTHONSTARTUP": "/home/u/x.py",
		"PYTHONPATH": "https://ghost:urlsecret@example.com/lib",
	}
	want := map[string]string{
		"CUDA_VISIBLE_DEVICES": "-1", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": "/usr/bin",
		"TF_CPP_MIN_LOG_LEVEL": "1", "CONDA_PREFIX": "/opt/conda/envs/tf", "NVIDIA_VISIBLE_DEVICES": "all",
		"XLA_FLAGS": "--xla_gpu_cuda_data_dir=/usr/local/cuda", "PYTHONPATH": "https://<redacted>@example.com/lib",
	}
	if d := cmp.Diff(want, FilterEnv(in)); d != "" {
		t.Error(d)
	}
}

func TestReadSnapshotErrors(t *testing.T) {
	cases := map[string]string{
		"":                                     "empty input",
		"{\"schema\": \"doctor.snapshot/v1\"":  "truncated",
		"{\"schema\": 5}":                      "expected string",
		"[1,2,3]":                              "expected",
		"{}":                                   "no \"schema\"",
		"{\"schema\": \"other/v9\"}":           "is not",
		"\x00\x01binary":                       "invalid",
		"{\"schema\": \"doctor.snapshot/v1\"}": "no collector",
	}
	for in, want := range cases {
		_, err := ReadSnapshot(strings.NewReader(in))
		if err == nil || !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadSnapshot(%q) = %v, want an ErrBadSnapshot mentioning %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadSnapshot(%q): message is not one line: %q", in, err)
		}
	}
	if _, err := ReadSnapshot(strings.NewReader(`{"schema":"doctor.snapshot/v1.2","collectors":{"platform":{"duration_ms":1}}}`)); err != nil {
		t.Errorf("a minor schema version must be accepted: %v", err)
	}
}

func FuzzReadSnapshot(f *testing.F) {
	f.Add([]byte(`{"schema":"doctor.snapshot/v1","nvml":{"available":true,"gpus":[{"index":0}]}}`))
	f.Add([]byte(`{"schema":"doctor.snapshot/v1","env":{"A":"b"},"collectors":{"x":{"timed_out":true}}}`))
	f.Add([]byte("{\"schema\""))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadSnapshot(strings.NewReader(string(b)))
		if err == nil && s == nil {
			t.Fatal("nil snapshot without an error")
		}
	})
}

func FuzzParseKernelLog(f *testing.F) {
	f.Add("NVRM: Xid (PCI:0000:17:00): 79, pid=2211, name=python3, GPU has fallen off the bus.")
	f.Add("<4>[1.0] NVRM: Xid (0000:01:00): 13, Graphics Exception")
	f.Fuzz(func(t *testing.T, s string) {
		lines, xids := ParseKernelLog(s)
		if len(lines) > MaxKernelLines || len(xids) > MaxKernelLines {
			t.Fatalf("unbounded result: %d lines, %d xids", len(lines), len(xids))
		}
	})
}

func FuzzParseOSRelease(f *testing.F) {
	f.Add("ID=ubuntu\nVERSION_ID=\"22.04\"\n")
	f.Fuzz(func(t *testing.T, s string) { _ = parseOSRelease(s) })
}

func FuzzParseProcDriverVersion(f *testing.F) {
	f.Add("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct")
	f.Fuzz(func(t *testing.T, s string) { _ = ParseProcDriverVersion(s) })
}

// TestNVMLSourceH200Mock reads NVIDIA's canned DGX H200 through the same
// adapter the real library goes through. Queries the mock does not
// implement must be noted as unsupported, never crash the read.
func TestNVMLSourceH200Mock(t *testing.T) {
	srv := dgxh200.New()
	got, err := NVMLSourceFrom(srv).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Available || got.DriverVersion != "550.54.15" || got.CUDADriverVersion != 12040 || len(got.GPUs) != 8 {
		t.Fatalf("got available=%v driver=%q cuda=%d gpus=%d", got.Available, got.DriverVersion, got.CUDADriverVersion, len(got.GPUs))
	}
	g := got.GPUs[3]
	if g.Index != 3 || !strings.Contains(g.Name, "H200") || g.ComputeCapability != "9.0" || g.MemoryTotalMiB < 140000 || !strings.HasPrefix(g.UUID, "GPU-") {
		t.Errorf("GPU 3 = %+v", g)
	}
	if len(got.Unsupported) == 0 {
		t.Error("the mock lacks several queries; they must be listed as unsupported")
	}
}

// failingLib is an NVML whose Init fails: what a machine without the
// driver, or with a mismatched one, answers.
type failingLib struct {
	nvml.Interface
	r nvml.Return
}

func (f failingLib) Init() nvml.Return { return f.r }

func TestNVMLSourceInitErrors(t *testing.T) {
	for _, r := range []nvml.Return{nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_LIB_RM_VERSION_MISMATCH, nvml.ERROR_DRIVER_NOT_LOADED} {
		got, err := NVMLSourceFrom(failingLib{r: r}).Read(context.Background())
		if err != nil {
			t.Fatalf("%v: Read returned a Go error %v; want the code as data", r, err)
		}
		if got.Available || got.Error != r.String() {
			t.Errorf("%v: got %+v", r, got)
		}
	}
}

// TestNVMLSourceRealLibrary runs the real adapter on this machine: with no
// driver it must report the library as missing, not fail or crash.
func TestNVMLSourceRealLibrary(t *testing.T) {
	got, err := NVMLSource().Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Available && got.Error == "" {
		t.Errorf("unavailable NVML without an error code: %+v", got)
	}
}

func TestDetectWSL(t *testing.T) {
	for _, c := range []struct {
		kernel string
		dxg    bool
		want   int
	}{
		{"5.15.153.1-microsoft-standard-WSL2", true, 2},
		{"5.15.153.1-microsoft-standard-WSL2", false, 2},
		{"4.4.0-19041-Microsoft", false, 1},
		{"6.5.0-27-generic", false, 0},
		{"4.19.128-microsoft-standard", true, 2},
	} {
		root := t.TempDir()
		if c.dxg {
			os.MkdirAll(filepath.Join(root, "dev"), 0o755)
			os.WriteFile(filepath.Join(root, "dev/dxg"), nil, 0o644)
		}
		g := newGatherer(Options{Root: root, Environ: []string{}})
		if got := g.detectWSL(c.kernel).Version; got != c.want {
			t.Errorf("%s dxg=%v: WSL %d, want %d", c.kernel, c.dxg, got, c.want)
		}
	}
}

// unhashableLib is an nvml.Interface value that cannot be a map key.
type unhashableLib struct {
	failingLib
	tags []string
}

// A library value that cannot be told apart from another gets a session
// of its own (no shared count), never a panic.
func TestOpenNVMLUnhashable(t *testing.T) {
	s, err := OpenNVML(unhashableLib{failingLib: failingLib{r: nvml.SUCCESS}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close() // its Shutdown is missing: recovered
	s.Close()
	if _, err := OpenNVML(unhashableLib{failingLib: failingLib{r: nvml.ERROR_DRIVER_NOT_LOADED}}); err == nil || !strings.Contains(err.Error(), "ERROR_DRIVER_NOT_LOADED") {
		t.Errorf("failed init: %v", err)
	}
	if _, err := OpenNVML(nil); err == nil {
		t.Error("a nil library opened")
	}
}
