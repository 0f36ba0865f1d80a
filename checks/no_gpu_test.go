package checks_test

import (
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
)

// A machine with no NVIDIA driver is no_nvidia_gpu, not driver_missing,
// only when the PCI bus was listed, holds functions, and none of them is
// an NVIDIA display controller: then installing a driver cannot help.
// Unknown is not absent: a PCI listing that failed, or a snapshot written
// before the bus's functions were counted, keeps driver_missing.
func TestNoNvidiaGPU(t *testing.T) {
	s := loadScenario(t, "no-nvidia-gpu")
	f := only(t, runOne(t, checks.KernelModule, s), "kernel.nvidia")
	if f.Cause != "no_nvidia_gpu" || f.Severity != checks.SevError || len(f.Fixes) != 0 {
		t.Errorf("no NVIDIA function on a listed bus: %s %s %+v", f.Cause, f.Severity, f.Fixes)
	}
	if n, _ := f.Evidence["pci_functions"].(int); n != s.PCIFunctions || n == 0 {
		t.Errorf("evidence pci_functions %v, want %d", f.Evidence["pci_functions"], s.PCIFunctions)
	}

	for name, change := range map[string]func(*host.Snapshot){
		"pci listing failed": func(s *host.Snapshot) {
			s.Collectors["pci"] = host.CollectorStatus{Error: "open /sys/bus/pci/devices: permission denied"}
		},
		"snapshot before pci_functions":                       func(s *host.Snapshot) { s.PCIFunctions = 0 },
		"an Arm board (a Jetson's GPU is not on the PCI bus)": func(s *host.Snapshot) { s.Platform.Arch = "aarch64" },
		"an NVIDIA GPU on the bus": func(s *host.Snapshot) {
			s.PCI = []host.PCIDevice{{Address: "0000:17:00.0", Vendor: "0x10de", Device: "0x2684", Class: "0x030000", NUMANode: -1}}
		},
	} {
		s := loadScenario(t, "no-nvidia-gpu")
		change(s)
		f := only(t, runOne(t, checks.KernelModule, s), "kernel.nvidia")
		if f.Cause != "driver_missing" {
			t.Errorf("%s: cause %s, want driver_missing", name, f.Cause)
		}
	}
}
