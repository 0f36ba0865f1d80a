package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
)

// TestBenignNoticeFamilies: each harmless-notice family of
// signatures/benign_notices.json, in the wordings its sources print, is
// read as only harmless messages when nothing else is in the paste.
func TestBenignNoticeFamilies(t *testing.T) {
	for _, log := range []string{
		// Theano, old CUDA backend (with and without the CNMeM/cuDNN tail).
		"Using gpu device 0: GeForce GTX 960 (CNMeM is disabled, cuDNN 5005)\n",
		"Using gpu device 1: Tesla K80\n",
		// Theano gpuarray backend.
		"Mapped name None to device cuda0: GeForce GTX 1080 Ti (0000:02:00.0)\nUsing cuDNN version 7005 on context None\n",
		// Caffe's device banner.
		"I0731 17:34:50.123456 20328 caffe.cpp:218] Using GPUs 0, 1\nI0731 17:34:50.223456 20328 caffe.cpp:223] GPU 0: GeForce GTX 1080\n",
		// Caffe's cuRAND generator, glog ERROR level.
		"E0706 15:34:09.373869 10996 common.cpp:126] Cannot create Curand generator. Curand won't be available.\n",
		// TensorRT's workspace hint, bare and with trtexec's prefixes.
		"Some tactics do not have sufficient workspace memory to run. Increasing workspace size may increase performance, please check verbose output.\n",
		"[TensorRT] INFO: Some tactics do not have sufficient workspace memory to run. Increasing workspace size may increase performance, please check verbose output.\n",
		// xFormers without Triton (Windows), a typo of the paste kept.
		"A matching Triton is not available, some optimizations wilt not be enabled.\nError caught was: No module named 'triton'\n",
		// Applications' and DINOv2's xFormers fallback notices.
		"xformers not available, using standard attention\n",
		"/site-packages/dinov2/layers/attention.py:33: UserWarning: xFormers is not available (Attention)\n",
		// kmcuda's peer-access warnings.
		"warning: p2p 2 <-> 1 is impossible\nwarning: failed to enable p2p on gpu #2: peer access is not supported between these two devices\n",
		// One nvidia-smi sensor unread.
		"| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |\n",
		// Performance hints: MXNet's cuDNN autotuning, DDP, XLA's timer.
		"[10:21:23] src/operator/nn/./cudnn/./cudnn_algoreg-inl.h:97: Running performance tests to find the best convolution algorithm, this can take a while... (set the environment variable MXNET_CUDNN_AUTOTUNE_DEFAULT to 0 to disable)\n",
		"UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract.  This is not an error, but may impair performance.\n",
		"W external/local_xla/xla/stream_executor/gpu/gpu_timer.cc:123] Delay kernel timed out: measured time has sub-optimal accuracy.\n",
		// TensorFlow's input pipeline cleaned up at exit.
		"W tensorflow/core/kernels/data/generator_dataset_op.cc:108] Error occurred when finalizing GeneratorDataset iterator: FAILED_PRECONDITION: Python interpreter state is not initialized. The process may be terminated.\n",
		// TensorRT's information and ONNX-parser notices.
		"[TensorRT] INFO: Detected 1 inputs and 1 output network tensors.\n[TRT] [W] onnx2trt_utils.cpp:374: Your ONNX model has been generated with INT64 weights, while TensorRT does not natively support INT64. Attempting to cast down to INT32.\n",
		// NCCL's INFO lines: 'No device found' is InfiniBand's, not a GPU.
		"host:1:1 [0] NCCL INFO NET/IB : No device found.\n",
		// XLA's gemm autotuner keeping cuBLAS's default: not a cuBLAS that
		// does not load (the broad library family read it so).
		"W external/xla/xla/service/gpu/gemm_algorithm_picker.cc:350] Failed to find best cuBLAS algorithm, GEMM performance might be suboptimal: INTERNAL: All algorithms tried for %cublas-gemm.1 failed. Falling back to default algorithm.\n",
		"E external/xla/xla/service/slow_operation_alarm.cc:65] Constant folding an instruction is taking > 1s:\n",
		"WARNING:tensorflow:Detecting that an object or model or tf.train.Checkpoint is being deleted with unrestored values.\n",
		// The profiler without CUPTI: only GPU traces are missing.
		"E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1820] function cupti_interface_->ActivityFlushAll(1)failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n",
		"ERROR:2026-07-31 13:43:58 7535:7535 init.cpp:155] function cbapi->getCuptiStatus() failed with error CUPTI_ERROR_INVALID_DEVICE (2)\nWARNING:2026-07-31 13:43:58 7535:7535 init.cpp:156] CUPTI initialization failed - CUDA profiler activities will be missing\n",
		// ONNX Runtime retrying on CUDA after the TensorRT provider failed.
		"EP Error /onnxruntime_src/onnxruntime/python/onnxruntime_pybind_state.cc:456 TensorRT EP could not be created. when using ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']\nFalling back to ['CUDAExecutionProvider', 'CPUExecutionProvider'] and retrying.\n",
	} {
		r := ExplainText(log)
		if r.RootCause == nil || r.RootCause.Cause != "benign_warning_only" {
			t.Errorf("%q: root %+v, want benign_warning_only", log, r.RootCause)
		}
	}
}

