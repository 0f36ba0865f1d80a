package rules

import "testing"

// labelCases: the six labels added for issue 15 (gpu_out_of_memory_own_job,
// fabric_manager_not_running, no_nvidia_gpu, gpu_index_out_of_range,
// scheduler_no_gpu_allocated, open_kernel_module_unsupported_gpu). Each is
// decided only where the paste shows the fact that settles it; the bare
// message stays a symptom named by its commonest reading, with no fix.
var labelCases = []judgmentCase{
	{
		name:  "oom_bare_is_a_symptom",
		log:   "RuntimeError: CUDA error: out of memory\n",
		cause: "gpu_out_of_memory_own_job", decided: false, noFix: []string{"use-free-gpu", "tf-allow-growth"},
	},
	{
		name: "oom_torch2_this_process_holds_the_card",
		log: `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 22.51 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 180.00 MiB is reserved by PyTorch but unallocated.
`,
		cause: "gpu_out_of_memory_own_job", decided: true, noFix: []string{"use-free-gpu"},
	},
	{
		// In a container PyTorch's own process is 'Process N': the row that
		// covers what PyTorch allocated is this process, not another.
		name: "oom_torch2_own_process_seen_from_another_pid_namespace",
		log: `torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 47.53 GiB of which 16.88 MiB is free. Process 1501136 has 47.51 GiB memory in use. Of the allocated memory 47.14 GiB is allocated by PyTorch, and 57.79 MiB is reserved by PyTorch but unallocated.
`,
		cause: "gpu_out_of_memory_own_job", decided: true, notCause: []string{"gpu_out_of_memory_other_process"},
	},
	{
		name: "oom_torch2_another_process_holds_most",
		log: `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 576.00 MiB. GPU 0 has a total capacity of 31.36 GiB of which 370.69 MiB is free. Process 16335 has 25.34 GiB memory in use. Including non-PyTorch memory, this process has 5.55 GiB memory in use. Of the allocated memory 4.89 GiB is allocated by PyTorch, and 77.08 MiB is reserved by PyTorch but unallocated.
`,
		cause: "gpu_out_of_memory_other_process", decided: true,
	},
	{
		// Two rows and neither is 'this process': the smaller row covering
		// PyTorch's allocation is this one, the other is another job.
		name: "oom_torch2_two_rows_container",
		log: `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 512.00 MiB is free. Process 3011 has 14.20 GiB memory in use. Process 3377 has 8.90 GiB memory in use. Of the allocated memory 8.41 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.
`,
		cause: "gpu_out_of_memory_other_process", decided: true,
	},
	{
		// No process rows (NVML unavailable): PyTorch's allocation covering
		// the card is the job's own; the free figure at the failure is not
		// memory held before the program started.
		name: "oom_torch2_no_process_rows",
		log: `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free. Of the allocated memory 14.30 GiB is allocated by PyTorch, and 190.00 MiB is reserved by PyTorch but unallocated.
`,
		cause: "gpu_out_of_memory_own_job", decided: true,
	},
	{
		name: "oom_torch2_no_rows_little_allocated_stays_a_symptom",
		log: `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free. Of the allocated memory 1.30 GiB is allocated by PyTorch, and 190.00 MiB is reserved by PyTorch but unallocated.
`,
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name: "oom_at_context_creation_is_another_process",
		log: `2019-07-11 12:42:11.226602: W tensorflow/compiler/xla/service/platform_util.cc:240] unable to create StreamExecutor for CUDA:0: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY: out of memory; total memory reported: 11523260416
`,
		cause: "gpu_out_of_memory_other_process", decided: true,
	},
	{
		name: "oom_tf1_memory_free_at_start",
		log: `totalMemory: 10.92GiB freeMemory: 10.76GiB
tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,512,96,96] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc
`,
		cause: "gpu_out_of_memory_own_job", decided: true,
	},
	{
		name:  "error_802_bare_is_a_symptom",
		log:   "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized\n",
		cause: "fabric_manager_not_running", decided: false, notCause: []string{"cuinit_unknown_error"},
	},
	{
		name: "error_802_on_an_hgx_node",
		log: `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-00000000-0000-0000-0000-000000000000)
failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized
`,
		cause: "fabric_manager_not_running", decided: true,
	},
	{
		// A PCIe H100 (or H200 NVL) has no NVSwitch: no mark.
		name: "error_802_on_a_pcie_card_stays_a_symptom",
		log: `GPU 0: NVIDIA H100 PCIe (UUID: GPU-00000000-0000-0000-0000-000000000000)
GPU 1: NVIDIA H200 NVL (UUID: GPU-00000000-0000-0000-0000-000000000001)
failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized
`,
		cause: "fabric_manager_not_running", decided: false,
	},
	{
		name: "fabric_manager_failed_without_802_or_nvswitch",
		log: `Mar 04 09:12:01 node07 systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.
Mar 04 09:12:01 node07 systemd[1]: Failed to start NVIDIA fabric manager service.
`,
		cause: "fabric_manager_not_running", decided: false,
	},
	{
		name: "fabric_manager_version_mismatch",
		log: `Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 don't match with driver version 550.120. Please update with matching NVIDIA driver package.
`,
		cause: "fabric_manager_not_running", decided: true, notCause: []string{"driver_library_mismatch"},
	},
	{
		name:  "nvrm_no_gpu_found",
		log:   "[   12.412210] NVRM: No NVIDIA GPU found.\nmodprobe: ERROR: could not insert 'nvidia': No such device\n",
		cause: "no_nvidia_gpu", decided: false, noFix: []string{"install-driver", "dkms-rebuild"},
	},
	{
		// The driver ignoring a legacy GPU says more than the module's
		// count of none.
		name: "nvrm_no_adapter_after_legacy_refusal",
		log: `NVRM: The NVIDIA GeForce 7300 GT GPU installed in this system is supported through the NVIDIA 304.xx Legacy drivers. Please
NVRM:  information.  The 340.108 NVIDIA driver will ignore
NVRM: No NVIDIA graphics adapter found!
`,
		cause: "driver_missing", decided: true,
	},
	{
		name: "open_module_on_pascal",
		log: `NVRM: The NVIDIA GeForce GTX 1080 GPU installed in this system is not supported by open nvidia.ko because it does not include the required GPU System Processor (GSP).
No devices were found
`,
		cause: "open_kernel_module_unsupported_gpu", decided: true,
	},
	{
		name: "invalid_ordinal_bare_is_a_symptom",
		log:  "RuntimeError: CUDA error: invalid device ordinal\n",
		// Not the variable: nothing shows it.
		cause: "gpu_index_out_of_range", decided: false, noFix: []string{"unset-cuda-visible-devices"},
	},
	{
		name: "invalid_ordinal_index_past_the_gpus",
		log: `GPU 0: NVIDIA GeForce RTX 3060 (UUID: GPU-8c1a2b3c-0000-0000-0000-000000000000)
model = nn.DataParallel(model, device_ids=[0, 1])
RuntimeError: CUDA error: invalid device ordinal
`,
		cause: "gpu_index_out_of_range", decided: true,
	},
	{
		// The index exists: the paste does not show why CUDA refused it.
		name: "invalid_ordinal_index_within_the_gpus",
		log: `GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-00000000-0000-0000-0000-000000000000)
GPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-00000000-0000-0000-0000-000000000001)
torch.cuda.set_device(1)
RuntimeError: CUDA error: invalid device ordinal
`,
		cause: "gpu_index_out_of_range", decided: false,
	},
	{
		// CUDA_VISIBLE_DEVICES hiding every GPU stays its own cause.
		name: "invalid_ordinal_with_every_gpu_hidden",
		log: `$ export CUDA_VISIBLE_DEVICES=-1
$ python train.py --gpu 0
RuntimeError: CUDA error: invalid device ordinal
`,
		cause: "cuda_visible_devices_hides_gpu", decided: true,
	},
	{
		name:  "slurm_no_node_has_the_gpus",
		log:   "$ srun --gres=gpu:8 python train.py\nsrun: error: Unable to allocate resources: Requested node configuration is not available\n",
		cause: "scheduler_no_gpu_allocated", decided: true, noFix: []string{"unset-cuda-visible-devices"},
	},
	{
		// The job script is shown and asks for no GPU: decided.
		name: "slurm_script_without_gpu_request",
		log: `#SBATCH --partition=gpu
#SBATCH --cpus-per-task=8
RuntimeError: No CUDA GPUs are available
`,
		cause: "scheduler_no_gpu_allocated", decided: true, noFix: []string{"unset-cuda-visible-devices"},
	},
	{
		// Only a mark of a Slurm job: the request is not shown.
		name:  "slurm_mark_only_stays_a_symptom",
		log:   "slurmstepd: error: *** JOB 81234 ON gpu-node07 CANCELLED AT 2025-02-11T10:22:13 ***\nRuntimeError: No CUDA GPUs are available\n",
		cause: "scheduler_no_gpu_allocated", decided: false,
	},
	{
		// The job asked for a GPU: not the scheduler's doing.
		name:     "slurm_gpu_requested_is_not_the_scheduler",
		log:      "#SBATCH --gres=gpu:1\nRuntimeError: No CUDA GPUs are available\n",
		cause:    "cuda_visible_devices_hides_gpu",
		notCause: []string{"scheduler_no_gpu_allocated"},
	},
	{
		name:  "torch_load_checkpoint_from_gpu_1",
		log:   "RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device.\n",
		cause: "gpu_index_out_of_range", decided: true,
	},
	{
		name:  "vllm_context_does_not_fit",
		log:   "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (4.21 GiB). Based on the available memory, the estimated maximum model length is 34480. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n",
		cause: "gpu_out_of_memory_own_job", decided: true,
	},
	{
		name:  "vllm_no_cache_blocks_stays_a_symptom",
		log:   "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "vllm_memory_taken_at_startup",
		log:   "ValueError: Free memory on device cuda:0 (12.18/23.56 GiB) on startup is less than desired GPU memory utilization (0.92, 21.67 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n",
		cause: "gpu_out_of_memory_other_process", decided: true, noFix: []string{"tf-allow-growth"},
	},
	{
		name:  "paddle_oom_is_a_symptom",
		log:   "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 1.500000GB memory on GPU 0, 10.200000GB memory has been allocated and available memory is only 500.000000MB.\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		// A Mac with Apple silicon has no NVIDIA GPU: not a CPU-only wheel
		// to replace.
		name:  "torch_not_compiled_with_cuda_on_an_apple_silicon_mac",
		log:   "AssertionError: Torch not compiled with CUDA enabled\nOS: macOS 14.2.1 (arm64)\n",
		cause: "no_nvidia_gpu", decided: true, noFix: []string{"framework-gpu-build"},
	},
	{
		name:  "torch_not_compiled_with_cuda_elsewhere",
		log:   "AssertionError: Torch not compiled with CUDA enabled\n",
		cause: "framework_cpu_only_build", decided: true,
	},
	{
		// nvidia-modprobe listed the PCI bus and found no NVIDIA device:
		// the CUDA error after it is its consequence.
		name:  "nvidia_modprobe_found_no_nvidia_device",
		log:   "NVIDIA: no NVIDIA devices found\ncudaGetDeviceCount returned 30\n-> unknown error\n",
		cause: "no_nvidia_gpu", decided: true, noFix: []string{"install-driver"},
	},
}

