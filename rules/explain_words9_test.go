package rules

import "testing"

// words9Cases: facts an application states in its own words (its check
// macro's number, its own driver or device check, a split error name),
// each written from the application's source and NVIDIA's enums (the
// signatures' sources), never from one log. A line several causes share
// stays "most likely" (decided false).
var words9Cases = []judgmentCase{
	// A CUDA error number in an application's own format: 804 and 222
	// mean the same in the driver and runtime enums of every release.
	{
		name:  "geryon_cuda_driver_error_804_is_driver_too_old",
		log:   "Cuda driver error 804 in call at file '/opt/lammps/lib/gpu/geryon/nvd_device.h' in line 333.\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "cu_call_returned_222_is_driver_too_old",
		log:   "cuModuleLoadDataEx returned 222\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "cuda_call_error_803_is_a_driver_library_mismatch",
		log:   "cuCtxCreate failed: error 803\n",
		cause: "driver_library_mismatch", decided: true,
	},
	// The runtime's 35 as Paddle 1.x words it: undecided (the runtime says
	// it where no driver is loaded too), decided where the driver shows.
	{
		name:  "paddle_device_count_error_code_35_undecided",
		log:   "Error: cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 35, Please see detail in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html at (/paddle/paddle/fluid/platform/gpu_info.cc:67)\n",
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "paddle_device_count_error_code_35_with_the_driver_shown",
		log: `| NVIDIA-SMI 396.37                 Driver Version: 396.37                    |
Error: cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 35, Please see detail in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
	// ... and no driver at all where the paste shows the user-space driver
	// absent (explain.runtime35_without_driver reads this format too).
	{
		name: "paddle_device_count_error_code_35_without_nvidia_smi",
		log: `$ nvidia-smi
bash: nvidia-smi: command not found
Error: cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 35, Please see detail in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
`,
		cause: "driver_missing", decided: false, notCause: []string{"driver_too_old_for_cuda"},
	},
	// Numbers that are something else, or changed meaning between
	// releases (36: cudaErrorSetOnActiveProcess before CUDA 10.1), and
	// longer numbers that merely start with a known one.
	{
		name:     "cuda_driver_error_36_is_not_read",
		log:      "Cuda driver error 36 in call at file 'x.h' in line 10.\n",
		cause:    "",
		notCause: []string{"driver_too_old_for_cuda"},
	},
	{
		name:     "error_code_350_is_not_35",
		log:      "Error: cudaGetDeviceCount failed, error code : 350\n",
		notCause: []string{"driver_too_old_for_cuda"},
	},
	{
		name:     "cuda_driver_error_8040_is_not_804",
		log:      "Cuda driver error 8040 in call at file 'x.h' in line 10.\n",
		notCause: []string{"driver_too_old_for_cuda"},
	},
	{
		name:     "a_cudnn_status_35_is_not_the_runtime",
		log:      "cudnnCreate failed: status 35\n",
		notCause: []string{"driver_too_old_for_cuda"},
	},
	// A number that is a percentage or a process's exit code is not a
	// CUDA error.
	{
		name: "cuda_call_then_a_percentage_is_nothing",
		log:  "cudaMemcpy throughput result 804% of baseline\n",
	},
	{
		name: "cuda_call_then_an_exit_code_is_nothing",
		log:  "cudaSetDevice test finished, process exit code 35\n",
	},
	// PTX JIT failures: the driver could not compile the PTX it got, most
	// often PTX newer than the driver (a bundled NVRTC). Undecided, however
	// the name is spaced; TensorFlow's prebuilt kernel_gen kernels read as
	// the GPU the package was not built for.
	{
		name:  "split_invalid_ptx_name_from_nvrtc_is_driver_too_old",
		log:   "Cuda driver api error CUDA_ERROR_INVALID _PTX CODE 218, FILE src/luxrays/utils/cuda.cpp, line 190: a ptx jit compilation failed\n",
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "numba_linker_invalid_ptx_is_driver_too_old",
		log:   "numba.cuda.cudadrv.driver.LinkerError: [218] Call to cuLinkAddData results in CUDA_ERROR_INVALID_PTX\n",
		cause: "driver_too_old_for_cuda", decided: false,
	},
	{
		name:  "tf_kernel_gen_invalid_ptx_is_the_gpu_undecided",
		log:   "W tensorflow/compiler/mlir/tools/kernel_gen/tf_gpu_runtime_wrappers.cc:40] 'cuModuleLoadData(&module, data)' failed with 'CUDA_ERROR_INVALID_PTX'\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	// Omniverse RTX's driver check: a range from 0 is its minimum.
	{
		name: "omniverse_range_from_zero_is_below_the_minimum",
		log: `[Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has known issues.
Installed driver: 535.18
The unsupported driver range: [0.0, 535.129)
[Error] [carb.scenerenderer-rtx.plugin] rtx driver verification failed.
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name: "omniverse_known_issue_range_is_undecided",
		log: `[Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has known issues.
Installed driver: 545.23
The unsupported driver range: [545.0, 545.29)
`,
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name:  "omniverse_verification_line_alone_is_undecided",
		log:   "[Error] [carb.scenerenderer-rtx.plugin] rtx driver verification failed.\n",
		cause: "driver_too_old_for_cuda", decided: false,
	},
	// nvidia-docker 1.0's first releases: image first, driver second.
	{
		name:  "nvidia_docker1_unlabelled_versions_image_then_driver",
		log:   "nvidia-docker | 2016/04/09 00:07:59 Error: unsupported CUDA version: 7.5 < 6.5\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	// CTranslate2's compute type check: the GPU's compute capability, or
	// the CPU; undecided, no fix.
	{
		name:  "ctranslate2_float16_is_compute_capability_undecided",
		log:   "ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 computation.\n",
		cause: "unsupported_compute_capability", decided: false,
		detail: "compute_type='float32'",
	},
	// ... decided where the paste names a GPU older than Volta (no FP16
	// tensor cores); int8 (6.1+) is not decided by such a name.
	{
		name: "ctranslate2_float16_with_a_pascal_gpu_shown_is_decided",
		log: `|   0  NVIDIA GeForce GTX 1070     Off  | 00000000:01:00.0  On |                  N/A |
ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 computation.
`,
		cause: "unsupported_compute_capability", decided: true,
	},
	{
		name: "ctranslate2_float16_with_a_turing_gpu_shown_stays_undecided",
		log: `|   0  NVIDIA GeForce RTX 2080     Off  | 00000000:01:00.0  On |                  N/A |
ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 computation.
`,
		cause: "unsupported_compute_capability", decided: false,
	},
	{
		name: "ctranslate2_int8_with_a_gtx_1070_stays_undecided",
		log: `GeForce GTX 1070
ValueError: Requested int8 compute type, but the target device or backend do not support efficient int8 computation.
`,
		cause: "unsupported_compute_capability", decided: false,
	},
	{
		name:  "ctranslate2_int8_float16",
		log:   "Requested int8_float16 compute type, but the target device or backend do not support efficient int8_float16 computation.\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	{
		name:     "ctranslate2_fallback_notice_is_not_a_failure",
		log:      "[ctranslate2] [warning] The compute type inferred from the saved model is float16, but the target device or backend do not support efficient float16 computation. The model weights have been automatically converted to use the float32 compute type instead.\n",
		notCause: []string{"unsupported_compute_capability"},
	},
	{
		name: "ctranslate2_float16_on_apple_silicon_is_no_nvidia_gpu",
		log: `Python 3.11.6 (main, Oct  2 2023) [Clang 15.0.0 ] on darwin
macOS-14.1-arm64-arm-64bit
ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 computation.
`,
		cause: "no_nvidia_gpu", decided: false,
	},
	// CatBoost's GPU trainer is registered only when compiled in.
	{
		name:  "catboost_cannot_load_gpu_learning_library",
		log:   "CatboostError: catboost/libs/train_lib/train_model.cpp:800: Can't load GPU learning library. Module was not compiled or CUDA version/driver  is incompatible with package\n",
		cause: "framework_cpu_only_build", decided: false, noFix: []string{"framework-gpu-build"},
	},
	// Applications saying they run on the CPU: a broad, undecided reading
	// that yields to anything specific.
	{
		name:  "app_using_device_cpu",
		log:   "Using device: cpu\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name:  "invokeai_using_device_type_cpu",
		log:   ">> Using device_type cpu\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name:  "assert_cuda_must_be_available",
		log:   "AssertionError: CUDA must be available in order to use Deep Daze\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name:  "no_compatible_gpu_found_using_the_cpu",
		log:   "WARNING: No compatible GPU found. Using the CPU, but this will be very slow!\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name:  "cuda_not_available_falling_back_to_cpu",
		log:   "CUDA is not available, falling back to CPU.\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name: "using_device_cuda_is_nothing",
		log:  "Using device: cuda\n",
	},
	{
		name: "using_device_cpu_for_one_step_is_nothing",
		log:  "Using device: cpu for the tokenizer\n",
	},
	{
		name: "using_device_mps_is_nothing",
		log:  "Using device: mps\n",
	},
	{
		name: "a_specific_failure_outranks_using_cpu",
		log: `W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory
Using device: cpu
`,
		cause: "libcudart_missing", decided: true,
	},
	// More formats of the same numbers: 'failed: N', a bare 'CUDA error'
	// for the codes whose meaning never changed.
	{
		name:  "cuinit_failed_804",
		log:   "cuInit(0) failed: 804\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "bare_cuda_error_804",
		log:   "CUDA error 804 at ggml-cuda.cu:300\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "cycles_invalid_ptx_in_call",
		log:   "CUDA error: Invalid ptx in cuModuleLoadDataEx(&cuModule, ptx.c_str(), 0, NULL, NULL)\n",
		cause: "driver_too_old_for_cuda", decided: false,
	},
	// OptiX ships with the driver: an SDK newer than the driver's OptiX.
	{
		name:  "cycles_optix_abi_version_unsupported",
		log:   "OptiX initialization failed because the installed driver does not support ABI version 87\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "optix_error_code_7801",
		log:   "OptiX initialization failed with error code 7801\n",
		cause: "driver_too_old_for_cuda", decided: true,
	},
	{
		name:  "optix_entry_symbol_not_found_undecided",
		log:   "OPTIX_ERROR_ENTRY_SYMBOL_NOT_FOUND: optixInit\n",
		cause: "driver_too_old_for_cuda", decided: false,
	},
	{
		name: "a_number_near_optix_is_not_an_error",
		log:  "Saved 7801 images to disk with optix denoiser, code 7801\n",
	},
	// xFormers' refusal for the GPU's capability, too old or too new:
	// undecided (another operator may be refused for another reason).
	{
		name:  "xformers_requires_capability_too_old",
		log:   "    requires device with capability >= (8, 0) but your GPU has capability (7, 5) (too old)\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	{
		name:  "xformers_requires_capability_too_new",
		log:   "`fa3F@0.0.0` is not supported because: requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too new)\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	// ... unless the same list says xFormers has no CUDA kernels at all:
	// then no operator can run, whatever the GPU.
	{
		name: "xformers_without_cuda_support_outranks_the_capability_line",
		log: `fa2F@2.5.7-pt is not supported because:
    requires device with capability > (8, 0) but your GPU has capability (7, 0) (too old)
cutlassF-pt is not supported because:
    xFormers wasn't build with CUDA support
`,
		cause: "cuda_version_mismatch_tf_build", decided: false, notCause: []string{"unsupported_compute_capability"},
	},
	{
		name:  "xformers_without_cuda_support_alone",
		log:   "    xFormers wasn't build with CUDA support\n",
		cause: "cuda_version_mismatch_tf_build", decided: false,
	},
	{
		name:  "cuda_is_required_but_not_available",
		log:   "RuntimeError: CUDA is required but not available\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	// Triton's FP8 types need native FP8 (compute capability 8.9+);
	// bfloat16 needs 8.0+: both undecided (the line names no GPU).
	{
		name:  "triton_fp8e4nv_not_supported_in_this_architecture",
		log:   "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	{
		name:  "app_gpu_does_not_support_bfloat16",
		log:   "ValueError: Your GPU does not support bfloat16, use --fp16 instead\n",
		cause: "unsupported_compute_capability", decided: false,
	},
	{
		name: "bf16_support_claimed_is_nothing",
		log:  "This GPU supports bfloat16\n",
	},
	{
		name:  "using_torch_device_cpu",
		log:   "Using torch device: CPU\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	{
		name:  "pytorch_installation_without_cuda_support",
		log:   "Your PyTorch installation does not have CUDA support\n",
		cause: "framework_cpu_only_build", decided: false,
	},
	// Builds without the GPU part, in two more applications' words.
	{
		name:  "lightgbm_cuda_tree_learner_not_enabled",
		log:   "[LightGBM] [Fatal] CUDA Tree Learner was not enabled in this build. Please recompile with CMake option -DUSE_CUDA=1\n",
		cause: "framework_cpu_only_build", decided: true, noFix: []string{"framework-gpu-build"},
	},
	{
		name:  "ffmpeg_unknown_encoder_nvenc",
		log:   "Unknown encoder 'h264_nvenc'\n",
		cause: "framework_cpu_only_build", decided: true, noFix: []string{"framework-gpu-build"},
	},
	// Libraries that are none of the frameworks get no PyTorch/JAX/ONNX
	// Runtime reinstall for their own CPU-only build.
	{
		name:  "lightgbm_gpu_learner_gets_no_pytorch_reinstall",
		log:   "[LightGBM] [Fatal] GPU Tree Learner was not enabled in this build. Please recompile with CMake option -DUSE_GPU=1\n",
		cause: "framework_cpu_only_build", decided: true, noFix: []string{"framework-gpu-build"},
	},
	{
		name:  "xgboost_without_gpu_gets_no_pytorch_reinstall",
		log:   "xgboost.core.XGBoostError: XGBoost version not compiled with GPU support.\n",
		cause: "framework_cpu_only_build", decided: true, noFix: []string{"framework-gpu-build"},
	},
	{
		name:  "faiss_cpu_gets_no_pytorch_reinstall",
		log:   "AttributeError: module 'faiss' has no attribute 'StandardGpuResources'\n",
		cause: "framework_cpu_only_build", decided: true, noFix: []string{"framework-gpu-build"},
	},
	{
		name: "ffmpeg_unknown_encoder_other_codec_is_nothing",
		log:  "Unknown encoder 'libfdk_aac'\n",
	},
	// vLLM compares the quantization method's minimum with the GPU itself.
	{
		name:  "vllm_quantization_method_below_minimum_capability",
		log:   "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.\n",
		cause: "unsupported_compute_capability", decided: true,
	},
	// The nvidia-docker wrapper missing, as zsh and cmd.exe word it (bash's
	// wording and nerdctl's missing nvidia-container-cli: calib9's
	// toolkitMissingCases).
	{
		name:  "zsh_nvidia_docker_command_not_found",
		log:   "zsh: command not found: nvidia-docker\n",
		cause: "container_runtime_no_gpu", decided: true,
	},
	{
		name:  "cmd_nvidia_docker_not_recognized",
		log:   "'nvidia-docker' is not recognized as an internal or external command,\noperable program or batch file.\n",
		cause: "container_runtime_no_gpu", decided: true,
	},
}

func TestWords9(t *testing.T) {
	for _, c := range words9Cases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}
