package rules

import "testing"

// review9Cases are the ninth reviewer's probes (session E,
// /work/coord/review9/FINDINGS.md): answers the session's new harmless
// readings, extension and application deciders got wrong on pastes
// written the way the field writes them. Each case failed before its fix.
var review9Cases = []judgmentCase{
	// R9-1: torch.distributed's own report of a worker's non-zero exit
	// ('failed (exitcode: -9)', the ChildFailedError summary's
	// 'exitcode  : 1') is a failure whose cause the paste does not show:
	// it keeps the answer open, not 'the program's own error'.
	{
		name: "torchrun_exitcode_minus_9_is_no_program_error",
		log: `NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>
NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation
NCCL version 2.18.1+cuda12.1
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3
`,
		cause: "", notFinding: []string{"explain.benign_only"},
	},
	{
		name: "torchrun_exitcode_1_is_no_program_error",
		log: `/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py:1054: UserWarning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass.
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4321) of binary: /opt/conda/bin/python
`,
		cause: "", notFinding: []string{"explain.benign_only"},
	},
	// R9-2: an exception raised while the framework itself imports (a
	// frame in tensorflow/__init__.py, the quoted 'import tensorflow')
	// is the framework failing to load, not the program's own error.
	{
		name: "exception_inside_tensorflow_import_stays_open",
		log: `2023-06-01 08:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.
Traceback (most recent call last):
  File "main.py", line 3, in <module>
    import tensorflow as tf
  File "/usr/lib/python3/site-packages/tensorflow/__init__.py", line 37, in <module>
    from tensorflow.python.eager import context
ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 from PyObject
`,
		cause: "", notFinding: []string{"explain.benign_only"},
	},
	// The program's own error after the import stays the program's own.
	{
		name: "program_error_after_the_import_stays_its_own",
		log: `2023-06-01 08:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
Traceback (most recent call last):
  File "main.py", line 9, in <module>
    main(args.config)
  File "main.py", line 5, in main
    cfg = load(path)
ValueError: config file 'cfg.yaml' has no key 'epochs'
`,
		cause: "benign_warning_only",
	},
	// R9-3: a PyTorch extension (flash-attn, xFormers, DeepSpeed...) that
	// cannot load the CUDA runtime is no TensorFlow finding: the
	// traceback's imports and frames name the package, so TensorFlow's
	// 'pip install tensorflow[and-cuda]' is not offered.
	{
		name: "flash_attn_missing_cudart_gets_no_tensorflow_fix",
		log: `Traceback (most recent call last):
  File "infer.py", line 1, in <module>
    import flash_attn
  File "/opt/conda/lib/python3.10/site-packages/flash_attn/__init__.py", line 3, in <module>
    from flash_attn.flash_attn_interface import (
  File "/opt/conda/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 10, in <module>
    import flash_attn_2_cuda as flash_attn_cuda
ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory
`,
		cause: "libcudart_missing", decided: true, noFix: []string{"pip-install-tensorflow"},
	},
	{
		name: "deepspeed_op_missing_cublas_gets_no_tensorflow_fix",
		log: `Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/deepspeed/ops/op_builder/builder.py", line 478, in load
    return importlib.import_module(self.absolute_name())
ImportError: libcublas.so.11: cannot open shared object file: No such file or directory
`,
		cause: "libcublas_missing", decided: true, noFix: []string{"pip-install-tensorflow"},
	},
}

