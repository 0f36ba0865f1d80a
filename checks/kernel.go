package checks

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// Nouveau fails when the open-source nouveau driver holds the GPU.
var Nouveau = &Check{
	ID:       "kernel.nouveau",
	Link:     LinkKernel,
	Title:    "nouveau driver",
	Causes:   []string{"nouveau_conflict"},
	Requires: []string{"platform", "modules", "pci"},
	Doc: `nouveau, the kernel's open-source driver for NVIDIA GPUs, binds to the GPU
at boot; the NVIDIA module then cannot take the device ("Unable to load the
kernel module 'nvidia.ko'"). When an NVIDIA driver is installed but loses
to nouveau, nouveau must be blacklisted and the initramfs rebuilt, then the
machine rebooted. With no NVIDIA driver at all, nouveau is only the
fallback: the driver is installed first (its Debian package blacklists
nouveau itself), and blacklisting alone would leave no driver after the
reboot.`,
	Run: func(p *Pass) {
		s := p.Snap
		if isWSL(s) {
			p.Skip("WSL has no Linux GPU kernel driver")
			return
		}
		bound := []string{}
		for _, d := range nvidiaPCI(s) {
			if d.Driver == "nouveau" {
				bound = append(bound, d.Address)
			}
		}
		loaded := s.Modules.Loaded["nouveau"]
		if !loaded && len(bound) == 0 {
			p.OK("nouveau not loaded")
			return
		}
		ev := Ev{"nouveau_loaded": loaded, "gpus_bound_to_nouveau": bound, "nvidia_loaded": s.Modules.Loaded["nvidia"], "nouveau_blacklisted": s.Modules.NouveauBlacklisted}
		if !NvidiaDriverInstalled(s) {
			// Nothing to conflict with: nouveau holds the GPU because no
			// NVIDIA driver is there to take it. The driver comes first
			// (kernel.nvidia); blacklisting alone would leave the machine
			// with no driver at all after the reboot.
			ev["nvidia_driver_installed"] = false
			p.Info("nouveau_conflict", "nouveau drives the GPU: no NVIDIA driver is installed to take its place",
				"Install the NVIDIA driver first (kernel.nvidia says how). "+nouveauAfterDriver(s.Platform.DistroID), ev)
			return
		}
		fix := Fix{ID: FixBlacklistNouveau, Title: "Blacklist nouveau and rebuild the initramfs", Risk: RiskModerate, NeedsRoot: true,
			Steps: []string{
				"Write /etc/modprobe.d/blacklist-nouveau.conf with: blacklist nouveau / options nouveau modeset=0",
				initramfsCommand(s.Platform.DistroID),
				"Reboot (doctor only announces it)",
			}}
		if len(bound) > 0 || !s.Modules.Loaded["nvidia"] {
			detail := "nouveau is loaded and the NVIDIA module is not: the GPU is driven by nouveau, which CUDA cannot use."
			if s.Modules.NouveauBlacklisted {
				detail += " nouveau is already blacklisted in modprobe.d: the initramfs was probably not rebuilt, or the machine not rebooted since."
			}
			p.Error("nouveau_conflict", "The nouveau driver holds the GPU", detail, ev, fix)
			return
		}
		p.Warn("nouveau_conflict", "nouveau is loaded next to the NVIDIA module",
			"The NVIDIA module owns the GPU now, but nouveau may take it at the next boot.", ev, fix)
	},
}

// secureBootSteps enroll the key DKMS signs with: Ubuntu's is
// /var/lib/shim-signed/mok/MOK.der (update-secureboot-policy
// --enroll-key), other distributions' /var/lib/dkms/mok.pub.
func secureBootSteps(distro string) []string {
	r, ok := knowledge.SecureBootSteps(distro)
	if !ok {
		return []string{"Enroll the key your DKMS signs modules with as a Machine Owner Key (mokutil --import), or disable Secure Boot"}
	}
	return append([]string{}, r.Steps...)
}