// TestBenignNoticeNotTheFailure: the same texts where they are part of a
// failure are not harmless notices.
func TestBenignNoticeNotTheFailure(t *testing.T) {
	for _, log := range []string{
		// NCCL stops on the peer-access error: not kmcuda's warning.
		"transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'\n",
		// Several unread cells: a GPU in a bad state (smi.err_sensors).
		"| ERR!   52C    P2   ERR! / 250W |   9050MiB / 11178MiB |     ERR!      Default |\n",
		// The same fallback after the CUDA provider's own failure.
		"EP Error D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:121 onnxruntime::CudaCall CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=-1 when using ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']\nFalling back to ['CUDAExecutionProvider', 'CPUExecutionProvider'] and retrying.\n",
		// An EP Error nothing recognises stays open.
		"EP Error /onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:122 something new when using ['TensorrtExecutionProvider', 'CUDAExecutionProvider']\nFalling back to ['CUDAExecutionProvider', 'CPUExecutionProvider'] and retrying.\n",
		// trtexec failing after its INFO lines.
		"[01/11/2024-14:50:34] [I] Finish parsing network model\n[01/11/2024-14:50:34] [E] Network And Config setup failed\n&&&& FAILED TensorRT.trtexec [TensorRT v8503] # trtexec --onnx=./best.onnx\n",
		// NCCL's own warning is not an INFO line.
		"host:1:1 [0] NCCL WARN Cuda failure 'out of memory'\n",
	} {
		r := ExplainText(log)
		if r.RootCause != nil && r.RootCause.Cause == "benign_warning_only" {
			t.Errorf("%q: read as only harmless messages", log)
		}
	}
}