func TestReview9Probes(t *testing.T) {
	for _, c := range review9Cases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// R9-4: the interactive interpreter's banner ('... [Clang 14.0.6 ] on
// darwin') and CPython's macOS extension suffix say the Python runs on
// macOS: PyTorch's macOS builds have no CUDA, so a CPU-only torch there
// is no reason to reinstall torch from a CUDA index (whose first step
// uninstalls it).
var review9MacCases = []judgmentCase{
	{
		name: "python_banner_on_darwin_gets_no_cuda_wheel",
		log: `Python 3.11.5 (main, Sep 11 2023, 08:31:25) [Clang 14.0.6 ] on darwin
Type "help", "copyright", "credits" or "license" for more information.
>>> import torch
>>> torch.zeros(1).cuda()
AssertionError: Torch not compiled with CUDA enabled
`,
		cause: "no_nvidia_gpu", decided: true, noFix: []string{"framework-gpu-build"},
	},
	{
		name: "darwin_extension_suffix_gets_no_cuda_wheel",
		log: `  File "/Users/me/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", line 289, in _lazy_init
    raise AssertionError("Torch not compiled with CUDA enabled")
AssertionError: Torch not compiled with CUDA enabled
ImportError: dlopen(/Users/me/venv/lib/python3.11/site-packages/mmcv/_ext.cpython-311-darwin.so, 0x0002): symbol not found in flat namespace '__ZN2at4cuda20getCurrentCUDAStreamEa'
`,
		cause: "no_nvidia_gpu", decided: true, noFix: []string{"framework-gpu-build"},
	},
	// Linux's banner keeps the CUDA build's fix.
	{
		name: "python_banner_on_linux_keeps_the_cuda_wheel",
		log: `Python 3.11.5 (main, Sep 11 2023, 13:54:46) [GCC 11.2.0] on linux
>>> import torch
>>> torch.zeros(1).cuda()
AssertionError: Torch not compiled with CUDA enabled
`,
		cause: "framework_cpu_only_build", decided: true,
	},
}

func TestReview9MacProbes(t *testing.T) {
	for _, c := range review9MacCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// R9-5: a README or help text quoted in the paste ('If CUDA is not
// available, the script will fall back to CPU') is a conditional, no
// fact about the machine: it does not become a CPU-only build that
// outranks the paste's own failure.
func TestReview9ConditionalProseIsNoFallback(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `README:
  The script picks the GPU automatically. If CUDA is not available, the script will fall back to CPU.
  When no GPU is found it is using the CPU.
$ python run.py
Traceback (most recent call last):
  File "run.py", line 3, in <module>
    from utils import helper
ModuleNotFoundError: No module named 'utils'
`,
		cause: "", notCause: []string{"framework_cpu_only_build"},
	})
	// The program's own statement is still read.
	checkJudgment(t, judgmentCase{
		log:   "CUDA is not available, falling back to CPU\n",
		cause: "framework_cpu_only_build",
	})
}

// R9-6: in a multi-process job (torchrun's '[rank3]:' prefix, NCCL,
// local_rank) the 'other processes' PyTorch lists beside this one, each
// holding about what this one holds, are most likely the job's own ranks
// put on one GPU (no torch.cuda.set_device(local_rank)): 'another process
// holds it, use a free GPU' is not proven.
func TestReview9RanksOnOneGPUAreNoOtherJob(t *testing.T) {
	ranks := `[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 12.75 MiB is free. Process 2201 has 19.70 GiB memory in use. Process 2202 has 19.70 GiB memory in use. Process 2203 has 19.70 GiB memory in use. Including non-PyTorch memory, this process has 19.70 GiB memory in use. Of the allocated memory 18.90 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.
`
	checkJudgment(t, judgmentCase{log: ranks, cause: "gpu_out_of_memory_other_process", decided: false,
		noFix: []string{"use-free-gpu"}, detail: "set_device"})
	two := `$ torchrun --nproc_per_node=2 train.py
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 20.00 MiB is free. Process 5001 has 11.60 GiB memory in use. Including non-PyTorch memory, this process has 11.90 GiB memory in use. Of the allocated memory 11.20 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.
`
	checkJudgment(t, judgmentCase{log: two, cause: "gpu_out_of_memory_other_process", decided: false,
		noFix: []string{"use-free-gpu"}, detail: "set_device"})
	// A single-process run: another process's memory stays proven.
	one := `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 12.75 MiB is free. Process 2201 has 59.10 GiB memory in use. Including non-PyTorch memory, this process has 19.70 GiB memory in use. Of the allocated memory 18.90 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.
`
	checkJudgment(t, judgmentCase{log: one, cause: "gpu_out_of_memory_other_process", decided: true})
	// A multi-process job beside a much bigger other process: proven.
	big := "[rank0]: " + one
	checkJudgment(t, judgmentCase{log: big, cause: "gpu_out_of_memory_other_process", decided: true})
}

// R9-7: PyTorch's 'CUDA initialization: CUDA driver initialization
// failed' warning, then is_available()'s False: the False is its
// consequence (a CPU-only wheel prints no such warning), so it does not
// outrank the warning as a CPU-only build.
func TestReview9CUDAInitWarningOutranksItsFalse(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `>>> torch.cuda.is_available()
/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)
False
`,
		cause: "cuinit_unknown_error",
	})
}