// uvmFix loads nvidia_uvm; inside a container it is printed only, for the
// host: the kernel and its modules are the host's.
func uvmFix(s *host.Snapshot, more ...string) Fix {
	fix := Fix{ID: FixLoadNvidiaUVM, Title: "Load nvidia_uvm and create its device node", Risk: RiskSafe, NeedsRoot: true,
		Steps: append([]string{"sudo modprobe nvidia-uvm", "sudo nvidia-modprobe -u -c=0"}, more...)}
	if s.Platform.Container != "" {
		fix.Manual = true
		fix.Steps = []string{"On the host (not in this container): sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0", "Then restart the container"}
	}
	return fix
}

// dkmsRebuildSteps are the printed steps of the DKMS rebuild, the same
// per distribution as the plan runs them (fixes.planDKMSRebuild).
func dkmsRebuildSteps(distro, kernel string) []string {
	var steps []string
	switch distro {
	case "ubuntu", "debian", "pop", "linuxmint":
		steps = append(steps, "sudo apt-get install -y linux-headers-"+kernel)
	case "fedora", "rhel", "rocky", "almalinux", "centos":
		steps = append(steps, "sudo dnf install -y kernel-devel-"+kernel)
	default:
		steps = append(steps, "Install the headers of kernel "+kernel+" with your distribution's package manager")
	}
	return append(steps, "sudo dkms autoinstall -k "+kernel, "sudo modprobe nvidia")
}

// NvidiaDriverInstalled reports whether this machine has an NVIDIA driver
// that nouveau could be keeping off the GPU: the module loaded or built for
// some kernel (modules.dep, DKMS), driver packages, or the user-space
// driver's libraries.
func NvidiaDriverInstalled(s *host.Snapshot) bool {
	if s.Modules.Loaded["nvidia"] || len(s.Modules.DKMS) > 0 || userspaceDriverPresent(s) {
		return true
	}
	for _, a := range s.Modules.Available {
		if strings.Contains(a, "/nvidia.ko") {
			return true
		}
	}
	return false
}

// nouveauAfterDriver says what happens to nouveau once the driver is
// installed, from the distribution's row (knowledge/data/distro.json).
func nouveauAfterDriver(distro string) string {
	const then = "If nouveau still holds the GPU after the install and a reboot, run doctor again: blacklisting nouveau is then the fix."
	r, ok := knowledge.DriverBlacklistsNouveau(distro)
	switch {
	case ok && r.Mark.Verified():
		return fmt.Sprintf("The driver's package %s blacklists nouveau itself (%s; %s). %s", r.Package, r.File, r.Source, then)
	case ok:
		return fmt.Sprintf("%s are said to blacklist nouveau themselves (not verified by doctor). %s", r.Package, then)
	}
	return then
}

func initramfsCommand(distro string) string {
	switch distro {
	case "fedora", "rhel", "rocky", "almalinux", "centos":
		return "sudo dracut --force"
	case "arch", "manjaro":
		return "sudo mkinitcpio -P"
	}
	return "sudo update-initramfs -u"
}

var signatureRE = regexp.MustCompile(`(?i)module verification failed|Loading of unsigned module is rejected|Required key not available|Lockdown: .*unsigned module`)

