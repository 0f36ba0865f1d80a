package rules

import "testing"

// review9bCases are the second ninth-session reviewer's probes
// (/work/coord/review9b/FINDINGS.md). Each case failed before its fix.
var review9bCases = []judgmentCase{
	// R9B-2: a README or FAQ quoted in the paste ('If you see CUDA error
	// 804, ...') states no fact about this machine: no decided driver
	// finding, no install-driver fix.
	{
		name: "readme_if_you_see_cuda_error_804_is_no_fact",
		log: `## Troubleshooting
* If you see ` + "`CUDA error 804`" + ` when the container starts, read docs/compat.md first.
`,
		cause: "", noFix: []string{"install-driver"}, notFinding: []string{"cuda.app_error_number"},
	},
	// The program's own report of the same number is still read.
	{
		name: "app_cuda_error_804_still_read",
		log: `Cuda driver error 804 in call at file '/build/lib/gpu/geryon/nvd_device.h' in line 312.
`,
		cause: "driver_too_old_for_cuda", decided: true,
	},
	// R9B-3 (half): a program's 'Using device: cpu' beside PyTorch's own
	// collect_env saying CUDA is available is no CPU-only build: the paste
	// shows the GPU usable, which contradicts the broad family (the role
	// contradicted_by_gpu_use, as the other broad 'cannot work' families).
	{
		name: "using_device_cpu_beside_cuda_available_true",
		log: `PyTorch version: 2.1.2+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
Is CUDA available: True
CUDA runtime version: 12.1.105
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3060
Using device: cpu
`,
		notFinding: []string{"broad.app_running_on_cpu"},
	},
}

// R9B-1: a paste whose recognised lines are harmless notices and whose
// failure no signature explains reads as "the program's own error" only
// where the failure names nothing of the GPU stack. Frameworks word GPU
// faults without the words CUDA, GPU or device: cuDNN as 'the dnn
// implementation' / PyTorch's cuDNN v8 API 'unable to find an engine',
// StreamExecutor's Then* calls, a CUBIN, and TensorFlow's InternalError
// (raised by its runtime, never by a program's argument checks). Those
// keep the answer open.
var review9bBenignCases = []struct {
	name, failure string
	open          bool
}{
	{"tf_dnn_implementation", "tensorflow.python.framework.errors_impl.UnknownError: Fail to find the dnn implementation.", true},
	{"tf1_failed_to_create_session", "tensorflow.python.framework.errors_impl.InternalError: Failed to create session.", true},
	{"torch_cudnn_engine", "RuntimeError: GET was unable to find an engine to execute this computation", true},
	{"tf_in_memory_cubin", "tensorflow.python.framework.errors_impl.InternalError: Failed to load in-memory CUBIN: UNKNOWN ERROR (1)", true},
	{"tf_then_rnn_forward", "tensorflow.python.framework.errors_impl.InternalError: Exception encountered when calling layer 'lstm'. Failed to call ThenRnnForward with model config: [rnn_mode, rnn_input_mode, rnn_direction_mode]: 2, 0, 0", true},
	{"jax_xla_internal", "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call 'xla.gpu.func.launch' failed", true},
	// The program's own errors stay its own.
	{"program_value_error", "ValueError: config file 'cfg.yaml' has no key 'epochs'", false},
	{"tf_invalid_argument_is_the_programs", "tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error: indices[3,1] = 5000 is not in [0, 5000)", false},
	{"jax_invalid_argument_is_the_programs", "jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Argument shapes do not match: f32[3] vs f32[4]", false},
	{"key_error_engine_word", "KeyError: 'engine'", false},
}

func TestReview9Probes_b(t *testing.T) {
	for _, c := range review9bCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
	const notices = `2024-03-01 10:00:00.123456: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.
2024-03-01 10:00:01.123456: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    model.fit(x, y)
`
	for _, c := range review9bBenignCases {
		t.Run(c.name, func(t *testing.T) {
			jc := judgmentCase{name: c.name, log: notices + c.failure + "\n"}
			if c.open {
				jc.notFinding = []string{"explain.benign_only"}
			} else {
				jc.cause = "benign_warning_only"
			}
			checkJudgment(t, jc)
		})
	}
}
