package checks_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// Issue 12: the facts behind the checks, one test each.

// Item 1: a Maxwell GPU with Python 3.12 is offered TensorFlow 2.16 at
// most, and told why.
func TestMaxwellPython312GetsTF216(t *testing.T) {
	s := loadUpper(t, "gpu-machine-cuda13") // no TensorFlow installed
	s.Python.Version = "3.12.3"
	s.NVML.GPUs[0].ComputeCapability = "5.2"
	s.NVML.GPUs[0].Name = "NVIDIA GeForce GTX 980"
	f := only(t, runOne(t, checks.TensorFlowInstall, s), "python.tensorflow")
	if !hasStep(&f, "'tensorflow[and-cuda]==2.16.1'") {
		t.Errorf("GTX 980 + Python 3.12: %+v", f.Fixes)
	}
	if !strings.Contains(f.Detail, "compute capability 5.2") || !strings.Contains(f.Detail, "2.17.0 to 2.21.0") || !strings.Contains(f.Detail, "Maxwell") {
		t.Errorf("the detail does not say why: %s", f.Detail)
	}

	// TensorFlow 2.17 installed (no build facts): below its verified
	// minimum, an error, and the fix installs 2.16.1.
	s = loadUpper(t, "tf216-healthy")
	s.Python.TensorFlow.Version = "2.17.0"
	s.Python.TensorFlow.BuildInfo.ComputeCapabilities = nil
	s.NVML.GPUs[0].ComputeCapability = "5.2"
	f = runOne(t, checks.ComputeCapability, s)[0]
	if f.Severity != checks.SevError || !strings.Contains(f.Title, "6.0") || len(f.Fixes) == 0 || !hasStep(&f, "==2.16.1") {
		t.Errorf("TF 2.17 on Maxwell: %s %q %+v", f.Severity, f.Title, f.Fixes)
	}
}

// Item 2: Blackwell on 2.16-2.21 is a known failure, not "a slow first
// start"; what works is printed, the unverified part is only named.
func TestBlackwellKnownFailure(t *testing.T) {
	for _, cc := range []string{"12.0", "10.0"} {
		s := loadUpper(t, "tf216-healthy")
		s.Python.TensorFlow.Version = "2.20.0"
		s.Python.TensorFlow.BuildInfo.ComputeCapabilities = []string{"sm_60", "sm_70", "sm_80", "sm_89", "compute_90"}
		s.NVML.GPUs[0].ComputeCapability = cc
		f := runOne(t, checks.ComputeCapability, s)[0]
		if f.Severity != checks.SevError || !strings.Contains(f.Title, "fails on GPU") || strings.Contains(f.Detail, "30 minutes") {
			t.Errorf("cc %s: %s %q %s", cc, f.Severity, f.Title, f.Detail)
		}
		if !strings.Contains(f.Detail, "CUDA_ERROR_INVALID_PTX") || !strings.Contains(f.Detail, "Not verified") {
			t.Errorf("cc %s detail: %s", cc, f.Detail)
		}
		if len(f.Fixes) != 1 || f.Fixes[0].ID != checks.FixOlderTensorFlow || !hasStep(&f, "NGC") || hasStep(&f, "sm_120") {
			t.Errorf("cc %s fix (only the secondary workaround may be a step): %+v", cc, f.Fixes)
		}
	}
	// A build that carries SASS for the GPU is judged by its build facts.
	s := loadUpper(t, "tf216-healthy")
	s.Python.TensorFlow.Version = "2.20.0"
	s.Python.TensorFlow.BuildInfo.ComputeCapabilities = []string{"sm_90", "sm_100", "sm_120", "compute_120"}
	s.NVML.GPUs[0].ComputeCapability = "12.0"
	if f := runOne(t, checks.ComputeCapability, s)[0]; f.Severity != checks.SevOK {
		t.Errorf("a build with sm_120 SASS: %s %q", f.Severity, f.Title)
	}
	// Not installed: the release doctor would install is known to fail: a warning.
	s = loadUpper(t, "gpu-machine-cuda13")
	s.NVML.GPUs[0].ComputeCapability = "12.0"
	if f := runOne(t, checks.ComputeCapability, s)[0]; f.Severity != checks.SevWarning || !strings.Contains(f.Title, "fails on GPU") {
		t.Errorf("no TensorFlow, Blackwell: %s %q", f.Severity, f.Title)
	}
}