// KernelModule finds out whether the nvidia kernel module is loaded and, if
// not, why: not installed, not built for this kernel, or refused by Secure
// Boot.
var KernelModule = &Check{
	ID:       "kernel.nvidia",
	Link:     LinkKernel,
	Title:    "NVIDIA kernel module",
	Causes:   []string{"driver_missing", "kernel_module_not_built", "secure_boot_unsigned_module", "no_nvidia_gpu"},
	Requires: []string{"platform", "modules", "kernel.nouveau"},
	Doc: `CUDA needs the nvidia kernel module (/proc/driver/nvidia/version exists
when it is loaded). If it is not loaded: with no NVIDIA user-space files at
all the driver is missing; with the user-space driver but no module for the
running kernel (modules.dep, DKMS) the module was not built, usually after a
kernel upgrade; with Secure Boot on and signature errors in the kernel log,
the unsigned module was refused. With nothing of the driver installed and a
PCI bus that lists functions but no NVIDIA display controller (on x86_64;
an Arm board's integrated GPU is not on the PCI bus), the machine has no
NVIDIA GPU at all (no_nvidia_gpu): installing a driver would not help. WSL 2 has no such module: the Windows driver serves the GPU.`,
	Run: func(p *Pass) {
		s := p.Snap
		if isWSL(s) {
			p.OK("WSL: the GPU is served by the Windows driver (no Linux kernel module)")
			return
		}
		m := s.Modules
		if m.Loaded["nvidia"] {
			v := m.KernelDriverVersion
			if v == "" {
				v = "version unknown"
			}
			p.OKf("nvidia kernel module loaded ("+v+")", Ev{"kernel_driver_version": m.KernelDriverVersion})
			return
		}
		if s.NVML.Available {
			// Sandboxes (gVisor, some containers) hide /proc/driver and
			// /proc/modules; NVML answering proves the module is in.
			p.OKf("nvidia kernel module in use (NVML answers; the module list is not visible here)", Ev{"driver_version": s.NVML.DriverVersion})
			return
		}
		kernel := s.Platform.Kernel
		ev := Ev{"kernel": kernel, "modules_available": m.Available, "dkms": m.DKMS, "secure_boot": s.Platform.SecureBoot,
			"driver_packages": m.Packages, "userspace_driver": m.UserspaceDriver, "nvidia_pci_devices": len(nvidiaPCI(s))}
		var sigLines []string
		for _, l := range s.KernelLog.Lines {
			if signatureRE.MatchString(l) {
				sigLines = append(sigLines, l)
			}
		}
		moduleBuilt := false
		for _, a := range m.Available {
			if strings.Contains(a, "/nvidia.ko") {
				moduleBuilt = true
			}
		}
		switch {
		case len(sigLines) > 0 || s.Platform.SecureBoot == "enabled" && moduleBuilt:
			ev["kernel_log"] = sigLines
			p.Error("secure_boot_unsigned_module", "Secure Boot refuses the unsigned NVIDIA kernel module",
				"The module exists for this kernel but the kernel will not load it without a signature it trusts.", ev,
				Fix{ID: FixSecureBootSign, Title: "Enroll a Machine Owner Key and sign the module (or turn Secure Boot off)", Risk: RiskModerate, NeedsRoot: true, Manual: true,
					Steps: secureBootSteps(s.Platform.DistroID)})
		case moduleBuilt:
			p.Error("kernel_module_not_built", "The NVIDIA kernel module exists for kernel "+kernel+" but is not loaded",
				"modules.dep lists nvidia.ko, yet it is not loaded: loading it failed or nothing asked for it. The kernel log says why.", ev,
				Fix{ID: FixModprobeNvidia, Title: "Load the NVIDIA module", Risk: RiskModerate, NeedsRoot: true,
					Steps: []string{"sudo modprobe nvidia", "sudo dmesg | grep -i -e nvrm -e nvidia   # if it fails"}})
		case userspaceDriverPresent(s) || len(m.DKMS) > 0:
			detail := "The NVIDIA user-space driver is installed but there is no kernel module for the running kernel " + kernel + ": usually a kernel upgrade whose DKMS build was skipped or failed (missing headers)."
			if len(m.DKMS) > 0 {
				detail += fmt.Sprintf(" DKMS has builds for: %s.", strings.Join(m.DKMS, ", "))
			}
			p.Error("kernel_module_not_built", "No NVIDIA kernel module for the running kernel "+kernel, detail, ev,
				Fix{ID: FixDKMSRebuild, Title: "Build the module for this kernel", Risk: RiskModerate, NeedsRoot: true,
					Steps: dkmsRebuildSteps(s.Platform.DistroID, kernel)})
		case len(nvidiaPCI(s)) == 0 && s.PCIFunctions > 0 && s.Fact("pci").Known() && s.Platform.Arch == "x86_64":
			// The bus was listed (its functions are there) and holds no
			// NVIDIA display controller: a driver has nothing to drive.
			// Only on x86_64, where every NVIDIA GPU is a PCI function:
			// on Arm boards (Jetson/Tegra) the integrated GPU is a
			// platform device, absent from the PCI bus, so an empty bus
			// proves nothing there.
			ev["pci_functions"] = s.PCIFunctions
			p.Error("no_nvidia_gpu", "This machine has no NVIDIA GPU",
				fmt.Sprintf("The PCI bus lists %s and none of them is an NVIDIA display controller, and no NVIDIA driver is installed: no driver or library can make CUDA see a GPU here. Run on a machine that has one (a GPU instance type, a node with GPUs, PCI passthrough for a virtual machine), or on the CPU.", plural(s.PCIFunctions, "function", "functions")), ev)
		default:
			detail := "No nvidia kernel module, no NVIDIA user-space driver files and no driver packages were found."
			if len(nvidiaPCI(s)) == 0 {
				detail += " No NVIDIA GPU is visible on the PCI bus either: if this machine should have one, check that it is attached (virtual machine type, PCI passthrough, cloud instance type)."
			} else {
				detail += fmt.Sprintf(" The PCI bus shows %s.", plural(len(nvidiaPCI(s)), "NVIDIA GPU", "NVIDIA GPUs"))
			}
			p.Error("driver_missing", "No NVIDIA driver is installed", detail, ev,
				Fix{ID: FixInstallDriver, Title: "Install the NVIDIA driver", Risk: RiskDangerous, NeedsRoot: true, Steps: distroInstallDriver(s)})
		}
	},
}

