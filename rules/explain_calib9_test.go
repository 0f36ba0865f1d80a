package rules

import (
	"strings"
	"testing"
)

// oomSplitCases: what an out-of-memory line's own figures settle about who
// holds the GPU's memory (issue 15, calib9). PyTorch's message
// (c10/cuda/CUDACachingAllocator.cpp) gives the card's total, what is
// free, and what this process's allocator holds; the rest lies outside
// it: another process, or this process's own CUDA context and libraries.
var oomSplitCases = []judgmentCase{
	// format_size prints a size of 1024 bytes or less as 'N bytes': a
	// full card reads '0 bytes free'. This process holds 3.52 of 4.00 GiB:
	// the job itself does not fit, decided.
	{
		name:  "torch_oom_zero_bytes_free_is_read",
		log:   "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.46 GiB already allocated; 0 bytes free; 3.52 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n",
		cause: "gpu_out_of_memory_own_job", decided: true,
	},
	// PyTorch 2.1 spells 'total capacty'; this process holds nearly all.
	{
		name:  "torch_2_1_total_capacty_is_read",
		log:   "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB. GPU 0 has a total capacty of 15.77 GiB of which 281.12 MiB is free. Including non-PyTorch memory, this process has 15.49 GiB memory in use. Of the allocated memory 15.04 GiB is allocated by PyTorch, and 4.72 MiB is reserved by PyTorch but unallocated.\n",
		cause: "gpu_out_of_memory_own_job", decided: true,
	},
	// Without NVML's figure for this process, what PyTorch's allocator
	// holds is 'allocated by PyTorch' plus 'reserved by PyTorch but
	// unallocated': here 7.0 + 0.6 of 8.00 GiB.
	{
		name:  "torch_2_allocated_plus_unallocated_reserve_is_this_process",
		log:   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which 0 bytes is free. Of the allocated memory 7.00 GiB is allocated by PyTorch, and 600.00 MiB is reserved by PyTorch but unallocated.\n",
		cause: "gpu_out_of_memory_own_job", decided: true,
	},
	// NVML has given PyTorch 2^64 bytes for this process (Windows, WSL):
	// no process holds more than the card, and the figure settles nothing.
	{
		name:  "torch_2_impossible_self_figure_settles_nothing",
		log:   "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.99 GiB of which 7.20 GiB is free. Including non-PyTorch memory, this process has 17179869184.00 GiB memory in use. Of the allocated memory 14.51 GiB is allocated by PyTorch, and 685.18 MiB is reserved by PyTorch but unallocated.\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	// 2.3 GiB lies outside this process's 5.88 GiB: less than the job
	// holds. The job not fitting stays the likelier reading (undecided);
	// another process is not named.
	{
		name:  "torch_oom_gap_smaller_than_own_share_stays_own_job",
		log:   "RuntimeError: CUDA out of memory. Tried to allocate 3.94 GiB (GPU 0; 11.00 GiB total capacity; 4.49 GiB already allocated; 2.81 GiB free; 5.88 GiB reserved in total by PyTorch)\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
		notCause: []string{"gpu_out_of_memory_other_process"},
		detail:   "less than this process holds",
	},
	// 8.0 GiB outside this process's 2.75 GiB: others hold most of the
	// card, the likelier reading is another process (undecided).
	{
		name:  "torch_oom_gap_larger_than_own_share_names_another_process",
		log:   "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 2.42 GiB already allocated; 26.12 MiB free; 2.75 GiB reserved in total by PyTorch)\n",
		cause: "gpu_out_of_memory_other_process", decided: false,
	},
}

func TestOOMSplitCalibration(t *testing.T) {
	for _, c := range oomSplitCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// The impossible figure is not reported as what this process holds.
func TestOOMImpossibleSelfFigureNotEvidence(t *testing.T) {
	r := ExplainText(oomSplitCases[3].log)
	for _, f := range r.Findings {
		if v, ok := f.Evidence["torch_memory_held_by_this_process"]; ok && strings.Contains(v.(string), "17179869184") {
			t.Fatalf("%s reports the impossible figure as this process's: %v", f.ID, v)
		}
	}
}

// The NVIDIA container toolkit's binaries missing where the engine or the
// user looks for them, as each tool words it: the container cannot be
// given the GPU (container_runtime_no_gpu), decided by the line.
var toolkitMissingCases = []judgmentCase{
	// nerdctl --gpus calls nvidia-container-cli itself (containerd's
	// contrib/nvidia, exec.LookPath).
	{
		name:  "nerdctl_gpus_without_nvidia_container_cli",
		log:   "FATA[0000] exec: \"nvidia-container-cli\": executable file not found in $PATH\n",
		cause: "container_runtime_no_gpu", decided: true,
	},
	// crun's wording of a prestart hook that is not installed.
	{
		name:  "crun_hook_not_found",
		log:   "Error: crun: executable file `nvidia-container-runtime-hook` not found in $PATH: No such file or directory: OCI runtime attempted to invoke a command that was not found\n",
		cause: "container_runtime_no_gpu", decided: true,
	},
	// The nvidia-docker wrapper (nvidia-docker 1.0 and 2.0) not installed.
	{
		name:  "nvidia_docker_command_not_found",
		log:   "$ nvidia-docker run --rm nvidia/cuda nvidia-smi\nsudo: nvidia-docker: command not found\n",
		cause: "container_runtime_no_gpu", decided: true,
	},
}

func TestToolkitMissingCalibration(t *testing.T) {
	for _, c := range toolkitMissingCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// CUDA's error 35 is returned for an old driver and for none at all
// (cudaDriverGetVersion reports 0 then). Next to a paste that shows the
// user-space driver absent, it is no driver (undecided), not an old one.
var runtime35Cases = []judgmentCase{
	{
		name:  "error_35_with_nvidia_smi_not_found_is_no_driver",
		log:   "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n$ nvidia-smi\nbash: nvidia-smi: command not found\n",
		cause: "driver_missing", decided: false,
		notCause: []string{"driver_too_old_for_cuda"},
	},
	{
		name:  "error_35_with_nvml_library_not_found_is_no_driver",
		log:   "Check failed: error == cudaSuccess (35 vs. 0)  CUDA driver version is insufficient for CUDA runtime version\nNVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\n",
		cause: "driver_missing", decided: false,
		notCause: []string{"driver_too_old_for_cuda"},
	},
	// Alone, error 35 keeps its commonest reading.
	{
		name:  "error_35_alone_stays_driver_too_old",
		log:   "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n",
		cause: "driver_too_old_for_cuda", decided: false,
	},
}

func TestRuntime35Calibration(t *testing.T) {
	for _, c := range runtime35Cases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// CuPy's OutOfMemoryError says what its pool held (cupy/cuda/memory.pyx:
// 'allocated so far', the request included, after freeing its cache).
var cupyOOMCases = []judgmentCase{
	// The pool held 512 bytes when the GPU refused: the memory was held
	// outside it, most likely by another process (undecided).
	{
		name:  "cupy_oom_pool_held_almost_nothing",
		log:   "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 512 bytes (allocated so far: 512 bytes).\n",
		cause: "gpu_out_of_memory_other_process", decided: false,
	},
	// A large first request says nothing of others (the card may be
	// smaller than the request).
	{
		name:  "cupy_oom_large_request_stays_undecided_own",
		log:   "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 35,433,480,192 bytes (allocated so far: 35,433,480,192 bytes).\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	// The pool's own limit refused: no sign of another process.
	{
		name:  "cupy_oom_pool_limit",
		log:   "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,024 bytes (allocated so far: 800,000,000 bytes, limit set to: 800,000,512 bytes).\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
		detail: "pool limit",
	},
}

func TestCupyOOMCalibration(t *testing.T) {
	for _, c := range cupyOOMCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// FFmpeg's NVDEC/NVENC libraries (libnvcuvid, libnvidia-encode) come with
// the driver's video part; a container gets them only with the 'video'
// driver capability (NVIDIA Container Toolkit: empty or unset is
// 'utility'). Missing, the likelier reading is such a container.
var ffmpegVideoLibCases = []judgmentCase{
	{
		name:  "ffmpeg_nvcuvid_missing_is_most_likely_a_container_without_video",
		log:   "[h264_cuvid @ 0x1ec8780] Cannot load libnvcuvid.so.1\n[h264_cuvid @ 0x1ec8780] Failed loading nvcuvid.\n",
		cause: "container_runtime_no_gpu", decided: false,
		noFix: []string{"container-gpus", "install-driver"},
	},
	{
		name:  "ffmpeg_nvenc_missing_is_most_likely_a_container_without_video",
		log:   "[h264_nvenc @ 0x55d0] Cannot load libnvidia-encode.so.1\n",
		cause: "container_runtime_no_gpu", decided: false,
	},
	// libcuda itself missing keeps the commonest reading, no driver.
	{
		name:  "ffmpeg_libcuda_missing_stays_driver_missing",
		log:   "Cannot load libcuda.so.1\n[AVHWDeviceContext @ 0x562894e1d340] Could not dynamically load CUDA\n",
		cause: "driver_missing", decided: false,
	},
	// Windows has no such container: the driver's DLL is missing.
	{
		name:  "ffmpeg_windows_nvenc_dll_stays_driver_missing",
		log:   "[h264_nvenc @ 000001] Cannot load nvEncodeAPI64.dll\n",
		cause: "driver_missing", decided: false,
	},
}

func TestFFmpegVideoLibCalibration(t *testing.T) {
	for _, c := range ffmpegVideoLibCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
