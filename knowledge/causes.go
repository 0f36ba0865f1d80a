package knowledge

import "sort"

// Cause is a stable label naming why the GPU is not usable. Scripts and
// support tooling match on these strings: never rename one.
type Cause struct {
	Label string `json:"label"`
	Doc   string `json:"doc"`
}

// Causes lists every cause label, in chain order. The first block is the
// contract in DESIGN.md; the labels after "healthy" were added by doctor
// where none of the design's labels fit.
var Causes = []Cause{
	{"driver_missing", "No NVIDIA driver: no kernel module, no libcuda/NVML. Install the driver (on WSL2: on the Windows side)."},
	{"driver_library_mismatch", "The NVIDIA user-space libraries and the loaded kernel module have different versions (typically after a driver upgrade without a reboot)."},
	{"driver_too_old_for_cuda", "The driver is older than the CUDA version the installed libraries or TensorFlow build need."},
	{"nouveau_conflict", "The open-source nouveau driver holds the GPU, so the NVIDIA module cannot bind to it."},
	{"secure_boot_unsigned_module", "Secure Boot refuses to load the unsigned NVIDIA kernel module."},
	{"kernel_module_not_built", "The NVIDIA user-space driver is installed but no kernel module exists (or loads) for the running kernel, usually after a kernel upgrade (DKMS build missing or failed)."},
	{"uvm_module_missing", "The nvidia_uvm module or /dev/nvidia-uvm is missing; CUDA cannot initialise without it."},
	{"device_node_permission", "/dev/nvidia* device nodes are missing or cannot be opened by this user."},
	{"wsl_linux_driver_installed_inside_wsl", "A Linux NVIDIA driver was installed inside WSL2; it shadows the Windows driver's libcuda stub."},
	{"wsl_libcuda_not_found", "WSL2 does not expose the Windows driver's libcuda (/usr/lib/wsl/lib), or the loader does not find it."},
	{"wsl1_no_gpu", "The distribution runs under WSL 1, which has no GPU support; convert it to WSL 2."},
	{"cuda_visible_devices_hides_gpu", "CUDA_VISIBLE_DEVICES (or NVIDIA_VISIBLE_DEVICES) hides every GPU from CUDA."},
	{"compute_mode_prohibited", "The GPU's compute mode forbids this process (Prohibited, or Exclusive Process held by another job)."},
	{"mig_misconfigured", "MIG mode is enabled but no usable MIG instance is visible, or a mode change is pending."},
	{"libcudart_missing", "The CUDA runtime library that TensorFlow dlopens (libcudart) cannot be found."},
	{"libcublas_missing", "libcublas/libcublasLt for TensorFlow's CUDA major version cannot be found."},
	{"libcudnn_missing", "libcudnn for TensorFlow's cuDNN major version cannot be found."},
	{"libcufft_missing", "libcufft for TensorFlow's CUDA version cannot be found."},
	{"libcusparse_missing", "libcusparse for TensorFlow's CUDA version cannot be found."},
	{"libcusolver_missing", "libcusolver for TensorFlow's CUDA version cannot be found."},
	{"cudnn_version_mismatch", "The cuDNN that loads first is older than (or a different major from) the one TensorFlow was built with."},
	{"cuda_version_mismatch_tf_build", "The CUDA libraries that load are of another major version than TensorFlow's build."},
	{"tf_not_installed", "TensorFlow is not installed in the examined Python environment."},
	{"tf_cpu_only_build_installed", "A CPU-only TensorFlow build (tensorflow-cpu, a build without CUDA, or tensorflow without [and-cuda] libraries) is installed."},
	{"tf_windows_native_gpu_unsupported", "Native Windows TensorFlow after 2.10 has no GPU support; use WSL2."},
	{"python_version_unsupported", "The Python version is outside the range that the TensorFlow version supports, so pip falls back to an old or CPU-only build, or fails."},
	{"multiple_tf_installs_conflict", "Several TensorFlow distributions (tensorflow, tensorflow-cpu, tensorflow-gpu, tf-nightly, user-site copies) overwrite each other."},
	{"ld_library_path_pollution", "LD_LIBRARY_PATH puts other CUDA libraries ahead of the ones TensorFlow was built for."},
	{"gpu_out_of_memory_other_process", "Other processes hold GPU memory this job needs."},
	{"gpu_memory_preallocation", "TensorFlow pre-allocates nearly all GPU memory; a second process or framework then runs out."},
	{"xla_ptxas_or_libdevice_missing", "XLA cannot find ptxas or libdevice (CUDA data directory)."},
	{"cuinit_unknown_error", "cuInit failed with CUDA_ERROR_UNKNOWN (often after suspend/resume, or a missing /dev/nvidia-uvm)."},
	{"gpu_hardware_xid_error", "The kernel log reports NVIDIA Xid errors that point at hardware, firmware or the bus."},
	{"gpu_ecc_errors", "The GPU reports uncorrectable ECC errors or pending page retirement / row remapping."},
	{"gpu_throttled", "The GPU's clocks are held down by thermal, power-brake or hardware slowdown."},
	{"pcie_link_degraded", "The GPU's PCIe link runs narrower (or slower) than it can."},
	{"unsupported_compute_capability", "The GPU's compute capability is below what the TensorFlow build supports, or newer than its kernels."},
	{"container_runtime_no_gpu", "The process runs in a container that was started without GPU access (no --gpus / NVIDIA runtime)."},
	{"jupyter_kernel_wrong_env", "The Jupyter kernel runs another Python environment than the one where TensorFlow was set up."},
	{"data_pipeline_bottleneck", "The GPU idles while the job's CPU-side input pipeline is saturated or waits on I/O."},
	{"disk_full", "A file system that pip, conda or TensorFlow writes to is (nearly) full."},
	{"benign_warning_only", "Only harmless messages were found; nothing needs fixing."},
	{"healthy", "Nothing is wrong."},
	// Added by doctor (documented in `doctor rules`).
	{"driver_unresponsive", "Added by doctor: the driver did not answer in time (nvidia-smi or NVML hung), which usually means a hung GPU or driver."},
	{"check_incomplete", "Added by doctor: a collector failed or timed out, so one link could not be examined; or no rung of the verification ladder could run, so the GPU was not verified."},
	{"gpu_not_used", "Added by doctor: the watched job is not among the GPU's processes; it runs on the CPU."},
	{"gpu_underutilized", "Added by doctor: the GPU is mostly idle while the watched job's CPU is not saturated and it does not wait on I/O (small batches, many small ops, synchronisation, or work off the GPU)."},
	{"gpu_compute_failed", "Added by doctor: real GPU work of the verification ladder failed or gave wrong results (a CUDA, cuBLAS or framework call returned an error) for a reason the evidence does not pin down; the rung's error says what failed."},
	{"framework_import_failed", "Added by doctor: importing TensorFlow (or the fallback framework) failed for a reason no other check explains; the exception and the framework's log say why."},
	{"gpu_busy_other_process", "Added by doctor: another process computes on the same GPU, so doctor's verification matmul ran far below the GPU's expected speed."},
	{"gpu_slow_unexplained", "Added by doctor: the verification matmul ran far below the GPU model's expected speed and neither throttling, other processes nor the PCIe link explain it."},
	{"framework_cpu_only_build", "Added by doctor: a CPU-only build of a framework other than TensorFlow is installed (PyTorch +cpu or 'not compiled with CUDA', jaxlib without its CUDA plugin, onnxruntime instead of onnxruntime-gpu, bitsandbytes without its CUDA library), so that framework cannot use the GPU."},
	{"framework_not_installed", "Added by doctor: a log shows that a framework other than TensorFlow (PyTorch, JAX, CuPy, ONNX Runtime) is not installed in the Python that ran; TensorFlow's own absence stays tf_not_installed."},
	{"dev_shm_unusable", "Added by doctor: /dev/shm is too small (a container's 64 MB default) or not writable, so NCCL or PyTorch DataLoader workers cannot create their shared-memory segments."},
	{"gpu_out_of_memory_own_job", "Added by doctor: the job itself needs more GPU memory than the GPU has (model, batch size, sequence length or image size too large for the card, or memory that leaks or fragments inside the job); no other process holds the memory. Another process holding it stays gpu_out_of_memory_other_process, TensorFlow taking it all first gpu_memory_preallocation."},
	{"fabric_manager_not_running", "Added by doctor: on an NVSwitch system (HGX/DGX A100, H100, H200, B200) nvidia-fabricmanager is not running, failed, or has another version than the driver, so CUDA fails with error 802 'system not yet initialized' (CUDA_ERROR_SYSTEM_NOT_READY)."},
	{"no_nvidia_gpu", "Added by doctor: the machine, VM or node has no NVIDIA GPU at all (a CPU-only instance or node, a Mac or AMD-only machine, a VM without passthrough): no driver or library change can make CUDA see one. A GPU hidden by a container, a scheduler or CUDA_VISIBLE_DEVICES is not this."},
	{"gpu_index_out_of_range", "Added by doctor: the program asks for a GPU index that does not exist (cuda:1, device_ids=[0,1], --gpu 2 on a one-GPU machine), so CUDA says 'invalid device ordinal' (101). Every GPU hidden by CUDA_VISIBLE_DEVICES stays cuda_visible_devices_hides_gpu."},
	{"scheduler_no_gpu_allocated", "Added by doctor: a batch scheduler (Slurm, PBS, LSF, HTCondor) ran the job without a GPU: the request had no --gres/--gpus, asked for an invalid GRES, or was rejected, so the job sees none. Kubernetes pods and containers started without GPUs stay container_runtime_no_gpu."},
	{"open_kernel_module_unsupported_gpu", "Added by doctor: the NVIDIA open kernel module (the default flavour from driver 560) is loaded on a GPU it does not support, one older than Turing (Maxwell, Pascal, Volta; in the first open releases, 515 and 520, also GeForce and workstation GPUs): nvidia-smi finds no devices and the kernel log says the GPU is not supported by the open module. The proprietary module flavour drives it."},
}

var causeIndex = func() map[string]int {
	m := make(map[string]int, len(Causes))
	for i, c := range Causes {
		m[c.Label] = i
	}
	return m
}()

// IsCause reports whether label is a known cause label.
func IsCause(label string) bool {
	_, ok := causeIndex[label]
	return ok
}

// CauseDoc returns the one-line documentation of a cause label.
func CauseDoc(label string) string {
	if i, ok := causeIndex[label]; ok {
		return Causes[i].Doc
	}
	return ""
}

// CauseLabels returns every label, sorted.
func CauseLabels() []string {
	out := make([]string, 0, len(Causes))
	for _, c := range Causes {
		out = append(out, c.Label)
	}
	sort.Strings(out)
	return out
}