// UVMModule fails when nvidia_uvm (or its device node) is missing: CUDA
// initialisation fails without it.
var UVMModule = &Check{
	ID:       "kernel.nvidia_uvm",
	Link:     LinkKernel,
	Title:    "nvidia_uvm module",
	Causes:   []string{"uvm_module_missing"},
	Requires: []string{"platform", "modules", "devices", "kernel.nvidia", "platform.container"},
	Doc: `CUDA needs the Unified Memory module nvidia_uvm and its node /dev/nvidia-uvm.
It is loaded on demand by nvidia-modprobe; when that fails (containers,
after suspend, minimal installs) cuInit fails with CUDA_ERROR_UNKNOWN while
nvidia-smi still works.`,
	Run: func(p *Pass) {
		s := p.Snap
		if isWSL(s) {
			p.Skip("WSL 2 has no nvidia_uvm module")
			return
		}
		node, _ := deviceNode(s, "/dev/nvidia-uvm")
		if node.Exists {
			p.OK("/dev/nvidia-uvm present")
			return
		}
		if !s.Modules.Loaded["nvidia"] && !s.NVML.Available {
			p.Skip("the nvidia module is not loaded")
			return
		}
		ev := Ev{"nvidia_uvm_loaded": s.Modules.Loaded["nvidia_uvm"], "dev_nvidia_uvm": node.Exists}
		fix := uvmFix(s)
		switch {
		case !s.Modules.Loaded["nvidia_uvm"] && s.Platform.Container != "":
			p.Error("uvm_module_missing", "nvidia_uvm is not loaded on the host", "CUDA cannot initialise without /dev/nvidia-uvm.", ev, fix)
		case !s.Modules.Loaded["nvidia_uvm"]:
			p.Error("uvm_module_missing", "The nvidia_uvm module is not loaded", "CUDA cannot initialise without it (cuInit: CUDA_ERROR_UNKNOWN), even though nvidia-smi works.", ev, fix)
		default:
			p.Error("uvm_module_missing", "/dev/nvidia-uvm is missing", "nvidia_uvm is loaded but its device node was not created.", ev, fix)
		}
	},
}