// Item 3: sm_100 and sm_120 are 10.0 and 12.0, not 1.00 and 1.20.
func TestParseCCBlackwell(t *testing.T) {
	s := loadUpper(t, "tf216-healthy")
	s.NVML.GPUs[0].ComputeCapability = "10.0"
	// sm_100 SASS covers 10.0; read as 1.00 it would be "older" and the
	// GPU would lack kernels.
	s.Python.TensorFlow.BuildInfo.ComputeCapabilities = []string{"sm_90", "sm_100", "compute_100"}
	if f := runOne(t, checks.ComputeCapability, s)[0]; f.Severity != checks.SevOK {
		t.Errorf("sm_100 on 10.0: %s %q", f.Severity, f.Title)
	}
	// A 6.1 GPU is older than a build whose oldest SASS is sm_100: read as
	// 1.00 it would pass.
	s.NVML.GPUs[0].ComputeCapability = "6.1"
	s.Python.TensorFlow.BuildInfo.ComputeCapabilities = []string{"sm_100", "sm_120", "compute_120"}
	if f := runOne(t, checks.ComputeCapability, s)[0]; f.Severity != checks.SevError || !strings.Contains(f.Title, "from 10.0") {
		t.Errorf("6.1 against sm_100+: %s %q", f.Severity, f.Title)
	}
}

