package checks_test

import (
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
)

func runOne(t *testing.T, c *checks.Check, s *host.Snapshot) []checks.Finding {
	t.Helper()
	return checks.Run(c, s)
}

func only(t *testing.T, fs []checks.Finding, id string) checks.Finding {
	t.Helper()
	for _, f := range fs {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no finding %s in %v", id, ids(fs))
	return checks.Finding{}
}

func ids(fs []checks.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID+"="+string(f.Severity)+":"+f.Cause)
	}
	return out
}

// resolvedLib is the snapshot's resolution of a soname (the raw fact the
// checks judge), added as not found when the snapshot lacks it.
func resolvedLib(s *host.Snapshot, soname string) *host.Library {
	l := s.Libraries
	for i := range l.Resolved {
		if l.Resolved[i].Soname == soname {
			return &l.Resolved[i]
		}
	}
	name := strings.TrimPrefix(strings.SplitN(soname, ".so", 2)[0], "lib")
	l.Resolved = append(l.Resolved, host.Library{Name: name, Soname: soname})
	return &l.Resolved[len(l.Resolved)-1]
}

// judgedLib is how the checks judge a soname of the snapshot.
func judgedLib(t *testing.T, s *host.Snapshot, soname string) host.Library {
	t.Helper()
	for _, l := range checks.TFLibraries(s).Needed {
		if l.Soname == soname {
			return l
		}
	}
	t.Fatalf("%s is not among TensorFlow's needs", soname)
	return host.Library{}
}

func TestUpperChecksRegistered(t *testing.T) {
	if err := checks.Validate(checks.All); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*checks.Check{checks.DriverCUDA, checks.CUDALibraries, checks.CondaFiles, checks.LDLibraryPath, checks.CUDAMajorMismatch, checks.CUDNNVersion, checks.XLAData, checks.Toolkit,
		checks.PythonEnvironment, checks.TensorFlowInstall, checks.TensorFlowConflicts, checks.ComputeCapability, checks.JupyterKernels} {
		if checks.Lookup(checks.All, c.ID) == nil {
			t.Errorf("%s is not registered", c.ID)
		}
	}
}

// An unverified soname (the 2.15-2.17 row is inferred) never gives an error
// on its own: with another major of the library present, a missing
// libcufft.so.11 is a warning; with no copy at all, an error.
func TestUnverifiedSonameOnlyWarns(t *testing.T) {
	s := loadUpper(t, "tf216-healthy")
	if j := judgedLib(t, s, "libcufft.so.11"); j.Mark != "U" {
		t.Fatalf("libcufft.so.11 should come from the unverified row: %+v", j)
	}
	fft := resolvedLib(s, "libcufft.so.11")
	fft.Found, fft.Path = false, ""
	fs := runOne(t, checks.CUDALibraries, s)
	if f := only(t, fs, "libs.cuda_libraries/cufft"); f.Severity != checks.SevError || f.Cause != "libcufft_missing" {
		t.Errorf("no copy at all: %s %s", f.Severity, f.Cause)
	}
	*resolvedLib(s, "libcufft.so.10") = host.Library{Name: "cufft", Soname: "libcufft.so.10", Found: true, Path: "/usr/lib/x86_64-linux-gnu/libcufft.so.10"}
	fs = runOne(t, checks.CUDALibraries, s)
	if f := only(t, fs, "libs.cuda_libraries/cufft"); f.Severity != checks.SevWarning || !strings.Contains(f.Detail, "libcufft.so.10") {
		t.Errorf("another major present: %s %q", f.Severity, f.Detail)
	}
	// A soname from the build's own facts (cudnn_version 8 -> libcudnn.so.8,
	// mark V) is an error even with libcudnn.so.9 around.
	if j := judgedLib(t, s, "libcudnn.so.8"); j.Mark != "V" {
		t.Fatalf("libcudnn.so.8 mark %s", j.Mark)
	}
	resolvedLib(s, "libcudnn.so.8").Found = false
	*resolvedLib(s, "libcudnn.so.9") = host.Library{Name: "cudnn", Soname: "libcudnn.so.9", Found: true, Path: "/x/libcudnn.so.9"}
	fs = runOne(t, checks.CUDALibraries, s)
	if f := only(t, fs, "libs.cuda_libraries/cudnn"); f.Severity != checks.SevError {
		t.Errorf("cudnn from build_info: %s", f.Severity)
	}
}

