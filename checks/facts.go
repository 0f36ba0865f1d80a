package checks

import (
	"fmt"
	"strings"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// Helpers that derive facts from a snapshot, shared by the checks.

func isWSL2(s *host.Snapshot) bool { return s.Platform.WSL.Version == 2 }
func isWSL(s *host.Snapshot) bool  { return s.Platform.WSL.Version > 0 }

// collector returns the status of a collector and whether it ran.
func collector(s *host.Snapshot, name string) (host.CollectorStatus, bool) {
	st, ok := s.Collectors[name]
	return st, ok && st.Skipped == ""
}

// collected reports whether a collector ran and finished (even with an
// error it reported as data).
func collected(s *host.Snapshot, name string) bool {
	st, ok := collector(s, name)
	return ok && !st.TimedOut
}

// nvidiaPCI returns the NVIDIA display functions on the PCI bus.
func nvidiaPCI(s *host.Snapshot) []host.PCIDevice { return s.PCI }

// deviceNode returns a /dev entry from the snapshot.
func deviceNode(s *host.Snapshot, path string) (host.DeviceNode, bool) {
	for _, d := range s.Devices {
		if d.Path == path {
			return d, true
		}
	}
	return host.DeviceNode{}, false
}

// gpuNodes returns the /dev/nvidiaN entries that exist.
func gpuNodes(s *host.Snapshot) []host.DeviceNode {
	var out []host.DeviceNode
	for _, d := range s.Devices {
		if d.Exists && strings.HasPrefix(d.Path, "/dev/nvidia") && isDigits(strings.TrimPrefix(d.Path, "/dev/nvidia")) {
			out = append(out, d)
		}
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// linuxDriverFiles lists driver libraries that belong to a Linux driver: real
// files (or links to real files) outside /usr/lib/wsl.
func linuxDriverFiles(s *host.Snapshot) []string {
	var out []string
	for _, f := range s.Modules.UserspaceFiles {
		if strings.HasPrefix(f.Path, "/usr/lib/wsl/") || strings.HasPrefix(f.Target, "/usr/lib/wsl/") {
			continue
		}
		out = append(out, f.Path)
	}
	return out
}

// userspaceDriverPresent reports whether NVIDIA user-space driver files or
// packages are installed (outside WSL's own folder).
func userspaceDriverPresent(s *host.Snapshot) bool {
	return len(linuxDriverFiles(s)) > 0 || len(s.Modules.Packages) > 0 || s.NvidiaSMI.Found && !strings.HasPrefix(s.NvidiaSMI.Path, "/usr/lib/wsl/")
}

func env(s *host.Snapshot, k string) (string, bool) {
	v, ok := s.Env[k]
	return v, ok
}

func gib(mib uint64) string { return fmt.Sprintf("%.1f GiB", float64(mib)/1024) }

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// distroInstallDriver returns the steps to install the recommended NVIDIA
// driver on the examined distribution (knowledge/data/distro.json); the
// steps of a row that is not verified are marked as such.
func distroInstallDriver(s *host.Snapshot) []string {
	r, ok := knowledge.InstallDriverSteps(s.Platform.DistroID, s.Platform.DistroVersion)
	if !ok {
		return []string{"Install the NVIDIA driver for your distribution: https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/", "Reboot"}
	}
	steps := append([]string{}, r.Steps...)
	if !r.Mark.Verified() {
		for i := range steps {
			steps[i] = "Not verified by doctor: " + steps[i]
		}
	}
	if r.Note != "" {
		steps = append(steps, "Note: "+r.Note)
	}
	return steps
}