// R9-8: nvcc refusing an architecture while building an extension
// (DeepSpeed's fused_adam, any setup.py build_ext) is the CUDA toolkit's
// age, not TensorFlow's: no 'use another TensorFlow release' fix.
func TestReview9NvccArchIsNoTensorFlowFix(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `  running build_ext
  building 'fused_adam' extension
  /usr/local/cuda/bin/nvcc -I/usr/include/python3.10 -c csrc/fused_adam.cu -o build/fused_adam.o -gencode=arch=compute_90,code=sm_90
  nvcc fatal   : Unsupported gpu architecture 'compute_90'
  error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1
`,
		cause: "unsupported_compute_capability", decided: true, noFix: []string{"older-tensorflow"},
	})
}

// R9-9: an XLA op that fails because ptxas failed ('OP_REQUIRES failed
// at xla_ops.cc:574 : INTERNAL: ptxas exited with non-zero error code
// 65280, output: ') after TensorFlow created its GPU device was
// answered 'No problem in the log: the framework used the GPU'.
func TestReview9XlaPtxasExitIsAFailure(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `2024-06-01 10:00:03.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1928] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 9600 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3080, pci bus id: 0000:01:00.0, compute capability: 8.6
Epoch 1/10
2024-06-01 10:05:10.000000: W tensorflow/core/framework/op_kernel.cc:1839] OP_REQUIRES failed at xla_ops.cc:574 : INTERNAL: ptxas exited with non-zero error code 65280, output: 
`,
		cause: "xla_ptxas_or_libdevice_missing", decided: false,
	})
	// The autotuner's own check falls back to the driver: not this failure.
	checkJudgment(t, judgmentCase{
		log: `2021-12-31 20:28:35.052992: W tensorflow/stream_executor/gpu/redzone_allocator.cc:314] Internal: ptxas exited with non-zero error code 256, output:
Relying on driver to perform ptx compilation.
`,
		cause: "xla_ptxas_or_libdevice_missing", decided: true, notFinding: []string{"xla.ptxas_exited"},
	})
	// Any other op failing is a failure line: beside harmless notices it
	// is at least the program's own error, not 'nothing needs fixing'.
	checkJudgment(t, judgmentCase{
		log: `2024-06-01 10:00:00.000000: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable ` + "`TF_ENABLE_ONEDNN_OPTS=0`" + `.
2024-06-01 10:05:10.000000: W tensorflow/core/framework/op_kernel.cc:1839] OP_REQUIRES failed at strided_slice_op.cc:117 : INVALID_ARGUMENT: slice index 5 of dimension 0 out of bounds.
`,
		cause: "benign_warning_only", detail: "error at line 2",
	})
}

// R9-10: a README or FAQ pasted along quotes messages to explain them
// ('"Failed to initialize NVML: Driver/library version mismatch" means you
// need to reboot'): the machine did not print them, so no signature
// decides on them (it decided a reboot and a TensorFlow reinstall here,
// over the paste's own ModuleNotFoundError).
func TestReview9QuotedMessagesInDocsAreNotPrinted(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `$ cat README.md
Troubleshooting:
- "Could not load dynamic library 'libcudart.so.11.0'" means CUDA 11 is not installed.
- "Failed to initialize NVML: Driver/library version mismatch" usually means you need to reboot.
- If you see "CUDA driver version is insufficient for CUDA runtime version", update the driver.
$ python train.py
Traceback (most recent call last):
  File "train.py", line 1, in <module>
    import yaml
ModuleNotFoundError: No module named 'yaml'
`,
		cause: "", notCause: []string{"driver_library_mismatch", "libcudart_missing", "driver_too_old_for_cuda"},
	})
	// The messages themselves, quoted by the tool that prints them, stay read.
	checkJudgment(t, judgmentCase{
		log:   "2021-01-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n",
		cause: "libcudart_missing", decided: true,
	})
	checkJudgment(t, judgmentCase{
		log:   "Failed to initialize NVML: Driver/library version mismatch\n",
		cause: "driver_library_mismatch", decided: true,
	})
}

