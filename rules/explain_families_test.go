package rules

import "testing"

// familyCases: message families that explain recognised in none of their
// wordings, or named by the wrong family, written from the source of the
// program that prints them (each signature's sources), never from one log.
// A line several causes share stays "most likely" (decided false).
var familyCases = []judgmentCase{
	// Transformers' bitsandbytes quantizers refuse a device map that put
	// modules on the CPU or the disk because they did not fit in the GPU
	// memory free at load time (quantizer_bnb_8bit.py/_4bit.py): the job
	// does not fit, or another process holds memory. An OOM, undecided.
	{
		name:  "hf_bnb_modules_dispatched_on_cpu_is_gpu_memory",
		log:   "ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules in 32-bit, you need to set `llm_int8_enable_fp32_cpu_offload=True` and pass a custom `device_map` to `from_pretrained`.\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
		noFix: []string{"tf-allow-growth"},
	},
	{
		name:  "hf_awq_device_map_with_cpu_is_gpu_memory",
		log:   "ValueError: You are attempting to load an AWQ model with a device_map that contains a CPU or disk device. This is not supported. Please remove the CPU or disk device from the device_map.\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	// The CUDA runtime's cudaErrorMemoryAllocation and the driver API's
	// CUDA_ERROR_OUT_OF_MEMORY are both 2: a program that prints only the
	// number reports an out-of-memory.
	{
		name:  "bare_cuda_error_2_is_out_of_memory",
		log:   "CUDA error! 2\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "cuda_error_20_is_not_2",
		log:   "CUDA error! 20\n",
		cause: "", notCause: []string{"gpu_out_of_memory_own_job"},
	},
	// TensorFlow 1.x's host allocator notice ('of system memory', without
	// 'free') is as harmless as 2.x's.
	{
		name:  "tf1_allocation_exceeds_10pct_of_system_memory_is_harmless",
		log:   "2019-09-14 14:44:51.775151: W tensorflow/core/framework/cpu_allocator_impl.cc:81] Allocation of 376320000 exceeds 10% of system memory.\n",
		cause: "benign_warning_only", decided: false,
	},
	// glog's CHECK on a CUDA device count (COLMAP's CHECK_GT(num_cuda_devices, 0)).
	{
		name:  "glog_check_cuda_device_count_zero",
		log:   "F1023 10:00:00.000000  1234 cuda.cc:40] Check failed: num_cuda_devices > 0 (0 vs. 0)\n*** Check failure stack trace: ***\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "miner_cuda_initialize_error",
		log:   "20210101 10:00:00 ERROR: Can't start miner, CUDA initialize error\n",
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	// The bare wording is T-Rex's for a start-up without an error code; a
	// program that names CUDA_ERROR_UNKNOWN stays cuinit_unknown_error.
	{
		name:  "cuda_initialization_failed_stays_a_cuda_start_failure",
		log:   "ERROR: CUDA initialization failed\n",
		cause: "cuinit_unknown_error", decided: false,
	},
	// The runtime's error 35 (cudaErrorInsufficientDriver) as a bare number:
	// the same reading as its text, undecided (the runtime says it where no
	// driver is loaded too); a driver version shown decides it.
	{
		name:  "bare_runtime_error_35_is_driver_too_old_undecided",
		log:   "panic: Unknown CUresult: 35\n",
		cause: "driver_too_old_for_cuda", decided: false,
	},
	{
		name: "bare_runtime_error_35_with_the_driver_shown",
		log: `| NVIDIA-SMI 367.57                 Driver Version: 367.57                    |
CUDA error 35 at main.cu:42
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "cuda_error_350_is_not_35",
		log:   "CUDA error 350\n",
		cause: "", notCause: []string{"driver_too_old_for_cuda"},
	},
	// PyTorch's CPU kernels without float16 ('"addmm_impl_cpu_" not
	// implemented for 'Half'', Dispatch.h): the model runs on the CPU.
	{
		name:  "torch_half_kernel_on_cpu",
		log:   "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'\n",
		cause: "framework_cpu_only_build", decided: false,
		noFix: []string{"pip-install-tensorflow"},
	},
	{
		name:  "torch_half_cuda_kernel_is_not_cpu",
		log:   "RuntimeError: \"baddbmm_cuda\" not implemented for 'Half'\n",
		cause: "", notCause: []string{"framework_cpu_only_build"},
	},
	// PyTorch maps no GPU memory ahead (CUDACachingAllocator), so its failed
	// cuBLAS handle (CublasHandlePool.cpp, TORCH_CUDABLAS_CHECK) is memory
	// already full, not TensorFlow's preallocation, unless TensorFlow runs
	// in the same paste.
	{
		name:  "torch_cublas_handle_alloc_failed_is_gpu_memory_not_preallocation",
		log:   "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
		notCause: []string{"gpu_memory_preallocation"}, noFix: []string{"tf-allow-growth"},
	},
	{
		name: "torch_cublas_handle_with_tensorflow_in_the_paste_is_preallocation",
		log: `2019-01-01 12:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1351] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 10813 MB memory)
RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling ` + "`cublasCreate(handle)`" + `
`,
		cause: "gpu_memory_preallocation", decided: false,
	},
	// Windows refusing an application's CUDA build of its own engine DLL
	// (dylib's 'Could not load library', ctypes' '(or one of its
	// dependencies)'): the DLL is there, a dependency is not, for a CUDA
	// build most often the CUDA runtime and cuBLAS DLLs. Undecided.
	{
		name:  "windows_cuda_engine_dll_not_loaded",
		log:   "ERROR Could not load engine: Could not load library \"C:\\App\\bin\\win-cuda-12-0/engines/llama/engine.dll\"\n",
		cause: "libcudart_missing", decided: false,
	},
	{
		name:     "windows_dll_without_cuda_is_not_the_cuda_runtime",
		log:      "ERROR Could not load engine: Could not load library \"C:\\App\\bin\\win-avx2/engines/llama/engine.dll\"\n",
		notCause: []string{"libcudart_missing"},
	},
	// TensorFlow 2.1-2.3 register XLA_GPU from the driver alone and GPU
	// only when the CUDA libraries load (xla_gpu_device.cc, gpu_device.cc).
	{
		name: "tf_xla_gpu_listed_without_gpu_is_the_cuda_libraries",
		log: `[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU'),
 PhysicalDevice(name='/physical_device:XLA_CPU:0', device_type='XLA_CPU'),
 PhysicalDevice(name='/physical_device:XLA_GPU:0', device_type='XLA_GPU')]
`,
		cause: "cuda_version_mismatch_tf_build", decided: false,
	},
	{
		name: "tf_xla_gpu_with_a_gpu_device_is_no_failure",
		log: `[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU'),
 PhysicalDevice(name='/physical_device:XLA_CPU:0', device_type='XLA_CPU'),
 PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU'),
 PhysicalDevice(name='/physical_device:XLA_GPU:0', device_type='XLA_GPU')]
`,
		notCause: []string{"cuda_version_mismatch_tf_build"},
	},
	// list_physical_devices() with every device answered by the CPU alone.
	{
		name:  "tf_device_list_with_the_cpu_alone",
		log:   "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]\n",
		cause: "tf_cpu_only_build_installed", decided: false,
	},
	// CuPy 4-7's out-of-memory wording (memory.pyx OutOfMemoryError).
	{
		name:  "cupy_v7_out_of_memory_to_allocate",
		log:   "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 11811160064 bytes)\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:     "host_out_of_memory_to_allocate_is_not_the_gpu",
		log:      "FUSE addToBuff(/x,0x10). Out of memory to allocate 4096 bytes.\n",
		notCause: []string{"gpu_out_of_memory_own_job", "gpu_out_of_memory_other_process"},
	},
	// Thinc's require_gpu: its CuPy backend is missing (thinc/util.py).
	{
		name:  "thinc_gpu_not_accessible_is_cupy_missing",
		log:   "ValueError: GPU is not accessible. Was the library installed correctly?\n",
		cause: "framework_not_installed", decided: false,
		noFix: []string{"pip-install-tensorflow"},
	},
	// cuDNN/cuBLAS EXECUTION_FAILED: a kernel the library launched failed
	// (cudnnStatus_t, cublasStatus_t); most often no kernels for this GPU.
	{
		name:  "torch_cudnn_execution_failed",
		log:   "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	// llama.cpp's device buffer (buffer type CUDA0) could not be allocated.
	{
		name:  "llama_cpp_cuda0_buffer_is_gpu_memory",
		log:   "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:     "llama_cpp_cuda_host_buffer_is_not_gpu_memory",
		log:      "llama_model_load: error loading model: unable to allocate CUDA_Host buffer\n",
		notCause: []string{"gpu_out_of_memory_own_job", "gpu_out_of_memory_other_process"},
	},
	{
		name:  "cuda_template_do_you_have_a_cuda_capable_gpu",
		log:   "cudaSetDevice failed!  Do you have a CUDA-capable GPU installed?\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "could_not_find_a_cuda_capable_device",
		log:   "Error: could not find a CUDA-capable device. Check your driver installation.\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	// Caffe's CUDA_CHECK of cudaErrorInitializationError (3).
	{
		name:  "caffe_cuda_check_initialization_error",
		log:   "F0101 12:00:00.000000  1234 common.cpp:152] Check failed: error == cudaSuccess (3 vs. 0)  initialization error\n",
		cause: "cuinit_unknown_error", decided: false,
	},
	{
		name:  "unable_to_find_a_usable_gpu",
		log:   "Unable to find a usable GPU.\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	// torch.autocast('cuda', dtype=torch.bfloat16) without bf16 support
	// (autocast_mode.py; is_bf16_supported: CUDA >= 11 and compute >= 8.0).
	{
		name:  "torch_autocast_bf16_unsupported_device",
		log:   "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	// A build that needs the CUDA toolkit and finds none (CMake, a shell
	// running nvcc); an interactive 'nvcc: command not found' stays harmless.
	{
		name:  "cmake_could_not_find_cuda",
		log:   "  Could NOT find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR CUDA_NVCC_EXECUTABLE CUDA_INCLUDE_DIRS CUDA_CUDART_LIBRARY)\n",
		cause: "libcudart_missing", decided: false, noFix: []string{"pip-install-tensorflow"},
	},
	{
		name:  "build_shell_nvcc_not_found",
		log:   "/bin/sh: 1: nvcc: not found\n",
		cause: "libcudart_missing", decided: false,
	},
	{
		name:  "interactive_nvcc_command_not_found_stays_harmless",
		log:   "bash: nvcc: command not found\n",
		cause: "benign_warning_only",
	},
	// PyTorch's dispatcher: torchvision registered no CUDA kernel.
	{
		name:  "torchvision_op_without_cuda_backend",
		log:   "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if using custom build).\n",
		cause: "cuda_version_mismatch_tf_build", decided: false,
	},
	// Transformers' flash_attention_2 without the flash-attn package.
	{
		name:  "transformers_flash_attn_not_installed",
		log:   "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package flash_attn seems to be not installed. Please refer to the documentation of https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install Flash Attention 2.\n",
		cause: "framework_not_installed", decided: true,
	},
	// PyTorch's own OOM exception class is a GPU failure; the broad family
	// set aside every line with 'memoryerror' in it (Python's host one).
	{
		name:  "torch_cuda_outofmemoryerror_class_is_gpu_memory",
		log:   "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:     "numpy_memoryerror_is_host_memory",
		log:      "MemoryError: Unable to allocate 3.00 GiB for an array with shape (1024, 1024, 768) and data type float32\n",
		notCause: []string{"gpu_out_of_memory_own_job", "gpu_out_of_memory_other_process"},
	},
	// Ollama's install.sh: nvidia-smi silent and no NVIDIA device on lspci/lshw.
	{
		name:  "ollama_installer_no_nvidia_gpu",
		log:   "WARNING: No NVIDIA/AMD GPU detected. Ollama will run in CPU-only mode.\n",
		cause: "no_nvidia_gpu", decided: false, noFix: []string{"install-driver"},
	},
	// ComfyUI prints PyTorch's capped-process OOM cut to 'Allocation on
	// device' (execution.py, CUDACachingAllocator).
	{
		name:  "comfyui_allocation_on_device_is_gpu_memory",
		log:   "!!! Exception during processing !!! Allocation on device \nTraceback (most recent call last):\ntorch.cuda.OutOfMemoryError: Allocation on device \n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "cuda_samples_error_code_out_of_memory",
		log:   "Failed to allocate device vector A (error code out of memory)!\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "no_supported_gpu_device_was_found",
		log:   "No supported GPU device was found on this computer.\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	// Harmless notices from their sources (module_wrapper.py, grappler's
	// loop and meta optimizers, gpu_process_state.cc, Transformers,
	// Lightning): a paste of only these is harmless.
	{
		name: "tf_and_hf_notices_only_are_harmless",
		log: `WARNING:tensorflow:From /usr/lib/python3/site-packages/keras/src/losses.py:2976: The name tf.losses.sparse_softmax_cross_entropy is deprecated. Please use tf.compat.v1.losses.sparse_softmax_cross_entropy instead.
2023-01-01 00:00:00.000000: W tensorflow/core/grappler/optimizers/loop_optimizer.cc:933] Skipping loop optimization for Merge node with control input: cond/branch_executed/_8
2023-01-01 00:00:00.000000: E tensorflow/core/grappler/optimizers/meta_optimizer.cc:954] layout failed: INVALID_ARGUMENT: Size of values 0 does not match size of permutation 4 @ fanin shape inSequential/dropout/dropout/SelectV2-2-TransposeNHWCToNCHW-LayoutOptimizer
2023-01-01 00:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_process_state.cc:222] Using CUDA malloc Async allocator for GPU: 0
Using a slow image processor as ` + "`use_fast`" + ` is unset and a slow processor was saved with this model.
Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.72s/it]
LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]
`,
		cause: "benign_warning_only",
	},
	{
		name:  "a_real_failure_beside_the_notices_still_wins",
		log:   "WARNING:tensorflow:From /x.py:1: The name tf.Session is deprecated. Please use tf.compat.v1.Session instead.\nRuntimeError: CUDA error: out of memory\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	// The runtime API's own name for error 803 (driver_types.h).
	{
		name:  "cuda_runtime_error_name_803_alone",
		log:   "RuntimeError: cudaErrorSystemDriverMismatch\n",
		cause: "driver_library_mismatch", decided: true,
	},
	// Colab's dialog when it refuses a GPU runtime (usage limits).
	{
		name:  "colab_gpu_usage_limits_is_no_nvidia_gpu",
		log:   "Cannot connect to GPU backend\nYou cannot currently connect to a GPU due to usage limits in Colab. Learn more\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
		cause: "no_nvidia_gpu", decided: false, noFix: []string{"install-driver"},
	},
	// PyCUDA's guarded call: '<function> failed: <CUresult text>'.
	{
		name:  "pycuda_cumemalloc_out_of_memory",
		log:   "pycuda._driver.MemoryError: cuMemAlloc failed: out of memory\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	// A StreamExecutor without its DNN plugin: cuDNN did not load.
	{
		name:  "tf_no_dnn_in_stream_executor",
		log:   "tensorflow.python.framework.errors_impl.InternalError: Exception encountered when calling layer \"conv2d\" (type Conv2D). No DNN in stream executor. [Op:Conv2D]\n",
		cause: "libcudnn_missing", decided: false,
	},
	{
		name:  "xla_ret_check_dnn_nullptr",
		log:   "XlaRuntimeError: INTERNAL: RET_CHECK failure (external/xla/xla/service/gpu/gpu_compiler.cc:618) dnn != nullptr\n",
		cause: "libcudnn_missing", decided: false,
	},
	// Windows' own words for a DLL of the same name lacking an entry point
	// (ERROR_PROC_NOT_FOUND at start-up), and NTSTATUS exit codes.
	{
		name:  "windows_entry_point_not_in_cudnn_dll",
		log:   "The procedure entry point cudnnGetLibConfig could not be located in the dynamic link library C:\\CUDA\\v11.2\\bin\\cudnn_ops_infer64_8.dll.\n",
		cause: "cudnn_version_mismatch", decided: false,
	},
	{
		name:  "windows_exit_code_illegal_instruction",
		log:   "Process finished with exit code -1073741795 (0xC000001D)\n",
		cause: "framework_import_failed", decided: false,
	},
	{
		name:  "windows_exit_code_dll_not_found",
		log:   "Process finished with exit code -1073741515 (0xC0000135)\n",
		cause: "framework_import_failed", decided: false,
	},
	// A bare number is read only as an error code, not as a count.
	{
		name:     "cuda_error_2_devices_is_a_count",
		log:      "CUDA error: 2 devices found but none usable by this build\n",
		notCause: []string{"gpu_out_of_memory_own_job"},
	},
	// XLA's autotuner finding no cuBLAS in its StreamExecutor: the family
	// of 'without BLAS support' (a cuBLAS that did not initialise).
	{
		name:  "xla_gemm_algorithm_picker_without_blas",
		log:   "XlaRuntimeError: INTERNAL: RET_CHECK failure (external/org_tensorflow/tensorflow/compiler/xla/service/gpu/gemm_algorithm_picker.cc:309) stream->parent()->GetBlasGemmAlgorithms(stream, &algorithms)\n",
		cause: "gpu_memory_preallocation", decided: false,
	},
	{
		name:  "opencv_throw_no_cuda_not_implemented",
		log:   "cv2.error: OpenCV(4.5.5) :-1: error: (-213:The function/feature is not implemented) The called functionality is disabled for current build or platform in function 'throw_no_cuda'\n",
		cause: "framework_cpu_only_build", decided: true,
	},
	{
		name:  "deepspeed_cuda_home_does_not_exist",
		log:   "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)\n",
		cause: "libcudart_missing", decided: true,
	},
	// Unsloth raises at import when torch.cuda.is_available() is False: the
	// family of PyTorch reporting CUDA unavailable, not a bare 'no device'.
	{
		name:  "unsloth_no_nvidia_gpu_found_is_torch_cuda_unavailable",
		log:   "NotImplementedError: Unsloth: No NVIDIA GPU found? Unsloth currently only supports GPUs!\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name:  "hashcat_temperature_limit_reached",
		log:   "ATTENTION! Temperature limit on GPU #1 reached, aborting...\n",
		cause: "gpu_throttled", decided: false,
	},
	// cuBLAS NOT_SUPPORTED: a data type the GPU lacks (bf16 before Ampere).
	{
		name:  "ctranslate2_cublas_not_supported",
		log:   "RuntimeError: cuBLAS failed with status CUBLAS_STATUS_NOT_SUPPORTED\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	// bash's 'command not found' in the user's language.
	{
		name:  "nvidia_smi_command_not_found_in_chinese",
		log:   "bash: nvidia-smi：未找到命令\n",
		cause: "driver_missing", decided: false,
	},
	{
		name:  "nvidia_smi_command_not_found_in_german",
		log:   "bash: nvidia-smi: Befehl nicht gefunden.\n",
		cause: "driver_missing", decided: false,
	},
	// glibc's dlerror in the user's language (zh_CN, de).
	{
		name:  "dlerror_in_chinese_names_the_missing_library",
		log:   "ImportError: libcudnn.so.8: 无法打开共享对象文件: 没有那个文件或目录\n",
		cause: "libcudnn_missing", decided: true,
	},
	{
		name:  "dlerror_in_german_names_the_missing_library",
		log:   "OSError: libcudart.so.11.0: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis nicht gefunden\n",
		cause: "libcudart_missing", decided: true,
	},
	// SIGILL as the shell names it in the user's language.
	{
		name:  "illegal_instruction_in_french",
		log:   ">>> import tensorflow as tf\nInstruction illégale (core dumped)\n",
		cause: "framework_import_failed", decided: false,
	},
	{
		name:  "illegal_instruction_in_german",
		log:   "$ python -c 'import tensorflow'\nUngültiger Maschinenbefehl (Speicherabzug geschrieben)\n",
		cause: "framework_import_failed", decided: false,
	},
	// Windows' 'not recognized as a command' in Chinese and German.
	{
		name:  "windows_cmd_nvidia_smi_not_recognized_in_chinese",
		log:   "C:\\Users\\me>nvidia-smi\n'nvidia-smi' 不是内部或外部命令，也不是可运行的程序\n或批处理文件。\n",
		cause: "driver_missing", decided: false,
	},
	{
		name:  "windows_cmd_nvidia_smi_not_recognized_in_german",
		log:   "Der Befehl \"nvidia-smi\" ist entweder falsch geschrieben oder\nkonnte nicht gefunden werden.\n",
		cause: "driver_missing", decided: false,
	},
	{
		name:  "ls_dev_nvidia_in_chinese",
		log:   "$ ls /dev/nvidia*\nls: 无法访问 '/dev/nvidia*': 没有那个文件或目录\n",
		cause: "driver_missing", decided: false,
	},
	{
		name:  "apt_unable_to_locate_nvidia_driver_in_chinese",
		log:   "$ sudo apt install nvidia-driver-535\nE: 无法定位软件包 nvidia-driver-535\n",
		cause: "driver_missing", decided: false,
	},
	// TensorFlow 1.x's placer: a GPU asked for, only CPU devices registered.
	{
		name:  "tf1_explicitly_assigned_gpu_but_only_cpu_available",
		log:   "InvalidArgumentError: Cannot assign a device for operation 'MatMul': Operation was explicitly assigned to /device:GPU:0 but available devices are [ /job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the device specification refers to a valid device.\n",
		cause: "tf_cpu_only_build_installed", decided: false,
	},
}

func TestFamilies(t *testing.T) {
	for _, c := range familyCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
