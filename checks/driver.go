package checks

import (
	"fmt"
	"strings"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// NVMLDriver reads the driver through NVML: the best proof that the
// user-space driver and the kernel module work together.
var NVMLDriver = &Check{
	ID:       "driver.nvml",
	Link:     LinkDriver,
	Title:    "NVIDIA driver (NVML)",
	Causes:   []string{"driver_missing", "driver_library_mismatch", "driver_unresponsive", "device_node_permission", "wsl_libcuda_not_found", "gpu_hardware_xid_error", "container_runtime_no_gpu", "check_incomplete"},
	Requires: []string{"nvml", "platform.wsl1", "platform.container", "hardware.xid", "kernel.nouveau", "kernel.nvidia", "driver.wsl"},
	Doc: `NVML (libnvidia-ml.so.1) is the driver's management library. If it cannot be
loaded, the user-space driver is missing; "Driver/library version mismatch"
means the libraries were upgraded while the old kernel module is still
loaded (reboot); a GPU NVML cannot reach ("GPU is lost") has fallen off the
bus. Every GPU fact doctor reports comes from here.`,
	Run: func(p *Pass) {
		s := p.Snap
		st, ran := collector(s, "nvml")
		if !ran {
			if st.Skipped != "" {
				p.Skip(st.Skipped)
			} else {
				p.Skip("NVML was not read")
			}
			return
		}
		n := s.NVML
		if st.TimedOut {
			p.Error("driver_unresponsive", "NVML did not answer within "+fmt.Sprintf("%.0f ms", st.DurationMS),
				"A driver that does not answer NVML queries is usually stuck on a hung or lost GPU. Look for Xid errors in the kernel log.", Ev{"collector": st},
				Fix{ID: FixReboot, Title: "Reboot the machine", Risk: RiskDangerous, Manual: true, Steps: []string{"sudo dmesg | grep -i xid", "Reboot the machine"}})
			return
		}
		if n.Available {
			v := n.DriverVersion
			ev := Ev{"driver_version": v, "cuda_driver_version": host.CUDAVersionString(n.CUDADriverVersion), "gpus": len(n.GPUs)}
			if k := s.Modules.KernelDriverVersion; k != "" && v != "" && k != v {
				ev["kernel_driver_version"] = k
				p.Error("driver_library_mismatch", fmt.Sprintf("Driver libraries %s do not match the loaded kernel module %s", v, k),
					"The user-space driver was upgraded while the old kernel module is still loaded.", ev, mismatchFixes()...)
				return
			}
			if len(n.GPUs) == 0 {
				cause := "driver_missing"
				if s.Platform.Container != "" {
					cause = "container_runtime_no_gpu"
				}
				p.Error(cause, "The driver answers but reports no GPU", "NVML works but lists no device: the GPU is not bound to the nvidia driver, or not passed into this container/VM.", ev)
				return
			}
			names := map[string]int{}
			for _, g := range n.GPUs {
				names[g.Name]++
			}
			var parts []string
			for name, c := range names {
				parts = append(parts, fmt.Sprintf("%d× %s", c, name))
			}
			p.OKf(fmt.Sprintf("driver %s (CUDA %s), %s", v, host.CUDAVersionString(n.CUDADriverVersion), strings.Join(parts, ", ")), ev)
			return
		}
		ev := Ev{"nvml_error": n.Error, "message": n.ErrorMessage, "kernel_driver_version": s.Modules.KernelDriverVersion, "userspace_driver": s.Modules.UserspaceDriver}
		switch n.Error {
		case "ERROR_LIB_RM_VERSION_MISMATCH":
			p.Error("driver_library_mismatch", "Failed to initialize NVML: Driver/library version mismatch",
				fmt.Sprintf("The kernel module is %s but the user-space libraries are %s: the driver was upgraded without a reboot.", orUnknown(s.Modules.KernelDriverVersion), orUnknown(s.Modules.UserspaceDriver)),
				ev, mismatchFixes()...)
		case "ERROR_LIBRARY_NOT_FOUND":
			if isWSL2(s) {
				p.Error("wsl_libcuda_not_found", "The Windows driver's libraries are not visible in WSL 2",
					"libnvidia-ml.so.1 is not in /usr/lib/wsl/lib: the Windows NVIDIA driver is missing, too old, or WSL was not restarted after installing it.", ev, windowsDriverFix())
				return
			}
			p.Error("driver_missing", "NVIDIA driver library libnvidia-ml.so.1 not found",
				"The NVIDIA user-space driver is not installed (or not in the loader's path).", ev,
				Fix{ID: FixInstallDriver, Title: "Install the NVIDIA driver", Risk: RiskDangerous, NeedsRoot: true, Steps: distroInstallDriver(s)})
		case "ERROR_DRIVER_NOT_LOADED":
			p.Error("driver_missing", "NVML: the NVIDIA kernel driver is not running", "The libraries are installed but the kernel module is not loaded.", ev)
		case "ERROR_NO_PERMISSION":
			p.Error("device_node_permission", "NVML: no permission to open the GPU", "This user cannot open /dev/nvidiactl or /dev/nvidia*.", ev)
		case "ERROR_GPU_IS_LOST":
			p.Error("gpu_hardware_xid_error", "NVML: the GPU is lost (fallen off the bus)", "The driver lost contact with the GPU (Xid 79); only a reboot brings it back.", ev,
				Fix{ID: FixReboot, Title: "Reboot the machine", Risk: RiskDangerous, Manual: true, Steps: []string{"Reboot; if it recurs, check power, cooling and seating"}})
		default:
			p.Error("check_incomplete", "NVML failed: "+orUnknown(n.Error), orUnknown(n.ErrorMessage), ev)
		}
	},
}

func mismatchFixes() []Fix {
	return []Fix{{ID: "reboot", Title: "Reboot so the new kernel module loads", Risk: RiskDangerous, Manual: true,
		Steps: []string{"sudo reboot", "Or, with no process using the GPU: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"}}}
}

func windowsDriverFix() Fix {
	min, _, _ := knowledge.WSLMinWindowsDriver()
	return Fix{ID: FixWindowsDriver, Title: "Install or update the NVIDIA driver on Windows, then restart WSL", Risk: RiskSafe, Manual: true,
		Steps: []string{"On Windows: install the current NVIDIA Game Ready/Studio or RTX driver from https://www.nvidia.com/Download/index.aspx (" + min + " or newer for TensorFlow: tensorflow.org/install/pip)",
			"In PowerShell: wsl --update", "In PowerShell: wsl --shutdown", "Open the distribution again and rerun doctor"}}
}

// smiCause tells which cause an nvidia-smi error text points at.
func smiCause(out string) string {
	low := strings.ToLower(out)
	switch {
	case strings.Contains(low, "version mismatch"):
		return "driver_library_mismatch"
	case strings.Contains(low, "insufficient permissions") || strings.Contains(low, "permission denied"):
		return "device_node_permission"
	case strings.Contains(low, "gpu is lost") || strings.Contains(low, "fallen off the bus") || strings.Contains(low, "unable to determine the device handle"):
		return "gpu_hardware_xid_error"
	case strings.Contains(low, "couldn't communicate with the nvidia driver"), strings.Contains(low, "no devices were found"), strings.Contains(low, "libnvidia-ml.so"):
		return "driver_missing"
	}
	return "check_incomplete"
}

// NvidiaSMI runs nvidia-smi only to see that it works and to keep its error
// text, which users recognise and search for.
var NvidiaSMI = &Check{
	ID:       "driver.nvidia_smi",
	Link:     LinkDriver,
	Title:    "nvidia-smi",
	Causes:   []string{"driver_unresponsive", "driver_missing", "driver_library_mismatch", "device_node_permission", "gpu_hardware_xid_error", "check_incomplete"},
	Requires: []string{"nvidia-smi", "driver.nvml", "driver.device_nodes"},
	Doc: `nvidia-smi is the first thing users run. Its error text names the broken
link ("couldn't communicate with the NVIDIA driver", "Driver/library version
mismatch"). A run that hangs means the driver itself is stuck; doctor kills
it after a few seconds and reports it.`,
	Run: func(p *Pass) {
		s := p.Snap
		st, ran := collector(s, "nvidia-smi")
		if !ran {
			p.Skip(orUnknown(st.Skipped))
			return
		}
		c := s.NvidiaSMI
		ev := Ev{"path": c.Path, "exit_code": c.ExitCode, "duration_ms": c.DurationMS, "output": c.Output}
		switch {
		case c.TimedOut || st.TimedOut:
			p.Error("driver_unresponsive", "nvidia-smi hung and was killed", orUnknown(c.Error)+". A hung nvidia-smi means the driver is stuck, usually on a GPU that stopped answering.", ev,
				Fix{ID: FixReboot, Title: "Reboot the machine", Risk: RiskDangerous, Manual: true, Steps: []string{"sudo dmesg | grep -i -e xid -e nvrm", "Reboot the machine"}})
		case !c.Found:
			if s.NVML.Available {
				p.Info("healthy", "nvidia-smi is not on PATH", "The driver works through NVML; nvidia-smi is only a convenience.", ev)
				return
			}
			p.OKf("nvidia-smi not installed (see the driver finding)", ev)
		case c.ExitCode != 0:
			out := strings.Join(c.Output, "\n")
			title := "nvidia-smi fails"
			if len(c.Output) > 0 {
				title = "nvidia-smi: " + c.Output[0]
			}
			p.Error(smiCause(out), title, fmt.Sprintf("nvidia-smi exited with code %d.", c.ExitCode), ev)
		default:
			p.OKf(fmt.Sprintf("nvidia-smi works (%.0f ms)", c.DurationMS), ev)
		}
	},
}

// DeviceNodes checks that /dev/nvidiactl and /dev/nvidiaN exist and that this
// user can open them.
var DeviceNodes = &Check{
	ID:       "driver.device_nodes",
	Link:     LinkDriver,
	Title:    "GPU device nodes",
	Causes:   []string{"device_node_permission", "wsl_libcuda_not_found"},
	Requires: []string{"platform", "modules", "devices", "kernel.nvidia", "platform.container", "driver.wsl"},
	Doc: `CUDA opens /dev/nvidiactl, /dev/nvidiaN and /dev/nvidia-uvm read-write. They
are created by nvidia-modprobe or udev; their group (video, render) decides
who may use the GPU. Under WSL 2 the GPU is /dev/dxg instead.`,
	Run: func(p *Pass) {
		s := p.Snap
		if st, ok := collector(s, "devices"); !ok || st.TimedOut {
			p.Skip("device nodes were not read")
			return
		}
		if isWSL2(s) {
			if !s.Platform.WSL.DXG {
				p.Error("wsl_libcuda_not_found", "/dev/dxg is missing: WSL 2 has no GPU paravirtualization",
					"The Windows driver or the WSL kernel is too old, or the GPU is not supported by WSL (Pascal or newer, WDDM mode).",
					Ev{"dev_dxg": false}, windowsDriverFix())
				return
			}
			p.OK("/dev/dxg present")
			return
		}
		if isWSL(s) {
			p.Skip("WSL 1 has no GPU device")
			return
		}
		if !s.Modules.Loaded["nvidia"] && !s.NVML.Available {
			p.Skip("the nvidia module is not loaded, so there are no device nodes to check")
			return
		}
		if s.Platform.Container != "" && len(gpuNodes(s)) == 0 {
			p.Skip("no device nodes in this container (see platform.container)")
			return
		}
		ctl, _ := deviceNode(s, "/dev/nvidiactl")
		nodes := gpuNodes(s)
		var missing, denied []string
		group := ""
		if !ctl.Exists {
			missing = append(missing, "/dev/nvidiactl")
		}
		if len(nodes) == 0 {
			missing = append(missing, "/dev/nvidia0")
		}
		for _, d := range append([]host.DeviceNode{ctl}, nodes...) {
			if d.Exists && (!d.Readable || !d.Writable) {
				denied = append(denied, fmt.Sprintf("%s (%s %s)", d.Path, d.Mode, orUnknown(d.Group)))
				if group == "" {
					group = d.Group
				}
			}
		}
		ev := Ev{"missing": missing, "not_accessible": denied, "user": s.Platform.User}
		switch {
		case len(missing) > 0:
			p.Error("device_node_permission", "GPU device nodes are missing: "+strings.Join(missing, ", "),
				"The driver is loaded but its device nodes were not created.", ev,
				Fix{ID: FixCreateDeviceNodes, Title: "Create the device nodes", Risk: RiskSafe, NeedsRoot: true, Steps: []string{"sudo nvidia-modprobe -c=0 -u"}})
		case len(denied) > 0:
			steps := []string{"sudo usermod -aG " + orDefault(group, "video") + " " + orDefault(s.Platform.User, "$USER"), "Log out and in again (group membership applies to new sessions)"}
			p.Error("device_node_permission", "This user cannot open the GPU device nodes", strings.Join(denied, ", "), ev,
				Fix{ID: FixDeviceGroup, Title: "Add the user to the device's group", Risk: RiskModerate, NeedsRoot: true, Steps: steps, Params: map[string]string{"group": orDefault(group, "video"), "user": s.Platform.User}})
		default:
			p.OK(fmt.Sprintf("%s and /dev/nvidiactl usable", plural(len(nodes), "GPU node", "GPU nodes")))
		}
	},
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// WSLDriver checks the WSL 2 rules: only the Windows driver, its libcuda in
// /usr/lib/wsl/lib, and that folder in the loader's path.
var WSLDriver = &Check{
	ID:       "driver.wsl",
	Link:     LinkDriver,
	Title:    "WSL 2 driver setup",
	Causes:   []string{"wsl_linux_driver_installed_inside_wsl", "wsl_libcuda_not_found"},
	Requires: []string{"platform", "modules"},
	Doc: `Under WSL 2 the Windows NVIDIA driver is the only driver: it exposes
libcuda.so.1 and nvidia-smi in /usr/lib/wsl/lib. NVIDIA: "users must not
install any NVIDIA GPU Linux driver within WSL 2" — a Linux driver (from a
.run file, cuda-drivers or the plain "cuda" meta-package) puts its own
libcuda ahead of the stub and breaks CUDA. /usr/lib/wsl/lib must be in the
loader's path (/etc/ld.so.conf.d/ld.wsl.conf).`,
	Run: func(p *Pass) {
		s := p.Snap
		if !isWSL2(s) {
			p.OK("not WSL 2")
			return
		}
		w := s.Platform.WSL
		files := linuxDriverFiles(s)
		if len(files) > 0 || len(s.Modules.Packages) > 0 {
			steps := []string{}
			params := map[string]string{}
			if len(s.Modules.Packages) > 0 {
				steps = append(steps, "apt-get -s remove --purge "+strings.Join(s.Modules.Packages, " ")+"   # doctor simulates first: if apt would remove anything else (purging libcuda1 takes nvidia-cuda-toolkit), the fix is dangerous",
					"sudo apt-get remove --purge -y "+strings.Join(s.Modules.Packages, " "))
				params["packages"] = strings.Join(s.Modules.Packages, " ")
			}
			if len(files) > 0 {
				steps = append(steps, "Remove the Linux driver's libraries: "+strings.Join(files, " ")+" (the NVIDIA .run installer: sudo nvidia-uninstall)")
			}
			steps = append(steps, "sudo ldconfig", "Install CUDA inside WSL only with the cuda-toolkit-12-x package, never 'cuda' or 'cuda-drivers'")
			p.Error("wsl_linux_driver_installed_inside_wsl", "A Linux NVIDIA driver is installed inside WSL 2",
				"Its libraries shadow the Windows driver's libcuda stub in /usr/lib/wsl/lib, so CUDA fails. NVIDIA: do not install any Linux display driver in WSL.",
				Ev{"linux_driver_files": files, "driver_packages": s.Modules.Packages},
				Fix{ID: FixWSLRemoveLinuxDriver, Title: "Remove the Linux driver from WSL", Risk: RiskModerate, NeedsRoot: true, Steps: steps, Params: params})
		}
		switch {
		case !w.LibCUDA:
			p.Error("wsl_libcuda_not_found", "/usr/lib/wsl/lib/libcuda.so.1 is missing",
				"The Windows NVIDIA driver does not expose CUDA to WSL: it is missing, older than R495, or WSL was not restarted after installing it.",
				Ev{"lib_dir": w.LibDir, "lib_cuda": w.LibCUDA}, windowsDriverFix())
		case !w.LdConf:
			p.Warn("wsl_libcuda_not_found", "/usr/lib/wsl/lib is not in the loader's path",
				"No file in /etc/ld.so.conf.d names /usr/lib/wsl/lib, so programs that dlopen libcuda.so.1 through the loader cache may not find it.",
				Ev{"ld_conf": false},
				Fix{ID: FixWSLLdConf, Title: "Add /usr/lib/wsl/lib to the loader's path", Risk: RiskSafe, NeedsRoot: true,
					Steps: []string{"echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf", "sudo ldconfig"}})
		default:
			if len(p.findings) == 0 {
				p.OK("Windows driver's libcuda in /usr/lib/wsl/lib")
			}
		}
	},
}