// TestBenignThenFailure: a harmless notice stops being the answer when
// the paste shows a failure after it that no signature explains. A crash
// or an error of the GPU stack keeps the answer open (no root cause, the
// failure quoted first); the program's own error leaves the GPU messages
// harmless and says where the error is.
func TestBenignThenFailure(t *testing.T) {
	curand := "E0731 17:34:52.653252 20328 common.cpp:110] Cannot create Curand generator. Curand won't be available.\n"
	banner := "I0731 17:34:50.123456 20328 caffe.cpp:218] Using GPUs 0\n"
	hint := "[09/20/2025-06:15:06] [TRT] [I] Some tactics do not have sufficient workspace memory to run. Increasing workspace size may increase performance, please check verbose output.\n"
	triton := "A matching Triton is not available, some optimizations will not be enabled.\nError caught was: No module named 'triton'\n"
	for _, c := range []struct {
		name, log string
		open      bool // no root cause, the failure quoted
		own       int  // benign, the program's own error at this line
	}{
		{"abort after curand", banner + curand + "./train.sh: line 1: 20354 Aborted                 (core dumped) ../../build/tools/caffe train\n", true, 0},
		{"cuBLAS handle next to curand", banner + "E0731 17:34:52.597481 20328 common.cpp:103] Cannot create Cublas handle. Cublas won't be available.\n" + curand, true, 0},
		{"NCCL WARN after NCCL INFO", "host:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nhost:1:9 [0] NCCL WARN Call to ibv_reg_mr failed\n", true, 0},
		{"PyTorch C++ error after DDP hint", "[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass.\n[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out.\n", true, 0},
		{"Theano's own ERROR line after its banner", "Using gpu device 0: GeForce GTX 960 (CNMeM is disabled, cuDNN 5005)\nERROR (theano.sandbox.cuda): CUDA is installed, but device gpu is not available\n", true, 0},
		{"segfault after banner", banner + "Segmentation fault (core dumped)\n", true, 0},
		{"glog check after curand", curand + "F0731 17:34:53.000000 20328 syncedmem.cpp:71] Check failed: error == cudaSuccess (30 vs. 0)  unknown error\n", true, 0},
		{"trt build error after hint", hint + "[09/20/2025-06:15:07] [TRT] [E] 10: [optimizer.cpp::computeCosts::1855] Error Code 10: Internal Error (Could not find any implementation for node conv1.)\n", true, 0},
		{"cuda exception after triton", triton + "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    main()\nRuntimeError: CUDA error: misaligned address\n", true, 0},
		{"exit by signal after hint", hint + "Process finished with exit code 134 (interrupted by signal 6: SIGABRT)\n", true, 0},
		{"own ValueError after triton", triton + "Traceback (most recent call last):\n  File \"train_network.py\", line 12, in <module>\n    main(args)\nValueError: resolution must be divisible by 64\n", false, 6},
		{"own SyntaxError after banner", "Using gpu device 0: GeForce GTX 960 (CNMeM is disabled, cuDNN 5005)\n  File \"<string>\", line 1\nSyntaxError: invalid syntax\n", false, 3},
		// The notice's own caught import failure, printed below it.
		{"notice prints its import traceback", "Cannot import xformers\nTraceback (most recent call last):\n  File \"modules/sd_hijack_optimizations.py\", line 18, in <module>\n    import xformers.ops\nModuleNotFoundError: No module named 'xformers.ops'\n", false, 0},
	} {
		r := ExplainText(c.log)
		switch {
		case c.open:
			// A signature may know the failure itself (then it is the
			// answer); what must not happen is "only harmless messages".
			if r.RootCause != nil {
				if r.RootCause.Cause == "benign_warning_only" {
					t.Errorf("%s: read as only harmless messages", c.name)
				}
				continue
			}
			f := findingByID(r, "explain.unexplained_failure")
			if f == nil {
				t.Errorf("%s: no explain.unexplained_failure", c.name)
				continue
			}
			if lines, _ := f.Evidence["lines"].([]lineRef); len(lines) == 0 || !f.Skipped {
				t.Errorf("%s: %v, want the failure quoted, not judged", c.name, lines)
			}
		default:
			if r.RootCause == nil || r.RootCause.Cause != "benign_warning_only" {
				t.Errorf("%s: root %+v, want benign_warning_only", c.name, r.RootCause)
				continue
			}
			var title string
			for _, f := range r.Findings {
				if f.ID == "explain.benign_only" {
					title = f.Title
				}
			}
			mentions := strings.Contains(title, "the error at line")
			if mentions != (c.own > 0) || (c.own > 0 && !strings.Contains(title, fmt.Sprintf("line %d ", c.own))) {
				t.Errorf("%s: title %q, want the program's own error at line %d", c.name, title, c.own)
			}
		}
	}
}

// TestBenignAsksForTheFailingOutput: a paste of harmless notices only
// names them, and asks first for the failing program's own output.
func TestBenignAsksForTheFailingOutput(t *testing.T) {
	r := ExplainText("Using gpu device 0: Tesla K80\nSome tactics do not have sufficient workspace memory to run. Increasing workspace size may increase performance, please check verbose output.\n")
	for _, f := range r.Findings {
		if f.ID != "explain.benign_only" {
			continue
		}
		ask, _ := f.Evidence["ask_for"].([]string)
		if len(ask) == 0 || ask[0] != benignFailingOutput {
			t.Errorf("ask_for %q: want the failing output first", ask)
		}
		if !strings.Contains(f.Detail, "start-up banner") || !strings.Contains(f.Detail, "TensorRT") || strings.Contains(f.Detail, "oneDNN") {
			t.Errorf("detail %q: want the notices seen, not a fixed list", f.Detail)
		}
		return
	}
	t.Errorf("no benign finding: %+v", r.RootCause)
}

// TestXformersWarningSurvived: xFormers' built-for-another-PyTorch warning
// is harmless where the paste shows the GPU in use after it and nothing
// failing; a failure, a bare warning, GPU use only before it and a
// CPU-only PyTorch leave it a finding.
func TestXformersWarningSurvived(t *testing.T) {
	warn := "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.4.0+cu121 with CUDA 1201 (you have 2.3.1+cu121)\n    Python  3.10.14 (you have 3.10.12)\n"
	cpu := "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)\n"
	used := "Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync\n"
	for _, c := range []struct {
		name, log, want string
	}{
		{"GPU used after", warn + used, "benign_warning_only"},
		{"GPU used after, then xFormers op fails", warn + used + "Traceback (most recent call last):\n  File \"sample.py\", line 9, in <module>\n    out = xops.memory_efficient_attention(q, k, v)\nNotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n", "cuda_version_mismatch_tf_build"},
		{"bare warning", warn, "cuda_version_mismatch_tf_build"},
		{"GPU used only before", used + warn, "cuda_version_mismatch_tf_build"},
		{"CPU-only PyTorch", cpu + used, "framework_cpu_only_build"},
	} {
		r := ExplainText(c.log)
		got := "none"
		if r.RootCause != nil {
			got = r.RootCause.Cause
		}
		if got != c.want {
			t.Errorf("%s: root %s, want %s", c.name, got, c.want)
		}
	}
}