func loadScenario(t *testing.T, name string) *host.Snapshot {
	t.Helper()
	s, err := host.LoadSnapshot(filepath.Join("../testdata/scenarios", name, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Item 12: the printed DKMS rebuild is the distribution's (no apt-get on
// RHEL), and nvidia_uvm in a container is loaded on the host.
func TestDKMSAndUVMText(t *testing.T) {
	s := loadScenario(t, "module-not-built")
	for distro, want := range map[string]string{"rhel": "sudo dnf install -y kernel-devel-", "ubuntu": "sudo apt-get install -y linux-headers-", "arch": "with your distribution's package manager"} {
		s.Platform.DistroID = distro
		f := only(t, runOne(t, checks.KernelModule, s), "kernel.nvidia")
		if f.Cause != "kernel_module_not_built" || !hasStep(&f, want) || distro != "ubuntu" && hasStep(&f, "apt-get") {
			t.Errorf("%s: %+v", distro, f.Fixes)
		}
	}
	s = loadScenario(t, "uvm-missing")
	s.Platform.Container = "docker"
	for _, f := range runOne(t, checks.UVMModule, s) {
		for _, fx := range f.Fixes {
			if fx.ID == checks.FixLoadNvidiaUVM && (!fx.Manual || !hasStep(&f, "On the host")) {
				t.Errorf("uvm in a container: %+v", fx)
			}
		}
	}
}

// Items 8 and 9: Secure Boot and driver install by distribution, each
// from a sourced, marked row.
func TestDistroFacts(t *testing.T) {
	s := loadScenario(t, "secure-boot-refuses")
	for distro, c := range map[string]struct{ want, not string }{
		"ubuntu": {"update-secureboot-policy --enroll-key", "/var/lib/dkms/mok.pub"},
		"fedora": {"mokutil --import /var/lib/dkms/mok.pub", "shim-signed"},
	} {
		s.Platform.DistroID = distro
		f := only(t, runOne(t, checks.KernelModule, s), "kernel.nvidia")
		if f.Cause != "secure_boot_unsigned_module" || !hasStep(&f, c.want) || hasStep(&f, c.not) {
			t.Errorf("secure boot on %s: %+v", distro, f.Fixes)
		}
		if distro == "ubuntu" && !hasStep(&f, "/var/lib/shim-signed/mok/MOK.der") {
			t.Errorf("ubuntu: the key path is not named: %+v", f.Fixes)
		}
	}
	s = loadScenario(t, "no-driver")
	for _, c := range []struct {
		distro, release string
		want            []string
		not             string
	}{
		{"rhel", "9.4", []string{"dnf module enable -y nvidia-driver:open-dkms", "dnf install -y nvidia-open"}, "latest-dkms"},
		{"rocky", "8.10", []string{"nvidia-driver:open-dkms"}, "latest-dkms"},
		{"rhel", "10.0", []string{"sudo dnf install -y nvidia-open"}, "module"},
		{"arch", "", []string{"pacman -S nvidia-open", "nvidia-580xx-dkms"}, "pacman -S nvidia nvidia-utils"},
		{"debian", "12", []string{"contrib, non-free and non-free-firmware", "nvidia-driver firmware-misc-nonfree"}, ""},
		{"fedora", "41", []string{"Not verified by doctor"}, ""},
	} {
		s.Platform.DistroID, s.Platform.DistroVersion = c.distro, c.release
		f := only(t, runOne(t, checks.KernelModule, s), "kernel.nvidia")
		for _, w := range c.want {
			if !hasStep(&f, w) {
				t.Errorf("%s %s: no %q in %+v", c.distro, c.release, w, f.Fixes)
			}
		}
		if c.not != "" && hasStep(&f, c.not) {
			t.Errorf("%s %s: %q in %+v", c.distro, c.release, c.not, f.Fixes)
		}
	}
	// The distributions whose install doctor runs (fixes.planInstallDriver)
	// have verified or secondary rows; the Windows minimum is TensorFlow's.
	for _, d := range []string{"ubuntu", "debian"} {
		if r, ok := knowledge.InstallDriverSteps(d, ""); !ok || !r.Mark.Verified() || r.Source == "" {
			t.Errorf("%s install row: %+v", d, r)
		}
	}
	if v, m, src := knowledge.WSLMinWindowsDriver(); v != "528.33" || m != knowledge.MarkV || !strings.Contains(src, "pip.md") {
		t.Errorf("WSL minimum: %s %s %s", v, m, src)
	}
	if r, ok := knowledge.DriverBlacklistsNouveau("debian"); !ok || r.File != "/etc/nvidia/current/nvidia-blacklists-nouveau.conf" || r.Mark != knowledge.MarkV {
		t.Errorf("debian nouveau blacklist: %+v", r)
	}
}

// Item 13: Xid findings carry the catalog's severity and action; Xid 154
// the driver's recovery action.
func TestXidFindings(t *testing.T) {
	s := loadScenario(t, "xid-79")
	s.KernelLog.Xids = []host.XidEvent{
		{Code: 154, PCI: "0000:17:00", Text: "NVRM: Xid (PCI:0000:17:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"},
		{Code: 121, PCI: "0000:17:00", Text: "NVRM: Xid (PCI:0000:17:00): 121, C2C Error"},
		{Code: 109, PCI: "0000:17:00", Text: "NVRM: Xid (PCI:0000:17:00): 109, Context Switch Timeout"},
	}
	got := map[string]checks.Finding{}
	for _, f := range runOne(t, checks.XidErrors, s) {
		got[f.ID] = f
	}
	if f := got["hardware.xid/154"]; f.Severity != checks.SevError || !strings.Contains(f.Title, "Node Reboot Required") || f.Evidence["action"] != "reboot" {
		t.Errorf("154: %s %q %v", f.Severity, f.Title, f.Evidence)
	}
	if f := got["hardware.xid/121"]; f.Severity != checks.SevInfo || strings.Contains(f.Title, "unknown") {
		t.Errorf("121: %s %q", f.Severity, f.Title)
	}
	if f := got["hardware.xid/109"]; f.Severity != checks.SevError || len(f.Fixes) == 0 || !strings.Contains(f.Fixes[0].Steps[0], "reset") {
		t.Errorf("109: %s %+v", f.Severity, f.Fixes)
	}
}

// Item 9 (WSL): the Windows driver fix names TensorFlow's minimum, 528.33.
func TestWSLWindowsDriverMinimum(t *testing.T) {
	s := loadScenario(t, "healthy-wsl2")
	s.Platform.WSL.LibCUDA = false
	var seen bool
	for _, f := range runOne(t, checks.WSLDriver, s) {
		for _, fx := range f.Fixes {
			if fx.ID == checks.FixWindowsDriver {
				seen = true
				if !hasStep(&f, "528.33 or newer") {
					t.Errorf("windows-driver fix: %+v", fx.Steps)
				}
			}
		}
	}
	if !seen {
		t.Errorf("no windows-driver fix when WSL's libcuda is missing")
	}
}