func TestMissingDependency(t *testing.T) {
	s := loadUpper(t, "tf216-healthy")
	so := resolvedLib(s, "libcusolver.so.11")
	so.MissingDeps = []string{"libnvJitLink.so.12"}
	f := only(t, runOne(t, checks.CUDALibraries, s), "libs.cuda_libraries/cusolver")
	if f.Severity != checks.SevError || f.Cause != "libcusolver_missing" || !strings.Contains(f.Title, "libnvJitLink.so.12") {
		t.Errorf("%+v", f)
	}
}

func TestDriverCUDA(t *testing.T) {
	for _, c := range []struct {
		name     string
		scenario string
		driver   string
		cuda     int
		sev      checks.Severity
		title    string
	}{
		{"newer major", "tf216-healthy", "580.159.04", 13000, checks.SevOK, "a newer driver runs older CUDA majors"},
		{"same minor", "tf216-healthy", "545.23.08", 12030, checks.SevOK, "runs TensorFlow 2.16.1's CUDA 12.3 build"},
		{"minor compat", "tf216-healthy", "535.104.05", 12020, checks.SevInfo, "minor-version compatibility"},
		{"too old", "tf216-healthy", "470.82.01", 11040, checks.SevError, "too old"},
		{"too old, no TF", "gpu-machine-cuda13", "470.82.01", 11040, checks.SevWarning, "too old"},
		{"no NVML, driver from the module", "tf216-healthy", "", 0, checks.SevError, "too old"},
	} {
		s := loadUpper(t, c.scenario)
		s.NVML.DriverVersion, s.NVML.CUDADriverVersion = c.driver, c.cuda
		if c.driver == "" {
			s.NVML = host.NVML{}
			s.Modules.KernelDriverVersion = "470.256.02"
		}
		fs := runOne(t, checks.DriverCUDA, s)
		f := fs[len(fs)-1]
		if f.Severity != c.sev || !strings.Contains(f.Title, c.title) {
			t.Errorf("%s: %s %q", c.name, f.Severity, f.Title)
		}
		if f.Severity == checks.SevError || f.Severity == checks.SevWarning {
			if f.Cause != "driver_too_old_for_cuda" || len(f.Fixes) == 0 || f.Fixes[0].ID != checks.FixInstallDriver {
				t.Errorf("%s: cause %s fixes %+v", c.name, f.Cause, f.Fixes)
			}
		}
	}
	// A CUDA 13 library that loads on a CUDA 12 driver.
	s := loadUpper(t, "tf216-healthy")
	dnn := resolvedLib(s, "libcudnn.so.8")
	dnn.CUDAMajor, dnn.CUDAMajorFrom = 13, "wheel nvidia-cudnn-cu13"
	f := only(t, runOne(t, checks.DriverCUDA, s), "libs.driver_cuda/cudnn")
	if f.Severity != checks.SevError {
		t.Errorf("CUDA 13 library on a 12.2 driver: %s", f.Severity)
	}
	// No driver at all: not judged.
	s.NVML, s.Modules = host.NVML{}, host.Modules{}
	if f := runOne(t, checks.DriverCUDA, s)[0]; !f.Skipped {
		t.Errorf("no driver: %+v", f)
	}
}

