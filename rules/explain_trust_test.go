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

	// NGC images' entrypoint prints 'The NVIDIA Driver was not detected'
	// when it finds no libcuda.so.1 or /dev/nvidiactl. WSL 2 has no
	// /dev/nvidiactl (its GPU is /dev/dxg), so there the banner shows with
	// a working GPU (NVIDIA/nvidia-docker#1548; CUDA on WSL user guide):
	// under WSL the banner does not decide.
	{
		name: "ngc_banner_under_wsl_is_undecided",
		log: `me@DESKTOP-AB12CDE:/mnt/c/Users/me$ docker run --gpus all -it nvcr.io/nvidia/pytorch:23.10-py3
WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.
   Use the NVIDIA Container Toolkit to start this container with GPU support; see
`,
		cause: "container_runtime_no_gpu", decided: false,
	},
	{
		name:  "ngc_banner_alone_stays_decided",
		log:   "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n",
		cause: "container_runtime_no_gpu", decided: true,
	},
	// nvidia-container-cli on WSL: dxcore found no adapter. The Windows
	// driver lacks WSL support or is missing, WSL is outdated, or the
	// Windows machine has no NVIDIA GPU at all (threads: a laptop without
	// one, Windows without a dedicated GPU): not decided.
	{
		name:  "wsl_no_adapters_alone_is_undecided",
		log:   "nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: unknown.\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	// The device plugin's NVML messages name both readings themselves: 'If
	// this is a GPU node, did you configure the NVIDIA Container Toolkit?'
	// and 'If this is not a GPU node, you should set up a toleration or
	// nodeSelector' (a DaemonSet runs on CPU-only nodes too): decided only
	// where the paste shows the node's GPU or driver.
	{
		name: "device_plugin_nvml_missing_alone_is_undecided",
		log: `I0506 17:45:45.421000       1 main.go:256] Retreiving plugins.
E0506 17:45:45.421956       1 factory.go:112] Incompatible strategy detected auto
E0506 17:45:45.421965       1 factory.go:113] If this is a GPU node, did you configure the NVIDIA Container Toolkit?
E0506 17:45:45.421970       1 factory.go:115] If this is not a GPU node, you should set up a toleration or nodeSelector to only deploy this plugin on GPU nodes
`,
		cause: "container_runtime_no_gpu", decided: false,
	},
	{
		name: "device_plugin_nvml_missing_on_a_node_with_the_driver",
		log: `$ nvidia-smi
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
E0506 17:45:45.421956       1 factory.go:112] Incompatible strategy detected auto
E0506 17:45:45.421965       1 factory.go:113] If this is a GPU node, did you configure the NVIDIA Container Toolkit?
`,
		cause: "container_runtime_no_gpu", decided: true,
	},
	// nvidia-smi --help-query-gpu: the current PCIe link generation and
	// width 'may be reduced when the GPU is not in use'. lspci's
	// '(downgraded)' read on an idle GPU is no proof of a bad link.
	{
		name:  "lspci_link_downgraded_is_undecided",
		log:   "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)\n",
		cause: "pcie_link_degraded", decided: false,
	},
	// Caffe2's 'Found an unknown error' is cudaGetDeviceCount returning
	// cudaErrorUnknown: the same bare unknown error as CUDA_ERROR_UNKNOWN,
	// undecided unless the paste shows a loaded driver.
	{
		name:  "caffe2_unknown_error_alone_is_undecided",
		log:   "E0508 18:40:25.340945  8217 common_gpu.cc:55] Found an unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. I will set the available devices to be zero.\n",
		cause: "cuinit_unknown_error", decided: false,
	},
	{
		name: "caffe2_unknown_error_with_the_driver_shown",
		log: `| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |
E0508 18:40:25.340945  8217 common_gpu.cc:55] Found an unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. I will set the available devices to be zero.
`,
		cause: "cuinit_unknown_error", decided: true,
	},
	// 'undefined symbol: X, version libY.so.N' says a library of another
	// build was loaded: another copy on LD_LIBRARY_PATH, or a set of pip
	// wheels that do not go together (PyTorch's own nvJitLink packaging,
	// pytorch/pytorch#131312 fixed by #131295; #134929). Decided
	// LD_LIBRARY_PATH only where the paste shows it pointing at a CUDA.
	{
		name:  "undefined_versioned_symbol_alone_is_undecided",
		log:   "ImportError: /venv/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12\n",
		cause: "ld_library_path_pollution", decided: false,
	},
	{
		name: "undefined_versioned_symbol_with_a_cuda_on_ld_library_path",
		log: `$ echo $LD_LIBRARY_PATH
/usr/local/cuda-12.1/lib64:
ImportError: /venv/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12
`,
		cause: "ld_library_path_pollution", decided: true,
	},
	// XLA compiles its kernels at run time for the device's own compute
	// capability (ptxas, or the driver from PTX), so a JAX/XLA cubin with
	// 'no binary for this GPU' is not an architecture missing from the
	// build: a PTX or cubin newer than the driver can load is the likelier
	// reading (jax-ml/jax#5723: nvcc 11.7 with a driver of CUDA 11.4;
	// jaxlib later fell back when the driver is too old). Undecided.
	{
		name: "jax_no_kernel_image_is_not_a_missing_architecture",
		log: `jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to load in-memory CUBIN: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for execution on the device
`,
		cause: "driver_too_old_for_cuda", decided: false, notCause: []string{"unsupported_compute_capability"},
	},
	{
		name:  "torch_no_kernel_image_stays_decided",
		log:   "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
		cause: "unsupported_compute_capability", decided: true,
	},

	// nvidia-container-cli asks the host's NVML about the driver and the
	// GPUs before it sets up the container (src/cli/configure.c 'detection
	// error'): an NVML failure there is the host driver's, not the
	// container runtime's. 'unknown error': a driver install problem (an
	// NVIDIA maintainer in NVIDIA/nvidia-docker#1348, fixed by another
	// driver), 'function not found': an NVML too old for this cli
	// (#1280, #579 with a 340 driver), 'GPU is lost' (nvml.h
	// NVML_ERROR_GPU_IS_LOST: fallen off the bus or otherwise
	// inaccessible).
	{
		name:  "nvc_nvml_unknown_error_is_the_host_driver",
		log:   "nvidia-container-cli: detection error: nvml error: unknown error: unknown.\n",
		cause: "driver_missing", decided: false, notCause: []string{"container_runtime_no_gpu"}, noFix: []string{"install-driver"},
	},
	{
		name:  "nvc_nvml_function_not_found_is_an_old_driver",
		log:   "nvidia-container-cli: detection error: nvml error: function not found: unknown.\n",
		cause: "driver_too_old_for_cuda", decided: false, notCause: []string{"container_runtime_no_gpu"},
	},
	{
		name:  "nvc_nvml_gpu_is_lost_is_the_gpu",
		log:   "nvidia-container-cli: detection error: nvml error: gpu is lost: unknown.\n",
		cause: "gpu_hardware_xid_error", decided: true,
	},
	{
		name:  "nvc_mount_error_stays_the_runtime",
		log:   "nvidia-container-cli: mount error: open failed: /sys/fs/cgroup/devices/user.slice/devices.allow: permission denied: unknown\n",
		cause: "container_runtime_no_gpu", decided: true,
	},
	// pip says '(from versions: none)' whenever its index gave it nothing
	// it can install, and when it could not reach the index at all ('Could
	// not fetch URL ...: There was a problem confirming the ssl
	// certificate', 'Retrying ... after connection broken'): with those
	// lines in the paste, no wheel for this Python is not the only reading.
	{
		name: "pip_no_versions_offline_is_undecided",
		log: `WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/tensorflow/
ERROR: Could not find a version that satisfies the requirement tensorflow (from versions: none)
ERROR: No matching distribution found for tensorflow
`,
		cause: "python_version_unsupported", decided: false,
	},
	{
		name: "pip_no_versions_alone_stays_decided",
		log: `ERROR: Could not find a version that satisfies the requirement tensorflow (from versions: none)
ERROR: No matching distribution found for tensorflow
`,
		cause: "python_version_unsupported", decided: true,
	},
	// nvidia-modprobe prints 'NVIDIA: no NVIDIA devices found' when the PCI
	// bus has no NVIDIA device. Under WSL 2 it never does (the GPU is
	// /dev/dxg, not a PCI function), and only a Linux driver installed
	// inside WSL brings nvidia-modprobe: not no GPU, undecided.
	{
		name: "nvidia_modprobe_no_devices_under_wsl",
		log: `me@DESKTOP-AB12CDE:~$ ./deviceQuery
NVIDIA: no NVIDIA devices found
cudaGetDeviceCount returned 100
`,
		cause: "wsl_linux_driver_installed_inside_wsl", decided: false, notCause: []string{"no_nvidia_gpu"},
	},

	// nvidia-smi inside a container lists no processes: NVML reports host
	// PIDs, which the container's PID namespace does not show, the
	// container's own programs included. Memory used by no listed process
	// there may be this container's own idle program (a notebook kernel
	// still holding it), not another's: undecided in a container.
	{
		name: "smi_memory_with_no_listed_process_in_a_container",
		log: `root@4f5e6d7c8b9a:/workspace# nvidia-smi
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 3090        Off |   00000000:01:00.0 Off |                  N/A |
|  0%   38C    P8             21W /  350W |   22816MiB /  24576MiB |      0%      Default |
+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|=========================================================================================|
|  No running processes found                                                             |
+-----------------------------------------------------------------------------------------+
`,
		cause: "gpu_out_of_memory_other_process", decided: false,
	},

	// CUDA_VISIBLE_DEVICES=1 and then no GPU at all: either the machine
	// has no GPU 1, or CUDA sees no GPU whatever the variable says (no
	// driver, a container without GPUs, no NVIDIA GPU). The count of GPUs
	// decides (nvidia-smi); without it the variable is the likelier
	// reading, not a fact, as index 0 is no proof of the opposite.
	{
		name: "cvd_index_with_no_device_and_no_gpu_count_is_undecided",
		log: `$ CUDA_VISIBLE_DEVICES=1 python train.py
RuntimeError: No CUDA GPUs are available
`,
		cause: "cuda_visible_devices_hides_gpu", decided: false,
	},
	{
		name: "cvd_index_past_the_gpus_nvidia_smi_lists_stays_decided",
		log: `$ nvidia-smi -L
GPU 0: NVIDIA GeForce RTX 3060 (UUID: GPU-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d)
$ CUDA_VISIBLE_DEVICES=1 python train.py
RuntimeError: No CUDA GPUs are available
`,
		cause: "cuda_visible_devices_hides_gpu", decided: true,
	},
	{
		name: "cvd_minus_one_stays_decided",
		log: `$ CUDA_VISIBLE_DEVICES=-1 python train.py
RuntimeError: No CUDA GPUs are available
`,
		cause: "cuda_visible_devices_hides_gpu", decided: true,
	},

	// bitsandbytes 0.37-0.41 prints 'The main issue seems to be that the
	// main CUDA runtime library was not detected' as its guess after its
	// own list of possible reasons (cuda_setup/main.py), on Windows (no
	// build there before 0.43: '[WinError 193]') as well: undecided. Its
	// 0.46+ 'Missing dependency: libX.so.N' names the library and decides.
	{
		name: "bitsandbytes_main_issue_guess_is_undecided",
		log: `CUDA SETUP: Problem: The main issue seems to be that the main CUDA runtime library was not detected.
CUDA SETUP: Solution 1: To solve the issue the libcudart.so location needs to be added to the LD_LIBRARY_PATH variable
`,
		cause: "libcudart_missing", decided: false,
	},
	{
		name:  "bitsandbytes_missing_dependency_stays_decided",
		log:   "CUDA SETUP ERROR: Missing dependency: libcusparse.so.11\n",
		cause: "libcusparse_missing", decided: true,
	},

	// CTranslate2 names the driver's own library like any other
	// ('Library libcuda.so.1 is not found or cannot be loaded'): a missing
	// libcuda is no proof of a missing driver (no NVIDIA GPU, a container
	// without GPUs, WSL), as cuda.dlopen_failed already reads it.
	{
		name:  "ctranslate2_libcuda_missing_is_undecided",
		log:   "RuntimeError: Library libcuda.so.1 is not found or cannot be loaded\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},

	// Ollama's cuInit 999 is CUDA_ERROR_UNKNOWN, read like the bare unknown
	// error (cuda.cuinit_unknown): undecided unless a driver version shows.
	{
		name:  "ollama_cuinit_999_alone_is_undecided",
		log:   "time=2025-08-30T09:03:23.843-05:00 level=WARN source=gpu.go:605 msg=\"unknown error initializing cuda driver library /usr/lib/x86_64-linux-gnu/libcuda.so.575.64.03: cuda driver library init failure: 999. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md for more information\"\n",
		cause: "cuinit_unknown_error", decided: false,
	},
	{
		name: "ollama_cuinit_999_with_the_driver_shown",
		log: `| NVIDIA-SMI 575.64.03              Driver Version: 575.64.03      CUDA Version: 12.9     |
time=2025-08-30T09:03:23.843-05:00 level=WARN source=gpu.go:605 msg="unknown error initializing cuda driver library /usr/lib/x86_64-linux-gnu/libcuda.so.575.64.03: cuda driver library init failure: 999. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md for more information"
`,
		cause: "cuinit_unknown_error", decided: true,
	},

	// nvidia-container-cli runs on the host and loads the host driver's
	// NVML through the host's loader cache: 'load library failed:
	// libnvidia-ml.so.1' is the host's driver missing (docker/for-win
	// #13835), its libraries outside the cache (nvidia-container-toolkit
	// #154), a confined Docker or WSL: not a container started without
	// GPU access, and not decided.
	{
		name: "nvc_load_library_failed_is_the_host_not_the_container",
		log: `docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'
nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.
`,
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},

	// Hugging Face's 'requires the PyTorch library but it was not found in
	// your environment' says only that the running Python lacks it; a
	// notebook does not show that it is installed in another environment
	// (explain.python_env decides that from sys.executable and the
	// framework's folder), as py.framework_not_installed already reads
	// 'No module named torch' in a notebook: undecided.
	{
		name: "hf_backend_missing_in_a_notebook_is_undecided",
		log: `---------------------------------------------------------------------------
ImportError                               Traceback (most recent call last)
Cell In[3], line 1
----> 1 model = AutoModel.from_pretrained("bert-base-uncased")
ImportError: 
AutoModel requires the PyTorch library but it was not found in your environment. Checkout the instructions on the
installation page: https://pytorch.org/get-started/locally/ and follow the ones that match your environment.
`,
		cause: "jupyter_kernel_wrong_env", decided: false,
	},

	// DKMS words every module's failed build the same way ('Error! Bad
	// return status for module build on kernel: ...'): v4l2loopback's or
	// VirtualBox's as well as nvidia's. The NVIDIA module only where the
	// paste names it (its /var/lib/dkms/nvidia folder, its dkms name).
	{
		name: "dkms_failure_of_another_module_is_not_decided_nvidia",
		log: `/etc/kernel/header_postinst.d/dkms:
 * dkms: running auto installation service for kernel 6.5.0-14-generic
Building module:
make -j16 KERNELRELEASE=6.5.0-14-generic -C /lib/modules/6.5.0-14-generic/build M=/var/lib/dkms/v4l2loopback/0.12.7/build....(bad exit status: 2)
Error! Bad return status for module build on kernel: 6.5.0-14-generic (x86_64)
Consult /var/lib/dkms/v4l2loopback/0.12.7/build/make.log for more information.
`,
		cause: "kernel_module_not_built", decided: false,
	},
	{
		name: "dkms_failure_of_the_nvidia_module_stays_decided",
		log: `Error! Bad return status for module build on kernel: 6.5.0-14-generic (x86_64)
Consult /var/lib/dkms/nvidia/535.129.03/build/make.log for more information.
`,
		cause: "kernel_module_not_built", decided: true,
	},

	// The CUDA toolkit's stubs folder on LD_LIBRARY_PATH breaks a program
	// only when the stub libcuda is what it loads; pastes show it on the
	// path with the GPU working. The folder alone is a risk, not the
	// failure: undecided unless the stub is seen loaded.
	{
		name: "ld_path_stubs_alone_is_undecided",
		log: `$ echo $LD_LIBRARY_PATH
/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:/usr/local/cuda/lib64/stubs
`,
		cause: "ld_library_path_pollution", decided: false,
	},

	// ENOSPC is not always the disk: Python's multiprocessing creates its
	// semaphores in /dev/shm (SemLock, sem_open), so under a SemLock frame
	// it is /dev/shm full (cpython#93253; Megatron-LM#878, fixed with
	// --shm-size). PyTorch's shared-memory tensors say so in their own
	// words ('unable to open shared memory object </torch_...>').
	{
		name: "enospc_from_semlock_is_dev_shm",
		log: `  File "/usr/lib/python3.8/multiprocessing/synchronize.py", line 57, in __init__
    sl = self._semlock = _multiprocessing.SemLock(
OSError: [Errno 28] No space left on device
`,
		cause: "dev_shm_unusable", decided: true, notCause: []string{"disk_full"},
	},
	{
		name:  "torch_shared_memory_object_enospc_is_dev_shm",
		log:   "RuntimeError: unable to open shared memory object </torch_27531_3521386082_0> in read-write mode: No space left on device (28)\n",
		cause: "dev_shm_unusable", decided: true, notCause: []string{"disk_full"},
	},
	{
		name:  "enospc_alone_stays_the_disk",
		log:   "OSError: [Errno 28] No space left on device: '/home/me/.cache/huggingface/hub/models--x/blobs/abc.incomplete'\n",
		cause: "disk_full", decided: true,
	},

	// PaddlePaddle's dynamic loader names the driver's libcuda.so like any
	// library: a missing libcuda is no proof of a missing driver, as
	// cuda.dlopen_failed reads it. nvidia-docker 1.0's 'driver 0.0' is it
	// finding no driver to query: no driver or no GPU.
	{
		name:  "paddle_libcuda_missing_is_undecided",
		log:   "PreconditionNotMetError: The third-party dynamic library (libcuda.so) that Paddle depends on is not configured correctly. (error code is libcuda.so: cannot open shared object file: No such file or directory)\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "nvidia_docker1_driver_0_is_undecided",
		log:   "nvidia-docker | 2017/11/07 10:00:00 Error: unsupported CUDA version: driver 0.0 < image 8.0.61\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},

	// NGC's entrypoint checks for libcuda.so.1 and /dev/nvidiactl first
	// ('The NVIDIA Driver was not detected') and only then reads the
	// driver version from /proc/driver/nvidia/version: an empty version
	// ('version  was detected') means the driver reached the container and
	// only that file was not visible, not a container started without
	// GPUs (a Triton log shows the GPU in use right after it).
	{
		name: "ngc_empty_driver_version_is_not_a_container_without_gpus",
		log: `ERROR: This container was built for NVIDIA Driver Release 515.48 or later, but
       version  was detected and compatibility mode is UNAVAILABLE.
`,
		cause: "benign_warning_only", notCause: []string{"container_runtime_no_gpu"},
	},
	{
		name: "ngc_driver_version_too_old_stays_decided",
		log: `ERROR: This container was built for NVIDIA Driver Release 530.30 or later, but
       version 470.161.03 was detected and compatibility mode is UNAVAILABLE.
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},

	// Error 35 is also what the CUDA runtime says with no driver at all
	// (cudaDriverGetVersion returns 0 without one): inside a container
	// started without GPU access libcuda is absent. A driver version the
	// paste shows may be the host's nvidia-smi, which the container never
	// got: with a container and no GPU request in the paste it decides
	// nothing, and a docker run without a GPU request is the cause.
	{
		name: "error_35_in_a_container_started_without_gpus",
		log: `$ nvidia-smi
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
$ docker run -it --rm my-image python train.py
RuntimeError: CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "container_runtime_no_gpu", decided: true, noFix: []string{"install-driver"},
	},
	{
		name: "error_35_in_a_container_with_gpus_and_an_old_host_driver_stays_decided",
		log: `$ nvidia-smi
| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |
$ docker run --gpus all -it --rm my-image python train.py
RuntimeError: CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name: "error_35_in_a_container_shell_with_its_driver_shown_stays_decided",
		log: `root@3f2a1b4c5d6e:/workspace# nvidia-smi
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
root@3f2a1b4c5d6e:/workspace# python train.py
RuntimeError: CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},

	// wsl -l -v lists every distribution; only the default one ('*') is
	// where a plain terminal runs. A second distribution at version 1
	// beside a default at version 2 is not where the program ran.
	{
		name: "wsl1_listed_beside_a_default_wsl2_is_not_the_cause",
		log: `PS C:\Users\me> wsl -l -v
  NAME                   STATE           VERSION
* Ubuntu-22.04           Running         2
  Ubuntu-18.04           Stopped         1
`,
		cause: "benign_warning_only", notCause: []string{"wsl1_no_gpu"},
	},
	{
		name: "wsl1_default_distribution_stays_decided",
		log: `PS C:\Users\me> wsl -l -v
  NAME                   STATE           VERSION
* Ubuntu-20.04           Running         1
`,
		cause: "wsl1_no_gpu", decided: true,
	},

	// nvidia-smi's 'E. Process' column with a busy GPU explains a program
	// refused the GPU ('all CUDA-capable devices are busy or unavailable');
	// with no refusal in the paste the busy process may be the user's own
	// job (Exclusive Process is many clusters' default): undecided.
	{
		name: "exclusive_process_busy_with_no_refusal_is_undecided",
		log: `|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |
| N/A   45C    P0   180W / 300W |  14000MiB / 16160MiB |     98%   E. Process |
`,
		cause: "compute_mode_prohibited", decided: false,
	},

	// pip's conflict report says only that an installed CUDA wheel does not
	// satisfy the framework's pin. NVIDIA's libraries keep one soname per
	// major version and a newer minor release runs programs built against
	// an older one (cuDNN's API compatibility: minor releases are backward
	// compatible): a newer wheel of the same major is the likely reading
	// only; another major, or an older minor, stays decided.
	{
		name:  "pip_pin_newer_minor_same_major_is_undecided",
		log:   "tensorflow 2.16.1 requires nvidia-cublas-cu12==12.3.4.1, but you have nvidia-cublas-cu12 12.4.5.8 which is incompatible.\n",
		cause: "cuda_version_mismatch_tf_build", decided: false,
	},
	{
		name:  "pip_pin_other_major_stays_decided",
		log:   "tensorflow 2.15.0 requires nvidia-cudnn-cu12==8.9.4.25; extra == \"and-cuda\", but you have nvidia-cudnn-cu12 9.1.0.70 which is incompatible.\n",
		cause: "cudnn_version_mismatch", decided: true,
	},
	{
		name:  "pip_pin_older_minor_stays_decided",
		log:   "torch 2.3.0 requires nvidia-cudnn-cu12==8.9.2.26, but you have nvidia-cudnn-cu12 8.5.0.96 which is incompatible.\n",
		cause: "cudnn_version_mismatch", decided: true,
	},

	// 'nvidia.com/gpu: 0' under a node's Capacity/Allocatable: the device
	// plugin registered no GPU, because it has no NVIDIA runtime, because
	// it marked the GPUs unhealthy (an Xid), or because the node has none.
	// The plugin's log decides.
	{
		name: "k8s_node_advertising_zero_gpus_is_undecided",
		log: `Allocatable:
  cpu:                8
  memory:             32780040Ki
  nvidia.com/gpu:     0
`,
		cause: "container_runtime_no_gpu", decided: false,
	},

	// 'exec: "nvidia-smi": executable file not found' after docker run
	// --gpus all: the container was not started without the GPU (the
	// request shows); the toolkit's hook, its CDI spec or the driver
	// capabilities did not mount nvidia-smi (NVIDIA/nvidia-docker#1668):
	// undecided, and no 'start it with GPU access'.
	{
		name: "smi_not_in_container_with_gpus_requested_is_undecided",
		log: `$ sudo docker run --rm --gpus all nvidia/cuda:11.0.3-base-ubuntu20.04 nvidia-smi
docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "nvidia-smi": executable file not found in $PATH: unknown.
`,
		cause: "container_runtime_no_gpu", decided: false, noFix: []string{"container-gpus"},
	},
	{
		name:  "smi_not_in_container_alone_stays_decided",
		log:   "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"nvidia-smi\": executable file not found in $PATH: unknown.\n",
		cause: "container_runtime_no_gpu", decided: true,
	},

	// The NGC banner after docker run --gpus all: the container was not
	// started without the GPU; the hook did not mount the driver, or it is
	// WSL 2's false alarm (NVIDIA/nvidia-docker#1548 ran with --gpus all).
	{
		name: "ngc_banner_with_gpus_requested_is_undecided",
		log: `$ docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:23.10-py3
WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.
`,
		cause: "container_runtime_no_gpu", decided: false, noFix: []string{"container-gpus"},
	},

	// 'ptxas fatal' is the toolkit's PTX assembler stopping, whoever ran it:
	// XLA, Triton, or nvcc building an extension. Only XLA's is XLA's ptxas.
	{
		name: "ptxas_fatal_in_an_extension_build_is_not_decided_xla",
		log: `building 'flash_attn_2_cuda' extension
/usr/local/cuda/bin/nvcc -c csrc/flash_attn/src/flash_fwd_hdim128_fp16_sm80.cu -o build/temp.linux-x86_64-cpython-310/csrc/flash_attn/src/flash_fwd_hdim128_fp16_sm80.o
ptxas fatal   : Memory allocation failure
error: command '/usr/local/cuda/bin/nvcc' failed with exit code 255
`,
		cause: "xla_ptxas_or_libdevice_missing", decided: false,
	},
	{
		name: "ptxas_fatal_under_tensorflow_stays_decided",
		log: `2023-05-01 10:00:00.000000: W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:115] *** WARNING *** You are using ptxas 10.1.243, which is older than 11.1.
ptxas fatal   : Unresolved extern function 'cudaGetErrorString'
`,
		cause: "xla_ptxas_or_libdevice_missing", decided: true,
	},

	// Docker 29 resolves --gpus through CDI and the vendor it detects: 'AMD
	// CDI spec not found' / 'no known GPU vendor found' say this daemon has
	// no NVIDIA toolkit set up, as 'could not select device driver' does,
	// and a machine without an NVIDIA GPU says the same: undecided.
	{
		name:  "docker29_gpu_vendor_discovery_alone_is_undecided",
		log:   "docker: Error response from daemon: failed to discover GPU vendor from CDI: no known GPU vendor found\n",
		cause: "container_runtime_no_gpu", decided: false,
	},
	{
		name:  "cdi_unresolvable_nvidia_device_stays_decided",
		log:   "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all\n",
		cause: "container_runtime_no_gpu", decided: true,
	},

	// PyTorch publishes no CUDA builds for macOS ('MacOS Binaries dont
	// support CUDA'): 'Torch not compiled with CUDA enabled' from a Python
	// on macOS (an Intel Mac too) is the Mac, not a wheel to replace.
	{
		name: "torch_cpu_build_on_an_intel_mac_is_the_mac",
		log: `OS: macOS 12.6 (x86_64)
AssertionError: Torch not compiled with CUDA enabled
`,
		cause: "no_nvidia_gpu", decided: true, notCause: []string{"framework_cpu_only_build"},
	},
}

func TestTrustAudit(t *testing.T) {
	for _, c := range trustCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