func TestNewLabels(t *testing.T) {
	for _, c := range labelCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// TestTitleNamesTheFramework: a failure's title says whose message it is
// where its evidence is one framework's, unless it already does; a name
// or an acronym keeps its case.
func TestTitleNamesTheFramework(t *testing.T) {
	for _, c := range []struct{ fw, in, want string }{
		{"pytorch", "The GPU ran out of memory", "PyTorch: the GPU ran out of memory"},
		{"tensorflow", "TensorRT not found", "TensorFlow: TensorRT not found"},
		{"jax", "CUDA found no usable GPU (CUDA_ERROR_NO_DEVICE)", "JAX: CUDA found no usable GPU (CUDA_ERROR_NO_DEVICE)"},
		{"pytorch", "vLLM: the model's context does not fit", "vLLM: the model's context does not fit"},
		{"pytorch", "PyTorch is a CPU-only build", "PyTorch is a CPU-only build"},
		{"pytorch", "The installed torch has no kernels for this GPU", "The installed torch has no kernels for this GPU"},
		{"onnxruntime", "cuDNN could not start", "ONNX Runtime: cuDNN could not start"},
		{"other", "A source build failed", "A source build failed"},
		{"tensorflow", "A stub libcuda was loaded", "TensorFlow: a stub libcuda was loaded"},
		{"onnxruntime", "Windows could not load a DLL", "ONNX Runtime: Windows could not load a DLL"},
	} {
		if got := titleWithFramework(c.fw, c.in); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.fw, c.in, got, c.want)
		}
	}
	r := ExplainText("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n")
	if r.RootCause == nil || r.RootCause.Title != "PyTorch: the GPU ran out of memory" {
		t.Errorf("a PyTorch OOM's root cause title: %+v", r.RootCause)
	}
}
