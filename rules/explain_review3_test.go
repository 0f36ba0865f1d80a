package rules

import (
	"strings"
	"testing"
)

// review3Cases are the third reviewer's probes (session D,
// /work/coord/review3/FINDINGS.md): answers the cues, the trust audit or
// the new signatures got wrong on pastes written the way the field
// writes them. Each case failed before its fix.
var review3Cases = []judgmentCase{
	// R3-1: an AMD APU's integrated graphics (pci.ids 'Renoir [Radeon RX
	// Vega 6 (Ryzen 4000/5000 Mobile Series)]', Windows' 'Radeon RX Vega
	// 10 Graphics') is no cue of a machine without an NVIDIA GPU: laptops
	// pair it with one, which `lspci | grep VGA` often hides (a 3D
	// controller).
	{
		name: "renoir_igpu_is_no_amd_card",
		log: `$ lspci | grep -i vga
05:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Renoir [Radeon RX Vega 6 (Ryzen 4000/5000 Mobile Series)] (rev c6)
UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"no_nvidia_gpu"},
	},
	{
		name: "ryzen_vega_10_graphics_is_no_amd_card",
		log: `Laptop: Ryzen 7 3750H with Radeon RX Vega 10 Graphics, Ubuntu 22.04
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"no_nvidia_gpu"},
	},
	// The discrete RX Vega 56/64 still are.
	{
		name: "rx_vega_64_card_is_a_cue",
		log: `GPU: AMD Radeon RX Vega 64
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "no_nvidia_gpu", decided: false,
	},
	// R3-2: a metrics table's rows ('layer-1 | 0.53 | 0.61') are no
	// Compose log prefix.
	{
		name: "metrics_table_is_no_compose_prefix",
		log: `  layer-1   | 0.532 | 0.611
  layer-2   | 0.401 | 0.577
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"container_runtime_no_gpu"},
	},
	// R3-3: SQL's 'FROM metrics' is no Dockerfile base image.
	{
		name: "sql_from_is_no_dockerfile",
		log: `SELECT *
FROM metrics
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"container_runtime_no_gpu"},
	},
	{
		name: "dockerfile_from_with_a_path_is_an_image",
		log: `FROM registry.example.com:5000/team/trainer
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "container_runtime_no_gpu", decided: false,
	},
	// R3-4: a GPU instance type named (AWS G4dn) outweighs a CPU
	// instance type named beside it.
	{
		name: "gpu_instance_type_outweighs_a_cpu_one",
		log: `UserWarning: CUDA initialization: Found no NVIDIA driver on your system.
I'm on a g4dn.xlarge (launched from my m5.large bastion).
`,
		cause: "driver_missing", decided: false, notCause: []string{"no_nvidia_gpu"},
	},
	{
		name: "amd_g4ad_instance_is_no_nvidia_gpu",
		log: `Instance type: g4ad.xlarge
Instance type: m5.large
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "no_nvidia_gpu", decided: false,
	},
	// R3-5: nvidia-smi's header under the same Compose prefix as the
	// failure: the container was given the driver, so 'no device' there
	// is not a container started without GPU access.
	{
		name: "compose_container_own_smi_shows_the_driver",
		log: `trainer-1  | +-----------------------------------------------------------------------------+
trainer-1  | | NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
trainer-1  | Traceback (most recent call last):
trainer-1  | RuntimeError: CUDA error: no CUDA-capable device is detected
`,
		notCause: []string{"container_runtime_no_gpu"}, decided: false, cause: "cuda_visible_devices_hides_gpu",
	},
	// The host's nvidia-smi (no prefix) beside the container's failure
	// is the usual story of a container started without GPUs.
	{
		name: "host_smi_and_compose_failure_stay_the_container",
		log: `| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
trainer-1  | RuntimeError: CUDA error: no CUDA-capable device is detected
`,
		cause: "container_runtime_no_gpu", decided: false,
	},
	// R3-6: torch.cuda.is_available() False from a Python on macOS is
	// the Mac (as framework.torch_cpu_build reads it since 62eb135),
	// not a CPU-only wheel to replace.
	{
		name: "macos_python_cuda_query_false",
		log: `Platform: macOS-13.4-x86_64-i386-64bit
>>> import torch
>>> torch.cuda.is_available()
False
`,
		cause: "no_nvidia_gpu", decided: true,
	},
	{
		name: "amd_card_cuda_query_false_is_a_cue",
		log: `GPU: AMD Radeon RX 6700 XT
>>> torch.cuda.is_available()
False
`,
		cause: "no_nvidia_gpu", decided: false,
	},
	// R3-7: CUDA's 803 (display driver / CUDA driver combination) with
	// nvidia-smi's header in the paste: NVML started, so the driver's own
	// libraries match the kernel module and a reboot changes nothing; the
	// libcuda loaded is another one (cuda-compat, a stray copy).
	{
		name: "err803_with_working_smi_is_no_reboot",
		log: `$ nvidia-smi
| NVIDIA-SMI 450.80.02    Driver Version: 450.80.02    CUDA Version: 11.0     |
$ python -c "import tensorflow as tf; tf.zeros(1)"
2023-01-01 10:00:00.000000: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:267] failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display driver / cuda driver combination
`,
		cause: "driver_library_mismatch", decided: true, noFix: []string{"reboot"}, detail: "cuda-compat",
	},
	{
		name: "err803_number_with_working_smi_is_no_reboot",
		log: `| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: [803] Call to cuInit results in UNKNOWN_CUDA_ERROR