// The toolkit on PATH is never judged against TensorFlow's CUDA.
func TestToolkitNeverAnError(t *testing.T) {
	s := loadUpper(t, "tf216-healthy")
	s.Libraries.Toolkit = host.Toolkit{NVCC: "/usr/local/cuda/bin/nvcc", Version: "11.2.152"}
	for _, c := range checks.All {
		for _, f := range checks.Run(c, s) {
			if f.Failing() && strings.Contains(f.Title+f.Detail, "11.2.152") {
				t.Errorf("%s fails on the toolkit version: %s", f.ID, f.Title)
			}
		}
	}
	f := runOne(t, checks.Toolkit, s)[0]
	if f.Severity != checks.SevInfo || !strings.Contains(f.Title, "does not matter") {
		t.Errorf("%s %q", f.Severity, f.Title)
	}
}

func TestPythonVersions(t *testing.T) {
	s := loadUpper(t, "gpu-machine-cuda13")
	s.Python.Version = "3.14.0"
	f := runOne(t, checks.PythonEnvironment, s)[0]
	if f.Severity != checks.SevError || f.Cause != "python_version_unsupported" || !strings.Contains(f.Title, "No TensorFlow release supports Python 3.14.0") {
		t.Errorf("3.14: %s %s %q", f.Severity, f.Cause, f.Title)
	}
	s.Python.Version = "3.9.18"
	f = only(t, runOne(t, checks.TensorFlowInstall, s), "python.tensorflow")
	if !hasStep(&f, "'tensorflow[and-cuda]==2.20.0'") {
		t.Errorf("Python 3.9 pin: %+v", f.Fixes)
	}
	// An old driver lowers the pin to a release its CUDA runs.
	s.Python.Version = "3.10.12"
	s.NVML.CUDADriverVersion, s.NVML.DriverVersion = 11080, "520.61.05"
	f = only(t, runOne(t, checks.TensorFlowInstall, s), "python.tensorflow")
	if !hasStep(&f, "'tensorflow[and-cuda]==2.14.0'") {
		t.Errorf("CUDA 11 driver pin: %+v", f.Fixes)
	}
	// Before 2.14 there is no [and-cuda]: the CUDA and cuDNN to install
	// are named.
	s.Python.Version = "3.8.18"
	f = only(t, runOne(t, checks.TensorFlowInstall, s), "python.tensorflow")
	if !hasStep(&f, "-m pip install tensorflow==2.13.0") || !hasStep(&f, "conda install -c conda-forge cudatoolkit=11.8.0") || !hasStep(&f, "nvidia-cudnn-cu11==8.6.0.163") || hasStep(&f, "cudnn=8.6") {
		t.Errorf("Python 3.8 pin: %+v", f.Fixes)
	}
	// A system Python gets a venv first.
	s.Python.Kind = "system"
	s.Python.Executable = "/usr/bin/python3"
	f = only(t, runOne(t, checks.TensorFlowInstall, s), "python.tensorflow")
	if !hasStep(&f, "/usr/bin/python3 -m venv /root/tf-venv") || !hasStep(&f, "/root/tf-venv/bin/python -m pip install") || f.Fixes[0].Params["create_venv"] != "/usr/bin/python3" {
		t.Errorf("system Python: %+v", f.Fixes)
	}
}

