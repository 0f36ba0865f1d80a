package checks

import (
	"fmt"
	"strings"
)

// WSL1 fails on WSL 1, which has no GPU paravirtualization.
var WSL1 = &Check{
	ID:       "platform.wsl1",
	Link:     LinkPlatform,
	Title:    "WSL version",
	Causes:   []string{"wsl1_no_gpu"},
	Requires: []string{"platform"},
	Doc: `Under WSL, only WSL 2 passes the GPU through (/dev/dxg and the Windows
driver's libraries in /usr/lib/wsl/lib). A distribution running under WSL 1
never sees a GPU, whatever is installed inside it.`,
	Run: func(p *Pass) {
		w := p.Snap.Platform.WSL
		switch w.Version {
		case 0:
			p.OK(fmt.Sprintf("%s, kernel %s, %s", orUnknown(p.Snap.Platform.Distro), orUnknown(p.Snap.Platform.Kernel), p.Snap.Platform.Arch))
		case 1:
			distro := p.Snap.Env["WSL_DISTRO_NAME"]
			if distro == "" {
				distro = "<distro>"
			}
			p.Error("wsl1_no_gpu", "This distribution runs under WSL 1, which has no GPU support",
				"WSL 1 translates Linux system calls and has no GPU passthrough; CUDA needs WSL 2.",
				Ev{"kernel": p.Snap.Platform.Kernel, "wsl_version": 1},
				Fix{ID: FixWSLSetVersion2, Title: "Convert the distribution to WSL 2 (on Windows)", Risk: RiskModerate, Manual: true,
					Steps: []string{"In Windows PowerShell: wsl --set-version " + distro + " 2", "wsl --set-default-version 2", "Then open the distribution again and rerun doctor"}})
		default:
			p.OK(fmt.Sprintf("%s on WSL 2 (kernel %s)", orUnknown(p.Snap.Platform.Distro), orUnknown(w.Kernel)))
		}
	},
}

// Container fails when the process runs in a container started without GPU
// access while the host has one.
var Container = &Check{
	ID:       "platform.container",
	Link:     LinkPlatform,
	Title:    "Container GPU access",
	Causes:   []string{"container_runtime_no_gpu"},
	Requires: []string{"platform", "devices"},
	Doc: `Inside a container the GPU is visible only when the runtime passes the
device nodes and driver libraries in (docker run --gpus all with the NVIDIA
Container Toolkit, or a CDI device). /proc and /sys still show the host's
driver and PCI bus, so a container that sees an NVIDIA GPU there but has no
/dev/nvidia* nodes was started without GPU access.`,
	Run: func(p *Pass) {
		s := p.Snap
		if s.Platform.Container == "" {
			p.OK("not in a container")
			return
		}
		if isWSL2(s) {
			p.OK("container on WSL 2")
			return
		}
		if len(gpuNodes(s)) > 0 {
			p.OK(fmt.Sprintf("%s container with GPU device nodes", s.Platform.Container))
			return
		}
		ev := Ev{"container": s.Platform.Container, "hints": s.Platform.ContainerHints, "dev_nvidia_nodes": 0}
		fix := Fix{ID: FixContainerGPUs, Title: "Start the container with GPU access", Risk: RiskSafe, Manual: true,
			Steps: containerSteps(s.Platform.Container)}
		hostDriver := s.Modules.KernelDriverVersion != "" || len(nvidiaPCI(s)) > 0
		if hostDriver {
			ev["host_driver"] = s.Modules.KernelDriverVersion
			ev["nvidia_pci_devices"] = len(nvidiaPCI(s))
			p.Error("container_runtime_no_gpu", "This "+s.Platform.Container+" container was started without GPU access",
				"The host has an NVIDIA GPU (seen in /proc and /sys) but no /dev/nvidia* device node was passed into the container.", ev, fix)
			return
		}
		p.Warn("container_runtime_no_gpu", "Running in a "+s.Platform.Container+" container with no GPU device nodes",
			"If the host has a GPU, the container was started without GPU access.", ev, fix)
	},
}

func containerSteps(kind string) []string {
	switch kind {
	case "kubernetes":
		return []string{"Request the GPU in the pod spec: resources: {limits: {nvidia.com/gpu: 1}}", "Make sure the NVIDIA device plugin (or GPU Operator) runs on the node"}
	case "podman":
		return []string{"On the host: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml", "podman run --device nvidia.com/gpu=all ..."}
	}
	return []string{"On the host, install the NVIDIA Container Toolkit: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
		"sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
		"Start the container with: docker run --gpus all ..."}
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "unknown"
	}
	return s
}