`,
		cause: "driver_library_mismatch", decided: true, noFix: []string{"reboot"},
	},
	// The kernel module's version alone (/proc) with NVML refusing keeps
	// the reboot: that is the partial upgrade.
	{
		name: "err803_with_nvml_mismatch_keeps_reboot",
		log: `$ nvidia-smi
Failed to initialize NVML: Driver/library version mismatch
$ cat /proc/driver/nvidia/version
NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023
failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display driver / cuda driver combination
`,
		cause: "driver_library_mismatch", decided: true, fixes: strp3("reboot"),
	},
	// R3-8: NVML_ERROR_OPERATING_SYSTEM ('GPU access blocked by the
	// operating system') is shared (WSL 2's Windows driver, a container's
	// device cgroup, the host): no 'Root cause' and no nvidia-modprobe
	// from the line alone; under WSL no ldconfig fix (NVML loaded).
	{
		name: "nvml_os_blocked_alone_is_undecided",
		log: `$ nvidia-smi
Failed to initialize NVML: GPU access blocked by the operating system
Failed to properly shut down NVML: GPU access blocked by the operating system
`,
		cause: "device_node_permission", decided: false, noFix: []string{"create-device-nodes", "device-group"},
	},
	{
		name: "nvml_os_blocked_under_wsl_no_ldconfig",
		log: `Linux DESKTOP 5.15.133.1-microsoft-standard-WSL2 #1 SMP Thu Oct 5 21:02:42 UTC 2023 x86_64 GNU/Linux
$ nvidia-smi
Failed to initialize NVML: GPU access blocked by the operating system
`,
		cause: "wsl_libcuda_not_found", decided: false, noFix: []string{"wsl-ldconf"}, detail: "TCC",
	},
	// 'Insufficient Permissions' (NVML_ERROR_NO_PERMISSION) still decides.
	{
		name: "nvml_insufficient_permissions_still_decides",
		log: `Failed to initialize NVML: Insufficient Permissions
`,
		cause: "device_node_permission", decided: true,
	},
	// R3-9: cuDNN failing to load its sub-library because the driver's
	// libcuda.so is missing is no missing cuDNN (and gets no TensorFlow
	// fix on a paste that names no framework).
	{
		name: "cudnn_sublibrary_needs_libcuda_is_no_missing_cudnn",
		log: `Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory
Aborted (core dumped)
`,
		cause: "driver_missing", decided: false, notCause: []string{"libcudnn_missing"}, noFix: []string{"pip-install-tensorflow"},
	},
	{
		name: "cudnn_sublibrary_needs_libcuda_under_wsl",
		log: `$ uname -r
5.15.133.1-microsoft-standard-WSL2
Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory
`,
		cause: "wsl_libcuda_not_found", decided: true, notCause: []string{"libcudnn_missing"}, noFix: []string{"pip-install-tensorflow"},
	},
	// The sub-library itself missing is still a missing cuDNN.
	{
		name: "cudnn_sublibrary_itself_missing",
		log: `Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory
`,
		cause: "libcudnn_missing", decided: true,
	},
	// R3-10: nvidia-container-toolkit in dpkg's list is a package on the
	// host, not a program run in a container: no 'Root cause' container
	// started without GPU access, no 'start it with --gpus'.
	{
		name: "container_toolkit_package_is_no_container",
		log: `$ dpkg -l | grep nvidia-container
