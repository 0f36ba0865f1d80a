package rules

import "testing"

// trustCases: decided ("Root cause:") answers audited against what makes a
// program print their line (issue 15, trust on never-seen logs). Where the
// line's source shows that several causes print it, the answer is "most
// likely" unless the paste holds the fact that decides; each case below was
// decided before and is written from the message's source, not from one log.
var trustCases = []judgmentCase{
	// moby registers its "nvidia" device driver only when the daemon finds
	// nvidia-container-runtime-hook on its PATH (daemon/devices_nvidia_linux.go
	// init), and any --gpus request without a registered driver fails with
	// incompatibleDeviceRequest (daemon/errors.go: 'could not select device
	// driver %q with capabilities: %v'). The line says the daemon has no
	// NVIDIA hook; not whether the machine has an NVIDIA GPU (Docker
	// Desktop on a Mac, an AMD-only or CPU-only host print it too).
	{
		name:  "docker_no_gpu_device_driver_alone_is_undecided",
		log:   "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n",
		cause: "container_runtime_no_gpu", decided: false,
	},
	{
		name:  "docker_no_nvidia_runtime_alone_is_undecided",
		log:   "docker: Error response from daemon: unknown or invalid runtime name: nvidia.\n",
		cause: "container_runtime_no_gpu", decided: false,
	},
	{
		name: "docker_no_gpu_device_driver_on_apple_silicon",
		log: `$ uname -a
Darwin mbp.local 23.1.0 Darwin Kernel Version 23.1.0: Mon Oct  9 21:27:24 PDT 2023; root:xnu-10002.41.9~6/RELEASE_ARM64_T6000 arm64
$ docker compose up
Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]
`,
		cause: "no_nvidia_gpu", decided: true, notCause: []string{"container_runtime_no_gpu"},
	},
	{
		name: "docker_no_gpu_device_driver_with_the_host_driver_shown",
		log: `$ nvidia-smi
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
$ docker run --rm --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi
docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].
`,
		cause: "container_runtime_no_gpu", decided: true,
	},
	{
		name: "docker_no_gpu_device_driver_with_an_nvidia_gpu_on_the_bus",
		log: `$ lspci | grep -i nvidia
01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)
docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].
`,
		cause: "container_runtime_no_gpu", decided: true,
	},
	// libnvidia-container's 'requirement error' (src/cli/configure.c) is the
	// image's NVIDIA_REQUIRE_* checked against the host's driver and GPU:
	// the runtime is there and ran. 'invalid expression' (src/cli/dsl.c
	// dsl_evaluate) is a requirement this nvidia-container-cli cannot
	// evaluate: a rule it does not know (an image newer than the host's
	// stack) or a value it cannot compare. Not a container started without
	// GPUs, and not decided.
	{
		name: "nvc_requirement_invalid_expression_is_not_a_missing_runtime",
		log: `container_linux.go:262: starting container process caused "process_linux.go:339: container init caused \"process_linux.go:322: running prestart hook 0 caused \\\"error running hook: exit status 1, stdout: , stderr: exec command: [/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig.real --device=all --compute --utility --require=cuda>=11.0 brand=tesla,driver>=418,driver<419 --pid=1234 /var/lib/docker/overlay2/abc/merged]\\\\nnvidia-container-cli: requirement error: invalid expression\\\\n\\\"\""
`,
		cause: "driver_too_old_for_cuda", decided: false, notCause: []string{"container_runtime_no_gpu"},
	},
	// Error 802 is CUDA's 'system not yet ready' (a required driver daemon is
	// not running). Fabric Manager is that daemon only on NVSwitch systems
	// (HGX/DGX, SXM modules: NVIDIA Fabric Manager User Guide); a GeForce,
	// TITAN, Quadro or RTX workstation card is never in one, so the paste
	// that names one rules Fabric Manager out (review E18).
	{
		name: "error_802_on_a_geforce_is_not_fabric_manager",
		log: `>>> torch.cuda.is_available()
UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)
False
$ nvidia-smi
|   0  NVIDIA GeForce RTX 3090    Off  | 00000000:01:00.0 Off |                  N/A |
`,
		decided: false, notCause: []string{"fabric_manager_not_running"},
		cause: "cuinit_unknown_error",
	},
	{
		name: "error_802_on_a_workstation_card_is_not_fabric_manager",
		log: `RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized
$ nvidia-smi -L
GPU 0: NVIDIA RTX A6000 (UUID: GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)
`,
		decided: false, notCause: []string{"fabric_manager_not_running"},
		cause: "cuinit_unknown_error",
	},
	{
		name:  "error_802_alone_stays_most_likely_fabric_manager",
		log:   "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized\n",
		cause: "fabric_manager_not_running", decided: false,
	},
}

func TestTrustAudit(t *testing.T) {
	for _, c := range trustCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