func TestStaleAndConflicts(t *testing.T) {
	s := loadUpper(t, "tf216-healthy")
	py := s.Python
	// TensorFlow only in the site-packages of the environment's old Python.
	for i := range py.Distributions {
		if py.Distributions[i].Key == "tensorflow" {
			py.Distributions[i].Stale = true
			py.Distributions[i].Site = "/home/user/tf/lib/python3.10/site-packages"
		}
	}
	py.TensorFlow.Importable = false
	f := runOne(t, checks.PythonEnvironment, s)[0]
	if f.Cause != "python_version_unsupported" || f.Severity != checks.SevError || !strings.Contains(f.Detail, "python3.10") {
		t.Errorf("stale: %+v", f)
	}
	if g := runOne(t, checks.TensorFlowInstall, s)[0]; !g.Skipped {
		t.Errorf("stale-only TF is python.environment's to report: %+v", g)
	}

	// A user-site copy shadows the environment's.
	s = loadUpper(t, "tf216-healthy")
	s.Python.Distributions = append([]host.Distribution{{Name: "tensorflow", Key: "tensorflow", Version: "2.12.0", Site: "/home/user/.local/lib/python3.11/site-packages"}}, s.Python.Distributions...)
	s.Python.SitePaths = append([]host.SitePath{{Path: "/home/user/.local/lib/python3.11/site-packages", From: "user", Exists: true}}, s.Python.SitePaths...)
	f = runOne(t, checks.TensorFlowConflicts, s)[0]
	if f.Severity != checks.SevError || !strings.Contains(f.Detail, "user: /home/user/.local") || f.Fixes[0].Params["packages"] != "tensorflow" {
		t.Errorf("user site: %+v", f)
	}
}

func TestWindowsNative(t *testing.T) {
	s := loadUpper(t, "tf216-healthy")
	s.Python.Windows = true
	f := runOne(t, checks.TensorFlowInstall, s)[0]
	if f.Cause != "tf_windows_native_gpu_unsupported" || f.Severity != checks.SevError {
		t.Errorf("%+v", f)
	}
	s.Python.TensorFlow.Version = "2.10.1"
	if f := runOne(t, checks.TensorFlowInstall, s)[0]; f.Cause == "tf_windows_native_gpu_unsupported" {
		t.Errorf("2.10 still had GPU support on Windows: %+v", f)
	}
}

func TestComputeCapability(t *testing.T) {
	for _, c := range []struct {
		cc, caps string
		sev      checks.Severity
	}{
		{"9.0", "sm_60,sm_70,sm_80,sm_90,compute_90", checks.SevOK},
		{"8.9", "sm_60,sm_70,sm_80,sm_86,compute_86", checks.SevOK}, // sm_86 SASS runs on 8.9
		{"9.0", "sm_60,sm_80,compute_80", checks.SevWarning},        // PTX JIT
		{"12.0", "sm_60,sm_80,sm_90,compute_90", checks.SevError},   // Blackwell on 2.16: known to fail
		{"3.0", "sm_35,sm_50,compute_80", checks.SevError},          // older than the build
		{"9.0", "sm_60,sm_70,sm_80", checks.SevError},               // no SASS, no PTX
	} {
		s := loadUpper(t, "tf216-healthy")
		s.NVML.GPUs[0].ComputeCapability = c.cc
		s.Python.TensorFlow.BuildInfo.ComputeCapabilities = strings.Split(c.caps, ",")
		f := runOne(t, checks.ComputeCapability, s)[0]
		if f.Severity != c.sev {
			t.Errorf("cc %s with %s: %s %q", c.cc, c.caps, f.Severity, f.Title)
		}
	}
	// Without build facts the docs' minimum (3.5, verified) decides.
	s := loadUpper(t, "gpu-machine-cuda13")
	s.NVML.GPUs[0].ComputeCapability = "3.0"
	if f := runOne(t, checks.ComputeCapability, s)[0]; f.Severity != checks.SevError {
		t.Errorf("3.0 without TensorFlow: %s", f.Severity)
	}
}

func TestNoPythonCollector(t *testing.T) {
	s := loadUpper(t, "tf216-healthy")
	s.Python, s.Libraries = nil, nil
	s.Collectors["python"] = host.CollectorStatus{Skipped: "DOCTOR_SKIP_COLLECTORS"}
	for _, c := range checks.All {
		if c.Link != checks.LinkLibraries && c.Link != checks.LinkPython {
			continue
		}
		for _, f := range checks.Run(c, s) {
			if f.Failing() {
				t.Errorf("%s fails without evidence: %s", f.ID, f.Title)
			}
		}
	}
}