ii  nvidia-container-toolkit       1.14.3-1   amd64   NVIDIA Container toolkit
$ python3 -c "import torch; torch.zeros(1).cuda()"
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"container_runtime_no_gpu"}, noFix: []string{"container-gpus"},
	},
	// R3-11: pip refusing a macOS arm64 wheel says the machine is not
	// that Mac.
	{
		name: "refused_mac_wheel_is_no_apple_silicon",
		log: `$ pip install torch-2.1.0-cp310-none-macosx_11_0_arm64.whl
ERROR: torch-2.1.0-cp310-none-macosx_11_0_arm64.whl is not a supported wheel on this platform.
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"no_nvidia_gpu"},
	},
	// R3-12: 'print(torch.__version__, torch.cuda.is_available())'
	// answering '2.3.0 False' is CUDA unavailable, not 'no problem'.
	{
		name: "version_and_false_on_one_line",
		log: `$ python -c "import torch; print(torch.__version__, torch.cuda.is_available())"
2.3.0 False
`,
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name: "version_true_false_is_two_answers",
		log: `$ python -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.backends.mps.is_available())"
2.3.0+cu121 True False
`,
		cause: "", notFinding: []string{"framework.cuda_query_false"},
	},
	// R3-14: XLA's autotuner logging 'ptxas too old. Falling back to the
	// driver to compile.' at warning level goes on with the driver's
	// compiler (the run trains): a warning, no 'Root cause' error.
	{
		name: "ptxas_autotuner_fallback_is_a_warning",
		log: `2023-06-01 10:00:00.000000: W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:231] Falling back to the CUDA driver for PTX compilation; ptxas does not support CC 8.9