// R9-11: the terminal's python answers True, the notebook's kernel False:
// CUDA works on the machine for one interpreter, so the notebook's False
// is not a CPU-only build; the kernel most likely runs another
// environment (undecided).
func TestReview9NotebookFalseBesideTerminalTrue(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `In terminal:
$ python -c "import torch; print(torch.cuda.is_available())"
True
In Jupyter notebook:
In [1]: import torch
        torch.cuda.is_available()
Out[1]: False
`,
		cause: "jupyter_kernel_wrong_env", decided: false,
	})
	// A notebook's own False alone stays the CPU-only reading.
	checkJudgment(t, judgmentCase{
		log: `In [1]: import torch
        torch.cuda.is_available()
Out[1]: False
`,
		cause: "framework_cpu_only_build",
	})
	// The terminal False, the notebook True: nothing to move.
	checkJudgment(t, judgmentCase{
		log: `$ python -c "import torch; print(torch.cuda.is_available())"
False
In [1]: import torch
        torch.cuda.is_available()
Out[1]: True
`,
		cause: "framework_cpu_only_build",
	})
}

// R9-12: cmd.exe's prompt ('C:\>') and its 'is not recognized as an
// internal or external command' are native Windows: nvidia-smi missing
// there gets no Linux driver install (ubuntu-drivers, reboot), and
// TensorFlow's empty GPU list reads as native Windows.
func TestReview9CmdPromptIsWindows(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `C:\> nvidia-smi
'nvidia-smi' is not recognized as an internal or external command,
operable program or batch file.
C:\> python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"
[]
`,
		cause: "driver_missing", decided: false, noFix: []string{"install-driver", "pip-install-tensorflow"},
	})
	checkJudgment(t, judgmentCase{
		log: `D:\work\proj>python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"
[]
`,
		cause: "tf_windows_native_gpu_unsupported", decided: false,
	})
}

// R9-13: under WSL 2 the Windows driver serves Linux; a driver too old
// there is updated on Windows, never with a Linux driver installed inside
// WSL (which breaks it). On native Windows doctor's Linux driver steps
// are not offered either.
func TestReview9NoLinuxDriverInstallOnWSLOrWindows(t *testing.T) {
	win := "windows-driver"
	checkJudgment(t, judgmentCase{
		log: `me@DESKTOP:~$ uname -a
Linux DESKTOP 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux
me@DESKTOP:~$ python -c "import torch; torch.zeros(1).cuda()"
RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.
`,
		cause: "driver_too_old_for_cuda", decided: true, fixes: &win, noFix: []string{"install-driver"},
	})
	checkJudgment(t, judgmentCase{
		log: `PS C:\Users\me> python -c "import torch; torch.zeros(1).cuda()"
RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.
`,
		cause: "driver_too_old_for_cuda", decided: true, noFix: []string{"install-driver"},
	})
	// A Linux paste keeps it.
	inst := "install-driver"
	checkJudgment(t, judgmentCase{
		log:   "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.\n",
		cause: "driver_too_old_for_cuda", decided: true, fixes: &inst,
	})
}

// R9-14: under WSL 2 there are no nvidia kernel modules: NVML's
// 'Driver/library version mismatch' is most likely a Linux driver
// installed inside WSL (not a reboot), and a CUDA initialisation failure
// gets no modprobe of nvidia_uvm nor a Linux reboot.
func TestReview9WSLHasNoKernelModuleFixes(t *testing.T) {
	checkJudgment(t, judgmentCase{
		log: `me@DESKTOP:~$ uname -r
5.15.153.1-microsoft-standard-WSL2
me@DESKTOP:~$ nvidia-smi
Failed to initialize NVML: Driver/library version mismatch
`,
		cause: "wsl_linux_driver_installed_inside_wsl", decided: false, noFix: []string{"reboot"},
	})
	win := "windows-driver"
	checkJudgment(t, judgmentCase{
		log: `me@DESKTOP:~$ uname -r
5.15.153.1-microsoft-standard-WSL2
me@DESKTOP:~$ python -c "import torch; print(torch.cuda.is_available())"
/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)
False
`,
		cause: "cuinit_unknown_error", fixes: &win, noFix: []string{"load-nvidia-uvm", "reboot"},
	})
	// Linux keeps its reboot.
	reboot := "reboot"
	checkJudgment(t, judgmentCase{
		log:   "Failed to initialize NVML: Driver/library version mismatch\n",
		cause: "driver_library_mismatch", decided: true, fixes: &reboot,
	})
}
