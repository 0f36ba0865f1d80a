package rules

import "testing"

// calibCases: a line several causes share is no proof of one of them. Each
// case is written from the message's source (the program that prints it)
// and the cause definitions, not from one log: explain names the commonest
// reading as "most likely" (decided false) unless the paste holds the fact
// that decides, and then it decides (issue 15, calibration on blind batches
// 5 and 6).
var calibCases = []judgmentCase{
	// PyTorch 1.0-1.3 ended its out-of-memory message with '... X already
	// allocated; Y free; Z cached)', where Z is what the caching allocator
	// holds beyond what is allocated (c10/cuda/CUDACachingAllocator.cpp:
	// format_size(stats.amount_cached - stats.amount_allocated)). This
	// process holds X + Z: here nearly the whole card.
	{
		name:  "torch_1_0_oom_own_figures_cover_the_card",
		log:   "RuntimeError: CUDA out of memory. Tried to allocate 24.00 MiB (GPU 0; 7.93 GiB total capacity; 7.21 GiB already allocated; 6.50 MiB free; 120.40 MiB cached)\n",
		cause: "gpu_out_of_memory_own_job", decided: true,
	},
	// What PyTorch 1.x's figures leave over (total - free - what PyTorch
	// holds) is everything outside its allocator: other processes, but
	// also this process's own CUDA context, kernels and libraries. The
	// gap is no proof of another process; where this process holds more
	// than the gap (here 10.15 GiB against 4.1 GiB) the job not fitting
	// stays the likelier reading (calib9, explain_calib9_test.go).
	{
		name:  "torch_1_x_oom_gap_is_no_proof_of_another_process",
		log:   "RuntimeError: CUDA out of memory. Tried to allocate 844.00 MiB (GPU 0; 14.76 GiB total capacity; 9.70 GiB already allocated; 498.75 MiB free; 10.15 GiB reserved in total by PyTorch)\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "torch_1_0_oom_gap_is_no_proof_of_another_process",
		log:   "RuntimeError: CUDA out of memory. Tried to allocate 300.00 MiB (GPU 0; 3.95 GiB total capacity; 1.50 GiB already allocated; 20.00 MiB free; 12.00 MiB cached)\n",
		cause: "gpu_out_of_memory_other_process", decided: false,
	},
	// nvidia-smi's memory column counts the job itself when the job is
	// running: a full card in it is no proof that another process holds it.
	{
		name: "smi_full_card_with_an_oom_is_no_proof",
		log: `| N/A   54C    P0   246W / 300W |  15514MiB / 16130MiB |    100%      Default |
RuntimeError: CUDA error: out of memory
`,
		cause: "gpu_out_of_memory_other_process", decided: false,
	},
	// PyTorch 2.x names every other process on the GPU (from NVML): that
	// decides.
	{
		name:  "torch_2_oom_names_another_process",
		log:   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free. Process 4242 has 18.20 GiB memory in use. Including non-PyTorch memory, this process has 4.30 GiB memory in use. Of the allocated memory 3.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n",
		cause: "gpu_out_of_memory_other_process", decided: true,
	},
	// TensorFlow 1.x logs the free memory when it opens the device, before
	// it allocates: little free then is memory other processes hold.
	{
		name: "tf1_free_memory_at_start_decides",
		log: `I tensorflow/core/common_runtime/gpu/gpu_device.cc:1405] Found device 0 with properties:
name: GeForce GTX 1080 major: 6 minor: 1 memoryClockRate(GHz): 1.7335
Total memory: 7.92GiB
Free memory: 210.50MiB
E tensorflow/stream_executor/cuda/cuda_driver.cc:1002] failed to allocate 210.50M (220725248 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY
`,
		cause: "gpu_out_of_memory_other_process", decided: true,
	},
	// PyTorch's 'Found no NVIDIA driver' (torch/cuda/__init__.py
	// _check_driver: the driver version CUDA reports is 0, which
	// cudaDriverGetVersion returns when libcuda is absent) reads the same on
	// a machine with no NVIDIA GPU at all: the line alone does not decide.
	{
		name:  "torch_no_driver_alone_is_undecided",
		log:   "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "torch_no_driver_with_the_gpu_on_the_bus",
		log: `$ lspci | grep -i nvidia
01:00.0 VGA compatible controller: NVIDIA Corporation GA106 [GeForce RTX 3060] (rev a1)
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "driver_missing", decided: true,
	},
	{
		name: "torch_no_driver_on_apple_silicon",
		log: `Platform: macOS-14.2.1-arm64-arm-64bit
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
`,
		cause: "no_nvidia_gpu", decided: true, noFix: []string{"install-driver"},
	},
	// The CUDA runtime's error 35 (cudaErrorInsufficientDriver) reads the
	// driver's CUDA version, which is 0 where no driver is installed
	// (cudaDriverGetVersion): a machine without the driver or without an
	// NVIDIA GPU gets the same line. Only the driver's version decides.
	{
		name: "error_35_alone_is_undecided",
		log: `cudaGetDeviceCount returned 35
-> CUDA driver version is insufficient for CUDA runtime version
Result = FAIL
`,
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "error_35_named_by_its_constant_is_undecided",
		log:   "jcuda.CudaException: cudaErrorInsufficientDriver\n",
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "error_35_with_nvidia_smi_decides",
		log: `| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name: "error_35_with_device_query_versions_decides",
		log: `  CUDA Driver Version / Runtime Version          10.1 / 11.2
cudaGetDeviceCount returned 35
-> CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "torch_found_version_stays_decided",
		log:   "RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name: "error_35_on_apple_silicon",
		log: `Darwin mbp.local 23.1.0 Darwin Kernel Version 23.1.0: root:xnu-10002.41.9~6/RELEASE_ARM64_T6000 arm64
cudaGetDeviceCount returned 35
-> CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "no_nvidia_gpu", decided: true, noFix: []string{"install-driver"},
	},
	// CUDA's 'unknown error' at initialisation (CUDA_ERROR_UNKNOWN, runtime
	// error 30 or 999) names no cause: a VM or instance with no NVIDIA GPU
	// gets it too. With a working driver shown it is the cuInit failure.
	{
		name:  "cuda_unknown_error_alone_is_undecided",
		log:   "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1501971235237/work/pytorch-0.1.12/torch/lib/THC/THCGeneral.c line=66 error=30 : unknown error\n",
		cause: "cuinit_unknown_error", decided: false, noFix: []string{"load-nvidia-uvm", "reboot"},
	},
	{
		name: "cuda_unknown_error_with_the_driver_up_decides",
		log: `| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |
RuntimeError: CUDA error: unknown error
`,
		cause: "cuinit_unknown_error", decided: true,
	},
	// nvidia_uvm loads on top of the nvidia module: 'Could not load UVM
	// kernel module' (nvidia-docker 1's LoadUVM, nvidia-modprobe -u failing)
	// reads the same when the nvidia module itself is not built for the
	// running kernel. Decided only with the nvidia module shown loaded.
	{
		name:  "uvm_load_failure_alone_is_undecided",
		log:   "nvidia-docker | 2017/03/02 10:11:12 Error: Could not load UVM kernel module. Is nvidia-modprobe installed?\n",
		cause: "uvm_module_missing", decided: false, noFix: []string{"load-nvidia-uvm"},
	},
	{
		name: "uvm_load_failure_with_the_nvidia_module_loaded",
		log: `$ lsmod | grep nvidia
nvidia              35323904  0
$ sudo modprobe nvidia-uvm
modprobe: FATAL: Module nvidia-uvm not found in directory /lib/modules/5.4.0-150-generic
`,
		cause: "uvm_module_missing", decided: true,
	},
	{
		name: "uvm_load_failure_after_the_module_was_not_built",
		log: `$ sudo modprobe nvidia
modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.15.0-1051-aws
nvidia-docker | 2023/05/02 10:11:12 Error: Could not load UVM kernel module. Is nvidia-modprobe installed?
`,
		cause: "kernel_module_not_built", decided: true,
	},
	{
		// nvidia-container-cli's debug log: nvidia itself failed first, so
		// the uvm failure after it is no proof of a missing nvidia_uvm.
		name: "nvc_uvm_failure_after_nvidia_failed_is_undecided",
		log: `I0522 15:58:24.941125 20853 nvc.c:211] loading kernel module nvidia
E0522 15:58:24.941200 20853 nvc.c:213] could not load kernel module nvidia
I0522 15:58:24.941203 20853 nvc.c:211] loading kernel module nvidia_uvm
E0522 15:58:24.941301 20853 nvc.c:213] could not load kernel module nvidia_uvm
`,
		cause: "uvm_module_missing", decided: false,
	},
	// 'Built with CUDA: False' is printed by scripts for TensorFlow and
	// PyTorch alike: the framework it names decides whose build it is.
	{
		name:  "pytorch_built_with_cuda_false_is_pytorchs",
		log:   "PyTorch built with CUDA:         False\nPyTorch detects CUDA available:  False\n",
		cause: "framework_cpu_only_build", decided: true, notCause: []string{"tf_cpu_only_build_installed"}, noFix: []string{"pip-install-tensorflow"},
	},
	{
		name:  "bare_built_with_cuda_false_is_undecided",
		log:   "Built with CUDA: False\n",
		cause: "tf_cpu_only_build_installed", decided: false,
	},
	// bitsandbytes loads its CPU library whenever its CUDA setup finds no
	// usable CUDA (no GPU, a CPU-only PyTorch): not proof of a CPU wheel.
	{
		name:  "bitsandbytes_cpu_library_alone_is_undecided",
		log:   "UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name: "bitsandbytes_cpu_library_on_apple_silicon",
		log: `Chip: Apple M3
UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.
`,
		cause: "no_nvidia_gpu", decided: true,
	},
	// cuDNN's and cuBLAS's generic handle statuses name no cause: memory
	// taken first is the commonest, a missing or mismatched library ends
	// the same way. cuDNN's own version status decides.
	{
		name:  "cudnn_handle_internal_error_is_undecided",
		log:   "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n",
		cause: "gpu_memory_preallocation", decided: false,
	},
	{
		name:  "cudnn_handle_version_mismatch_decides",
		log:   "E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_VERSION_MISMATCH\n",
		cause: "cudnn_version_mismatch", decided: true,
	},
	// 'No module named X' does not say whether X is missing everywhere or
	// installed in another environment than the one that ran.
	{
		name:  "no_module_named_alone_is_undecided",
		log:   "ModuleNotFoundError: No module named 'cupy'\n",
		cause: "framework_not_installed", decided: false,
	},
	{
		name: "no_module_named_in_a_notebook_is_undecided",
		log: `/home/me/miniconda3/envs/ml/lib/python3.10/site-packages/ipykernel_launcher.py
ModuleNotFoundError: No module named 'torch'
`,
		cause: "jupyter_kernel_wrong_env", decided: false,
	},
	// Every wording of 'libcuda could not be loaded' or 'the kernel driver
	// is not running' reads the same on a machine with no NVIDIA GPU.
	{
		name:  "numba_driver_library_not_found_is_undecided",
		log:   "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library cannot be found.\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "cudnn_needing_libcuda_is_undecided",
		log:   "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "singularity_without_nvidia_libraries_is_undecided",
		log:   "WARNING: Could not find any nv files on this host!\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "tf_kernel_driver_not_running_is_undecided",
		log:   "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] kernel driver does not appear to be running on this host (ip-10-0-0-12): /proc/driver/nvidia/version does not exist\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		// The GPU on the bus does not say which of the module's failures
		// this is (not installed, not built for the kernel, refused).
		name: "tf_kernel_driver_not_running_with_the_gpu_on_the_bus_stays_undecided",
		log: `00:1e.0 3D controller: NVIDIA Corporation TU104GL [Tesla T4] (rev a1)
I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] kernel driver does not appear to be running on this host (ip-10-0-0-12): /proc/driver/nvidia/version does not exist
`,
		cause: "driver_missing", decided: false,
	},
	{
		name:  "no_module_named_tensorflow_is_undecided",
		log:   "ModuleNotFoundError: No module named 'tensorflow'\n",
		cause: "tf_not_installed", decided: false,
	},
	// PyTorch 2.x in a container: NVML's PIDs are not this process's, so
	// its own row is a 'Process N' and no 'this process has' is printed.
	// One named process may be the job itself: no proof of another.
	{
		name:  "torch_2_oom_only_unidentified_process_rows_are_no_proof",
		log:   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free. Process 4821 has 14.74 GiB memory in use.\n",
		cause: "gpu_out_of_memory_other_process", decided: false,
	},
	// Secure Boot on and the module not loaded: the likeliest reading, not
	// proof (a signed module loads; one not built for the kernel fails the
	// same). The kernel's key rejection decides.
	{
		name: "secure_boot_enabled_and_no_driver_is_undecided",
		log: `$ mokutil --sb-state
SecureBoot enabled
$ nvidia-smi
NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.
`,
		cause: "secure_boot_unsigned_module", decided: false,
	},
	{
		name: "secure_boot_key_rejected_decides",
		log: `SecureBoot enabled
modprobe: ERROR: could not insert 'nvidia': Key was rejected by service
`,
		cause: "secure_boot_unsigned_module", decided: true,
	},
	// The driver shown runs the CUDA the build needs: error 35 did not come
	// from this driver being too old (the runtime did not reach it).
	{
		name: "error_35_with_a_driver_new_enough_is_undecided",
		log: `| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
CUDA used to build PyTorch: 11.8
RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "error_35_with_a_driver_too_old_decides",
		log: `| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
CUDA used to build PyTorch: 12.1
RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
}

// cudaErrorNoDevice (CUDA_ERROR_NO_DEVICE, 'no CUDA-capable device is
// detected'): 'no CUDA-capable devices were detected by the installed CUDA
// driver' (CUDA Runtime API, cudaError): the driver answered, so no driver
// is the least fitting reading. The commonest is the GPU hidden by
// CUDA_VISIBLE_DEVICES (a script's index of a GPU the machine lacks, "",
// -1); undecided, no fix, until the paste shows the variable.
var noDeviceCases = []judgmentCase{
	{
		name:  "no_device_alone_names_the_hidden_gpu_undecided",
		log:   "2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n",
		cause: "cuda_visible_devices_hides_gpu", decided: false, noFix: []string{"unset-cuda-visible-devices", "install-driver"},
	},
	{
		name:  "cuda_runtime_error_38_alone_names_the_hidden_gpu_undecided",
		log:   "RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected at /pytorch/aten/src/THC/THCGeneral.cpp:51\n",
		cause: "cuda_visible_devices_hides_gpu", decided: false, noFix: []string{"unset-cuda-visible-devices", "install-driver"},
	},
	{
		// The variable shown hiding nothing: the driver saw no GPU.
		name: "no_device_with_the_first_gpu_visible_is_no_gpu_undecided",
		log: `$ echo "CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES]"
CUDA_VISIBLE_DEVICES=[0]
cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected
`,
		cause: "no_nvidia_gpu", decided: false, noFix: []string{"unset-cuda-visible-devices", "install-driver"},
	},
	{
		name: "no_device_with_the_variable_hiding_every_gpu_decides",
		log: `$ export CUDA_VISIBLE_DEVICES=-1
numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE
`,
		cause: "cuda_visible_devices_hides_gpu", decided: true,
	},
}

// A Ray worker sees only the GPUs its task reserved (Ray sets
// CUDA_VISIBLE_DEVICES): that decides the label the line is named by.
var noDeviceRayCase = judgmentCase{
	name:  "no_device_in_a_ray_worker_decides",
	log:   "Error: (pid=3343) 2019-08-13 11:02:51.856630: E tensorflow/stream_executor/cuda/cuda_driver.cc:300] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n",
	cause: "cuda_visible_devices_hides_gpu", decided: true,
}

func TestNoDeviceCalibration(t *testing.T) {
	for _, c := range append(noDeviceCases, noDeviceRayCase) {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// Chainer's check_cuda_available says 'CUDA environment is not correctly
// set up' whenever importing CuPy failed, and appends CuPy's own error:
// Chainer 1.x's bundled CuPy not built ('CuPy is not correctly installed
// ... uninstall Chainer and reinstall it'), or in Chainer 2+ no cupy
// package, or a CuPy whose CUDA libraries do not load. The line alone is
// undecided; CuPy's 'not correctly installed' decides.
var chainerCases = []judgmentCase{
	{
		name:  "chainer_cuda_not_set_up_alone_is_undecided",
		log:   "RuntimeError: CUDA environment is not correctly set up\n",
		cause: "framework_cpu_only_build", decided: false, noFix: []string{"framework-gpu-build"},
	},
	{
		name: "chainer_cuda_not_set_up_with_cupy_not_built_decides",
		log: `RuntimeError: CUDA environment is not correctly set up
(see https://github.com/pfnet/chainer#installation).CuPy is not correctly installed. Please check your environment, uninstall Chainer and reinstall it with ` + "`pip install chainer --no-cache-dir -vvvv`" + `.
`,
		cause: "framework_cpu_only_build", decided: true,
	},
}

func TestChainerCalibration(t *testing.T) {
	for _, c := range chainerCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// A CUDA library whose soname names a CUDA minor version (up to CUDA 10
// every toolkit library: libcudart.so.10.0; NVRTC in CUDA 11.0 and 11.1:
// libnvrtc.so.11.1) is missing for that exact CUDA: no CUDA installed, or
// another CUDA installed (the build is for another version). The line
// alone does not say which; the installed CUDA the paste shows decides.
// Undecided, NVRTC's names the likelier reading, another CUDA installed
// (prior8: every training-side thread with a CUDA 11 NVRTC soname
// missing); the toolkit libraries' keep theirs (missing), as most of the
// training side's threads did.
var minorSonameCases = []judgmentCase{
	{
		name:  "nvrtc_11_1_missing_alone_is_undecided",
		log:   "  ImportError: libnvrtc.so.11.1: cannot open shared object file: No such file or directory\n",
		cause: "cuda_version_mismatch_tf_build", decided: false, noFix: []string{"pip-install-tensorflow"},
	},
	{
		name:  "cudart_10_0_missing_alone_is_undecided",
		log:   "ImportError: libcudart.so.10.0: cannot open shared object file: No such file or directory\n",
		cause: "libcudart_missing", decided: false,
	},
	{
		name: "nvrtc_11_1_missing_with_cuda_11_5_installed_is_a_mismatch",
		log: `$ nvcc --version
Cuda compilation tools, release 11.5, V11.5.119
  ImportError: libnvrtc.so.11.1: cannot open shared object file: No such file or directory
`,
		cause: "cuda_version_mismatch_tf_build", decided: true,
	},
	{
		name:  "cudart_10_0_missing_alone_is_undecided",
		log:   "ImportError: libcudart.so.10.0: cannot open shared object file: No such file or directory\n",
		cause: "libcudart_missing", decided: false,
	},
	{
		name: "cudart_10_0_missing_with_cuda_10_1_installed_is_a_mismatch",
		log: `/usr/local/cuda-10.1/lib64/libcudart.so.10.1
ImportError: libcudart.so.10.0: cannot open shared object file: No such file or directory
`,
		cause: "cuda_version_mismatch_tf_build", decided: true,
	},
	{
		// One soname serves all of CUDA 11 (libcudart.so.11.0): not
		// minor-versioned, so unchanged.
		name:  "cudart_11_0_missing_alone_stays_decided",
		log:   "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n",
		cause: "libcudart_missing", decided: true,
	},
}

func TestMinorSonameCalibration(t *testing.T) {
	for _, c := range minorSonameCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

func TestCalibration(t *testing.T) {
	for _, c := range calibCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// nvidia-container-cli's 'nvml error: driver not loaded' is
// NVML_ERROR_DRIVER_NOT_LOADED (nvml.h: 'NVIDIA driver is not loaded'):
// the host's NVML library is there and no NVIDIA kernel module runs. That
// is a missing or broken driver, a module not built or refused, or a host
// with no NVIDIA GPU at all (a CPU-only cloud instance started with the
// NVIDIA runtime): undecided, and no driver install from the line alone.
var hostDriverNotLoadedCases = []judgmentCase{
	{
		name: "nvml_driver_not_loaded_alone_is_undecided",
		log: `docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'
nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.
`,
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
}

func TestHostDriverNotLoadedCalibration(t *testing.T) {
	for _, c := range hostDriverNotLoadedCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
