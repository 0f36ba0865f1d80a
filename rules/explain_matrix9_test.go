package rules

import "testing"

// matrix9Cases: the long tail of layers (Caffe/Caffe2, darknet, XGBoost,
// MXNet, miners, hashcat, ggml, numba, CUDA.jl, OpenCV, OpenCL, ONNX
// Runtime, PaddlePaddle, TensorRT) word six facts in their own strings: no
// device, a driver older than the runtime, device memory exhausted, a
// compute capability below the build, a CPU-only build, a CUDA library
// that does not load. Each wording was read in the layer's source (the
// signatures' sources); it is decided only where the string settles the
// fact, and a line several causes share stays "most likely".
var matrix9Cases = []judgmentCase{
	// (e) a CPU-only build, in the build's own words.
	{
		name:  "caffe_cpu_only_no_gpu_macro",
		log:   "F0312 10:01:02.123456  1234 common.cpp:66] Cannot use GPU in CPU-only Caffe: check mode.\n*** Check failure stack trace: ***\n",
		cause: "framework_cpu_only_build", decided: true,
	},
	{
		name:  "darknet_built_with_gpu_0",
		log:   " GPU isn't used \n OpenCV isn't used - data augmentation will be slow \nmini_batch = 1, batch = 1, time_steps = 1, train = 0 \n",
		cause: "framework_cpu_only_build", decided: true,
	},
	{
		// Caffe2's CPU-mode warning is printed by every CPU build of
		// PyTorch 1.x on import, also where the job runs on the CPU on
		// purpose: it must not outrank the failure next to it.
		name:     "caffe2_cpu_only_mode_does_not_outrank_the_failure",
		log:      "WARNING:root:This caffe2 python run failed to load cuda module:No module named 'caffe2.python.caffe2_pybind11_state_gpu',and AMD hip module:No module named 'caffe2.python.caffe2_pybind11_state_hip'.Will run in CPU only mode.\nTraceback (most recent call last):\nValueError: invalid literal for int() with base 10: 'x'\n",
		notCause: []string{"framework_cpu_only_build"},
	},
	{
		// A sentence that only mentions a GPU not being used is not
		// darknet's line.
		name:     "gpu_isnt_used_inside_a_sentence_is_not_read",
		log:      "Note: the GPU isn't used by this example, see README\n",
		notCause: []string{"framework_cpu_only_build"},
	},
	// (c) device memory exhausted, where the line names no CUDA or GPU.
	{
		name:  "mxnet2_memory_allocation_failed_out_of_memory",
		log:   "mxnet.base.MXNetError: Traceback (most recent call last):\n  File \"../src/storage/./pooled_storage_manager.h\", line 212\nMXNetError: Memory allocation failed out of memory\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		// MXNet's host allocation says strerror's words instead.
		name:     "mxnet2_host_allocation_failure_is_not_gpu_memory",
		log:      "MXNetError: Memory allocation failed Cannot allocate memory\n",
		notCause: []string{"gpu_out_of_memory_own_job", "gpu_out_of_memory_other_process"},
	},
	{
		name:  "xgboost_device_vector_oom",
		log:   "xgboost.core.XGBoostError: [10:01:02] ../src/common/device_vector.cu:34: Memory allocation error on worker 0: Caching allocator\n- Free memory: 1.2GiB\n- Requested memory: 3.5GiB\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "ethminer_dag_larger_than_free_memory",
		log:   " cu  12:01:02 cuda-0   Epoch 385 requires 4.01 GB memory.\n cu  12:01:02 cuda-0   This device hasn't enough memory available. Mining suspended ...\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "hashcat_not_enough_allocatable_device_memory",
		log:   "* Device #1: Not enough allocatable device memory for this hashlist/ruleset.\n\nStarted: Mon Jan  1 10:00:00 2024\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		name:  "pyopencl_mem_object_allocation_failure",
		log:   "pyopencl._cl.MemoryError: clEnqueueNDRangeKernel failed: MEM_OBJECT_ALLOCATION_FAILURE\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		// TensorRT's CUDA initialisation failing with the runtime's 2
		// (cudaErrorMemoryAllocation): the GPU's memory is full.
		name:  "tensorrt_cuda_init_failure_error_2_is_memory",
		log:   "[TRT] [E] createInferBuilder: Error Code 6: API Usage Error (CUDA initialization failure with error: 2. Please check your CUDA installation)\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		// LightGBM's CUDA check: 'CUDA_RUNTIME: <cudaGetErrorString>'.
		name:  "lightgbm_cuda_runtime_out_of_memory",
		log:   "[LightGBM] [Fatal] CUDA_RUNTIME: out of memory /tmp/LightGBM/src/treelearner/cuda/cuda_data_partition.cu 123\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		// ONNX Runtime's CudaCall naming cuBLAS's allocation failure.
		name:  "onnxruntime_cublas_alloc_failed",
		log:   "[E:onnxruntime:Default, cuda_call.cc:116 CudaCall] CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=x ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_execution_provider.cc ; line=168 ; expr=cublasCreate(&cublas_handle_);\n",
		cause: "gpu_out_of_memory_own_job", decided: false,
	},
	{
		// TensorFlow's own cuBLAS handle failure keeps its reading, and
		// the line is not read twice.
		name:       "tensorflow_cublas_handle_line_is_not_read_twice",
		log:        "2020-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED\n",
		cause:      "gpu_memory_preallocation",
		notFinding: []string{"layer.device_memory_exhausted"},
	},
	// (d) compute capability below the build.
	{
		name:  "ggml_no_device_code_for_this_arch",
		log:   "/llama.cpp/ggml/src/ggml-cuda/common.cuh:405: ERROR: CUDA kernel mul_mat_q has no device code compatible with CUDA arch 520. ggml-cuda.cu was compiled for: 600,700,800\n",
		cause: "unsupported_compute_capability", decided: true,
	},
	{
		name:  "numba_compute_capability_below_minimum",
		log:   "numba.cuda.cudadrv.error.CudaSupportError: <CUDA device 0 'b'GeForce GT 710''> has compute capability < (3, 5)\n",
		cause: "unsupported_compute_capability", decided: true,
	},
	{
		name:  "cudajl_compute_capability_not_supported_by_ptxas",
		log:   "ERROR: Compute capability 3.0.0 is not supported by ptxas 12.4.0 at PTX ISA 8.4\n",
		cause: "unsupported_compute_capability", decided: true,
	},
	// (b) the driver older than the runtime, with both versions.
	{
		name:  "cudajl_requires_newer_driver",
		log:   "┌ Error: This version of CUDA.jl requires an NVIDIA driver for CUDA 12.x or higher (yours only supports up to CUDA 11.4.0)\n└ @ CUDA ~/.julia/packages/CUDA/src/initialization.jl:93\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		// darknet's pair: runtime 11.2 on a driver for 10.2 (another
		// major version): decided by explain.driver_too_old.
		name:  "darknet_cuda_version_above_driver_other_major",
		log:   " CUDA-version: 11020 (10020)\n Warning: CUDA-version is higher than Driver-version! \n, cuDNN: 8.1.0, GPU count: 1  \n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		// The same major version: minor version compatibility runs it.
		name:     "darknet_cuda_version_above_driver_same_major",
		log:      " CUDA-version: 11020 (11010)\n Warning: CUDA-version is higher than Driver-version! \n, cuDNN: 8.1.0, GPU count: 1  \n",
		notCause: []string{"driver_too_old_for_cuda"},
	},
	{
		// Paddle's 'CUDA runtime version in your machine' is the driver's
		// CUDA (cudaDriverGetVersion): a driver too old, not a library of
		// another CUDA version.
		name:  "paddle_compiled_cuda_above_driver_cuda",
		log:   "W0522 14:31:24.083271  3337 gpu_resources.cc:196] WARNING: device: 0. The installed Paddle is compiled with CUDA 12.0, but CUDA runtime version in your machine is 11.4, which may cause serious incompatible bug. Please recompile or reinstall Paddle with compatible CUDA version.\n",
		cause: "driver_too_old_for_cuda", decided: true,
		notCause: []string{"cuda_version_mismatch_tf_build"},
	},
	{
		name:     "paddle_compiled_cuda_above_driver_cuda_same_major",
		log:      "W0522 14:31:24.083271  3337 gpu_resources.cc:196] WARNING: device: 0. The installed Paddle is compiled with CUDA 11.8, but CUDA runtime version in your machine is 11.6, which may cause serious incompatible bug. Please recompile or reinstall Paddle with compatible CUDA version.\n",
		notCause: []string{"cuda_version_mismatch_tf_build", "driver_too_old_for_cuda"},
	},
	{
		// cuDNN's twin keeps its reading.
		name:  "paddle_compiled_cudnn_above_installed",
		log:   "W0608 17:24:55.806937 14489 device_context.h:360] WARNING: device: 0. The installed Paddle is compiled with CUDNN 7.6, but CUDNN version in your machine is 7.4, which may cause serious incompatible bug. Please recompile or reinstall Paddle with compatible CUDNN version.\n",
		cause: "cudnn_version_mismatch", decided: true,
	},
	// (a) no usable device: a symptom several causes share.
	{
		name:  "xgboost_no_visible_gpu",
		log:   "WARNING: /workspace/src/context.cc:55: No visible GPU is found, setting device to CPU.\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "xmrig_cuda_disabled_no_devices",
		log:   " * CUDA         disabled (no devices)\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "opencv_dnn_unable_to_use_cuda_backend",
		log:   "[ WARN:0@0.123] global net_impl.cpp:178 setUpNet unable to use CUDA backend; switching to CPU\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "pyopencl_platform_not_found",
		log:   "pyopencl._cl.LogicError: clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR\n",
		cause: "driver_missing", decided: false,
	},
	{
		name:  "opencl_error_number_1001",
		log:   "OpenCL error -1001 at clGetPlatformIDs\n",
		cause: "driver_missing", decided: false,
	},
	{
		name:  "hashcat_no_runtime_installation_found",
		log:   "ATTENTION! No OpenCL, Metal, HIP or CUDA installation found.\n\nYou are probably missing the CUDA, HIP or OpenCL runtime installation.\n",
		cause: "driver_missing", decided: false,
	},
	{
		name:  "ethminer_no_usable_mining_devices",
		log:   "Error: No usable mining devices found\n",
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	// (e) ONNX Runtime's C API and its bindings on a CPU build.
	{
		name:  "onnxruntime_csharp_cuda_provider_not_enabled",
		log:   "Unhandled exception. Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:Fail] CUDA execution provider is not enabled in this build.\n   at Microsoft.ML.OnnxRuntime.NativeApiStatus.VerifySuccess(IntPtr nativeStatus)\n",
		cause: "framework_cpu_only_build", decided: true,
	},
	{
		name:  "onnxruntime_java_tensorrt_provider_not_enabled",
		log:   "ai.onnxruntime.OrtException: Error code - ORT_FAIL - message: TensorRT execution provider is not enabled in this build.\n",
		cause: "framework_cpu_only_build", decided: true,
	},
	{
		name:  "onnxruntime_csharp_cpu_package_has_no_cuda_entry_point",
		log:   "System.EntryPointNotFoundException: Unable to find an entry point named 'OrtSessionOptionsAppendExecutionProvider_CUDA' in DLL 'onnxruntime'.\n   at Microsoft.ML.OnnxRuntime.NativeMethods.OrtSessionOptionsAppendExecutionProvider_CUDA(IntPtr options, Int32 device_id)\n",
		cause: "framework_cpu_only_build", decided: true,
	},
	// (f) which library does not load: ONNX Runtime names it on Windows.
	{
		name:  "onnxruntime_provider_depends_on_missing_cudnn",
		log:   "Error loading \"C:\\Python311\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll\" which depends on \"cudnn64_9.dll\" which is missing. (Error 126: The specified module could not be found.)\n",
		cause: "libcudnn_missing", decided: true,
	},
}

func TestMatrix9(t *testing.T) {
	for _, c := range matrix9Cases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