2023-06-01 10:00:00.000002: W tensorflow/compiler/xla/stream_executor/gpu/redzone_allocator.cc:318] UNIMPLEMENTED: ptxas ptxas too old. Falling back to the driver to compile.
Relying on driver to perform ptx compilation.
Epoch 1/3
100/100 [==============================] - 3s 10ms/step - loss: 0.3
`,
		cause: "xla_ptxas_or_libdevice_missing", decided: true, notFinding: []string{"xla.ptxas_too_old"},
	},
	// Raised as an error it still is one.
	{
		name: "ptxas_too_old_raised_is_an_error",
		log: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: /usr/local/cuda/bin/ptxas ptxas too old. Falling back to the driver to compile.
`,
		cause: "xla_ptxas_or_libdevice_missing", decided: true,
	},
	// R3-15: pip installing the docker-compose package and 'which
	// kubectl' are no container: no 'Root cause' container started
	// without GPU access.
	{
		name: "pip_docker_compose_package_is_no_container",
		log: `$ pip install docker-compose torch
Collecting docker-compose
Successfully installed docker-compose-1.29.2 torch-2.1.0
$ python -c "import torch; torch.zeros(1).cuda()"
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"container_runtime_no_gpu"},
	},
	{
		name: "which_kubectl_is_no_container",
		log: `$ which kubectl
/usr/local/bin/kubectl
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"container_runtime_no_gpu"},
	},
	{
		name: "kubectl_exec_is_a_container",
		log: `$ kubectl exec -it trainer-0 -- python -c "import torch; torch.zeros(1).cuda()"
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "container_runtime_no_gpu", decided: true,
	},
	// R3-16: a log collector's prefix on every line (kubectl logs of a
	// node's CRI files, a GitHub Actions job log, journald) hid the
	// answer lines: error 35 with nvidia-smi's CUDA 12.2 and torch
	// 2.0.1+cu118 became 'Root cause: driver too old' (the version pair
	// that says otherwise was not read).
	{
		name: "cri_prefixed_err35_contradicted_stays_undecided",
		log: `2024-05-01T10:00:00.123456789Z stdout F | NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
2024-05-01T10:00:01.123456789Z stdout F $ python -c "import torch; print(torch.__version__); torch.zeros(1).cuda()"
2024-05-01T10:00:01.223456789Z stdout F 2.0.1+cu118
2024-05-01T10:00:01.323456789Z stderr F RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "actions_prefixed_version_false_answer",
		log: `2024-05-02T10:11:12.1234567Z $ python -c "import torch; print(torch.__version__, torch.cuda.is_available())"
2024-05-02T10:11:13.1234567Z 2.3.0+cpu False
`,
		cause: "framework_cpu_only_build", decided: true,
	},
	{
		name: "journald_prefixed_macos_python",
		log: `Jan 10 10:00:00 mac python3[1234]: Platform: macOS-13.4-x86_64-i386-64bit
Jan 10 10:00:01 mac python3[1234]: >>> torch.cuda.is_available()
Jan 10 10:00:01 mac python3[1234]: False
`,
		cause: "no_nvidia_gpu", decided: true,
	},
	// R3-17: nvidia-smi listing the GPU after an NGC container's start
	// banner ran in that container: it was given the GPU, so 'no device'
	// there is not a container started without GPU access.
	{
		name: "ngc_banner_then_smi_lists_the_gpu",
		log: `NVIDIA Release 24.01 (build 80741402)
Container image Copyright (c) 2024, NVIDIA CORPORATION & AFFILIATES. All rights reserved.
root@abc:/workspace# nvidia-smi -L
GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-0d3e1234)
root@abc:/workspace# python -c "import torch; torch.zeros(1).cuda()"
RuntimeError: CUDA error: no CUDA-capable device is detected
`,
		cause: "cuda_visible_devices_hides_gpu", decided: false, notCause: []string{"container_runtime_no_gpu"},
	},
	// The host's nvidia-smi before the container started keeps the
	// container reading.
	{
		name: "host_smi_before_ngc_banner_stays_the_container",
		log: `$ nvidia-smi -L
GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-0d3e1234)
NVIDIA Release 24.01 (build 80741402)
Container image Copyright (c) 2024, NVIDIA CORPORATION & AFFILIATES. All rights reserved.
RuntimeError: CUDA error: no CUDA-capable device is detected
`,
		cause: "container_runtime_no_gpu", decided: false,
	},
	// R3-18: the Windows nvidia-smi table (TCC) beside NVML refused in
	// Linux is WSL 2 not given the GPU, undecided.
	{
		name: "nvml_os_blocked_beside_windows_tcc",
		log: `PS C:\Users\me> nvidia-smi
| NVIDIA-SMI 555.85                 Driver Version: 555.85         CUDA Version: 12.5     |
|   0  NVIDIA L40S                  TCC   |   00000000:61:00.0 Off |                    0 |
me@host:~$ nvidia-smi
Failed to initialize NVML: GPU access blocked by the operating system
`,
		cause: "wsl_libcuda_not_found", decided: false, noFix: []string{"wsl-ldconf", "create-device-nodes"}, detail: "TCC",
	},
	// R3-19: 'not WSL2' in the paste's own words is no WSL: libcuda
	// missing there got 'Root cause' WSL and the wsl-ldconf fix that
	// doctor --fix applies.
	{
		name: "not_wsl2_said_is_no_wsl",
		log: `OS: Ubuntu 22.04 on bare metal (not WSL2)
ImportError: libcuda.so.1: cannot open shared object file: No such file or directory
`,
		notCause: []string{"wsl_libcuda_not_found"}, noFix: []string{"wsl-ldconf"}, cause: "driver_missing", decided: false,
	},
	{
		name: "wsl2_said_still_wsl",
		log: `OS: Ubuntu 22.04 on WSL2
ImportError: libcuda.so.1: cannot open shared object file: No such file or directory
`,
		cause: "wsl_libcuda_not_found", decided: true,
	},
	// R3-21: 'lspci | head' on a laptop stops among the chipset's 00:xx
	// functions, before a discrete GPU at 01:00.0: its host bridge is no
	// cue of a machine without an NVIDIA GPU.
	{
		name: "lspci_head_is_no_cue",
		log: `$ lspci | head -4
00:00.0 Host bridge: Intel Corporation 12th Gen Core Processor Host Bridge/DRAM Registers (rev 02)
00:02.0 VGA compatible controller: Intel Corporation Alder Lake-P Integrated Graphics Controller (rev 0c)
00:04.0 Signal processing controller: Intel Corporation Alder Lake Innovation Platform Framework Processor Participant (rev 02)
00:06.0 PCI bridge: Intel Corporation 12th Gen Core Processor PCI Express x4 Controller #0 (rev 02)
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"no_nvidia_gpu"},
	},
	// The whole listing still is one.
	{
		name: "lspci_whole_listing_still_a_cue",
		log: `$ lspci
00:00.0 Host bridge: Intel Corporation 440FX - 82441FX PMC [Natoma] (rev 02)
00:01.0 ISA bridge: Intel Corporation 82371SB PIIX3 ISA [Natoma/Triton II]
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "no_nvidia_gpu", decided: false,
	},
	// Final review: a word about a Mac is not the platform. A wheel name
	// in pip -v's link list, prose naming an M1, or the words next to an
	// NVIDIA GPU on the bus decided "no NVIDIA GPU: a Mac with Apple
	// silicon"; only the platform's own strings decide, the rest is a cue.
	{
		name: "wheel_link_list_is_no_mac",
		log: `Linux gpu-box 5.15.0-91-generic #101-Ubuntu SMP x86_64 GNU/Linux
  Found link https://download.pytorch.org/whl/cpu/torch-2.2.0-cp311-none-macosx_11_0_arm64.whl (from https://download.pytorch.org/whl/cpu/torch/), version: 2.2.0
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"no_nvidia_gpu"},
	},
	{
		name: "prose_m1_is_no_platform",
		log: `Works fine on my Apple M1 laptop, fails on the server:
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "no_nvidia_gpu", decided: false,
	},
	{
		name: "nvidia_gpu_on_bus_outweighs_mac_words",
		log: `Chip: Apple M1 (my laptop); the server:
01:00.0 VGA compatible controller: NVIDIA Corporation TU106 [GeForce RTX 2060] (rev a1)
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: true, notCause: []string{"no_nvidia_gpu"},
	},
	// lspci through a filter shows only what the filter kept.
	{
		name: "lspci_grep_is_cut_short",
		log: `$ lspci | grep -i intel
00:00.0 Host bridge: Intel Corporation 8th Gen Core Processor Host Bridge/DRAM Registers (rev 07)
00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 630 (Mobile)
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: false, notCause: []string{"no_nvidia_gpu"},
	},
	// The platform's own strings still decide.
	{
		name: "macos_arm64_platform_decides",
		log: `Platform: macOS-14.2.1-arm64-arm-64bit
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "no_nvidia_gpu", decided: true,
	},
}

func strp3(s string) *string { return &s }

// R3-13: a multi-framework fix (framework-gpu-build) keeps only the
// steps of the finding's framework: a JAX paste's compact 'fix:' line
// (the first step) was PyTorch's reinstall.
func TestReview3FixStepsFollowTheFramework(t *testing.T) {
	for _, c := range []struct{ log, want, not string }{
		{"WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n", "JAX:", "PyTorch:"},
		{"AssertionError: Torch not compiled with CUDA enabled\n", "PyTorch:", "JAX:"},
	} {
		rep := ExplainText(c.log)
		found := false
		for _, f := range rep.Findings {
			for _, fx := range f.Fixes {
				if fx.ID != "framework-gpu-build" {
					continue
				}
				found = true
				if len(fx.Steps) == 0 || !strings.HasPrefix(fx.Steps[0], c.want) {
					t.Errorf("%q: first step %q, want %s", c.log, fx.Steps, c.want)
				}
				for _, s := range fx.Steps {
					if strings.HasPrefix(s, c.not) {
						t.Errorf("%q: step %q is for another framework", c.log, s)
					}
				}
			}
		}
		if !found {
			t.Errorf("%q: no framework-gpu-build fix", c.log)
		}
	}
}

// R3-20: CuPy's own module path (cupy_backends.cuda.api.runtime) names
// CuPy: the finding is CuPy's, so no TensorFlow fix fits it.
func TestReview3CupyBackendsIsCupy(t *testing.T) {
	if got := lineFrameworksOf("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"); len(got) != 1 || got[0] != "cupy" {
		t.Errorf("frameworks %v, want [cupy]", got)
	}
	rep := ExplainText("cupy_backends.cuda.libs.cudnn.CuDNNError: cuDNN library not found: libcudnn.so.8: cannot open shared object file: No such file or directory\n")
	for _, f := range rep.Findings {
		for _, fx := range f.Fixes {
			if fx.ID == "pip-install-tensorflow" {
				t.Errorf("%s: TensorFlow fix on a CuPy line", f.ID)
			}
		}
	}
}

func TestReview3Probes(t *testing.T) {
	for _, c := range review3Cases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