// TestNoProblemSeenButFailing: a paste whose recognised output shows no
// problem (a version, a device list, the GPU in use) but that fails where
// nothing recognised explains it does not say "no problem": no root
// cause, the failure quoted first.
func TestNoProblemSeenButFailing(t *testing.T) {
	for _, log := range []string{
		"torch.cuda.is_available(): True\nTraceback (most recent call last):\n  File \"train.py\", line 4, in <module>\n    model(x)\nRuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
		"Python 3.10.12\n$ python app.py\nAttributeError: /opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef\n",
	} {
		r := ExplainText(log)
		if r.RootCause != nil {
			t.Errorf("%q: root %s, want none", log, r.RootCause.Cause)
			continue
		}
		f := findingByID(r, "explain.unexplained_failure")
		if f == nil {
			t.Errorf("%q: no explain.unexplained_failure", log)
			continue
		}
		if lines, _ := f.Evidence["lines"].([]lineRef); len(lines) == 0 || !strings.HasPrefix(f.Title, "Line ") {
			t.Errorf("%q: %q %v, want the failure quoted", log, f.Title, lines)
		}
		for _, g := range r.Findings {
			if g.ID == "explain.no_problem_seen" {
				t.Errorf("%q: still says no problem", log)
			}
		}
	}
}

func findingByID(r *Report, id string) *checks.Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestProgramErrorOrOpen: beside harmless notices, an error that names
// nothing of the GPU stack is the program's own; a crash, a bare non-zero
// exit or an error naming the GPU stack keeps the answer open.
func TestProgramErrorOrOpen(t *testing.T) {
	notice := "Using gpu device 0: Tesla K80\n"
	for _, c := range []struct {
		fail string
		own  bool
	}{
		{"FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'\n", true},
		{"NotImplementedError: this layer is not implemented\n", true},
		{"MyToolError: the option --foo is not valid\n", true},
		{"Process finished with exit code 1\n", false},
		{"error: process exited with status 2\n", false},
		{"RuntimeError: CUDA error: misaligned address\n", false},
		{"Bus error (core dumped)\n", false},
	} {
		r := ExplainText(notice + c.fail)
		benign := r.RootCause != nil && r.RootCause.Cause == "benign_warning_only"
		if benign != c.own {
			t.Errorf("%q: benign %v, want %v", c.fail, benign, c.own)
		}
	}
}

// TestBenignAsksTheFrameworksOwnQuery: a paste of PyTorch's harmless
// notices is asked for PyTorch's device query, not TensorFlow's;
// TensorFlow's notices keep TensorFlow's.
func TestBenignAsksTheFrameworksOwnQuery(t *testing.T) {
	for _, c := range []struct{ log, want, not string }{
		{"/usr/lib/python3/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current system is 4, which is smaller than what this DataLoader is going to create.\n", "import torch", "tensorflow as tf"},
		{"E0000 00:00:1736841518.537290 68237 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n", "tensorflow as tf", "import torch"},
	} {
		f := findingByID(ExplainText(c.log), "explain.benign_only")
		if f == nil {
			t.Errorf("%.40q: no benign finding", c.log)
			continue
		}
		ask := strings.Join(f.Evidence["ask_for"].([]string), " ; ")
		if !strings.Contains(ask, c.want) || strings.Contains(ask, c.not) {
			t.Errorf("%.40q: asks %q, want %q and not %q", c.log, ask, c.want, c.not)
		}
	}
}

// TestWrappedPieceQuotedShort: a failure-looking piece of a wrapped
// message a signature recognised is explained by it, also when the
// piece is longer than a quoted line (quote cuts it and adds "…").
func TestWrappedPieceQuotedShort(t *testing.T) {
	piece := "ERROR: " + strings.Repeat("x", 400)
	joined := "W tensorflow/core/kernels/data/generator_dataset_op.cc:103] Error occurred when finalizing GeneratorDataset iterator: " + piece
	f := quote(hit{line: 2, text: piece})
	if !strings.HasSuffix(f.Text, "…") {
		t.Fatalf("quote did not cut %d bytes", len(piece))
	}
	if !wrappedPieceOfKnown(f, map[int][]string{1: {joined}}) {
		t.Errorf("a cut quote of the piece is not found in the recognised message it belongs to")
	}
}
