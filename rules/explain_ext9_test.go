package rules

import (
	"strings"
	"testing"
)

// Compiled extensions and framework cores that do not import or load, as a
// family (the loader's words, the frameworks' and the extensions' own):
// which line names the import failure, which line decides, and which
// lines stay with the signatures of another cause.
type ext9Case struct {
	name, log string
	cause     string // root cause label ("" for none)
	root      string // root finding ID (signature), "" to skip
	decided   bool
	// notFinding: finding IDs that must not be reported as failing.
	notFinding []string
	// titleLacks: a phrase the root finding's title must not hold.
	titleLacks string
}

var ext9Cases = []ext9Case{
	{
		name:  "torch_typeinfo_symbol_in_libtorch",
		log:   "ImportError: anaconda3/lib/python3.7/site-packages/torch/lib/libtorch.so.1: undefined symbol: _ZTIN2at4TypeE",
		cause: "framework_import_failed", root: "framework.extension_built_for_other_torch",
	},
	{
		name:  "torch_thpp_symbol_in_py2_c_so",
		log:   "ImportError: /home/u/env/lib/python2.7/site-packages/torch/_C.so: undefined symbol: _ZN4thpp10THCSTensorIlEC1EP8THCStateP14THCSLongTensor",
		cause: "framework_import_failed", root: "framework.extension_built_for_other_torch",
	},
	{
		name:  "torch_c_api_symbol_in_extension",
		log:   "ImportError: /opt/proj/lib/roi_align/_ext.cpython-36m-x86_64-linux-gnu.so: undefined symbol: THPVariableClass",
		cause: "framework_import_failed", root: "framework.extension_built_for_other_torch",
	},
	{
		// Lua torch7's TH symbols are not PyTorch's: the family-level
		// reading, with no PyTorch title.
		name:       "lua_rock_symbol_lookup_error",
		log:        "/home/u/torch/install/bin/luajit: symbol lookup error: /home/u/.luarocks/lib/lua/5.1/libcutorch.so: undefined symbol: THCState_getDeviceMode",
		cause:      "framework_import_failed",
		root:       "broad.compiled_module_unloadable",
		notFinding: []string{"framework.extension_built_for_other_torch"},
		titleLacks: "PyTorch",
	},
	{
		name:  "std_symbol_cxx_runtime",
		log:   "ImportError: /x/envs/p3d/lib/python3.8/site-packages/pytorch3d/_C.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZNSt15__exception_ptr13exception_ptr9_M_addrefEv",
		cause: "framework_import_failed", root: "framework.extension_cxx_runtime_mismatch",
		notFinding: []string{"broad.compiled_module_unloadable"},
	},
	{
		name:  "python_c_api_symbol",
		log:   "ImportError: /home/u/proj/lib/box_ops.cpython-36m-x86_64-linux-gnu.so: undefined symbol: PyFPE_jbuf",
		cause: "framework_import_failed", root: "framework.extension_built_for_other_python",
	},
	{
		// The loader's GLIBCXX line for a compiled extension settles it,
		// as it does for the frameworks' own libraries.
		name:    "glibcxx_required_by_extension",
		log:     "ImportError: /home/u/miniconda3/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /home/u/miniconda3/envs/p3d/lib/python3.9/site-packages/pytorch3d/_C.cpython-39-x86_64-linux-gnu.so)",
		cause:   "framework_import_failed",
		root:    "framework.libstdcxx_too_old",
		decided: true,
	},
	{
		name:  "unknown_cxx_symbol_family_level",
		log:   "ImportError: /opt/x/_ops.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN6mylib4initEv",
		cause: "framework_import_failed", root: "broad.compiled_module_unloadable",
	},
	{
		name:  "wrong_elf_class",
		log:   "ImportError: /usr/lib/python3/dist-packages/foo/_foo.so: wrong ELF class: ELFCLASS32",
		cause: "framework_import_failed", root: "broad.compiled_module_unloadable",
	},
	{
		// A CUDA library's versioned symbol keeps its own signature.
		name:       "cuda_versioned_symbol_not_generic",
		log:        "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: cudaGraphInstantiateWithParams_ptsz, version libcudart.so.12",
		cause:      "ld_library_path_pollution",
		root:       "cuda.undefined_symbol",
		notFinding: []string{"broad.compiled_module_unloadable", "framework.extension_built_for_other_torch"},
	},
	{
		// The driver's libcuda (here a stub) is not a compiled module
		// of a framework: the family-level reading leaves it alone.
		name:       "stub_libcuda_symbol_not_generic",
		log:        "AttributeError: /opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef",
		notFinding: []string{"broad.compiled_module_unloadable"},
	},
	{
		// A family-level reading yields to any other finding.
		name: "generic_yields_to_driver",
		log: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n" +
			"ImportError: /opt/x/_ops.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN6mylib4initEv",
		cause:      "kernel_module_not_built",
		notFinding: []string{"broad.compiled_module_unloadable"},
	},
	{
		name:  "paddle_avx_core",
		log:   "Error: Can not import avx core while this file exists: /opt/conda/lib/python3.10/site-packages/paddle/fluid/core_avx.so",
		cause: "framework_import_failed", root: "paddle.core_import_failed",
	},
	{
		name:  "paddle_core_2_5",
		log:   `Error: Can not import paddle core while this file exists: C:\Users\u\venv\Lib\site-packages\paddle\base\libpaddle.pyd`,
		cause: "framework_import_failed", root: "paddle.core_import_failed",
	},
	{
		// The line after it decides: a cuDNN of the build's version is
		// missing.
		name: "paddle_core_then_missing_cudnn",
		log: "Error: Can not import avx core while this file exists: /opt/conda/lib/python3.7/site-packages/paddle/fluid/core_avx.so\n" +
			"ImportError: libcudnn.so.7: cannot open shared object file: No such file or directory",
		cause:   "libcudnn_missing",
		decided: true,
	},
	{
		name:    "paddle_no_avx_cpu",
		log:     "Error: Your machine doesn't support AVX, but the installed PaddlePaddle is avx core, you should reinstall paddlepaddle with no-avx core.",
		cause:   "framework_import_failed",
		root:    "framework.cpu_instructions_missing",
		decided: true,
	},
	{
		name:  "extension_module_not_built",
		log:   "ModuleNotFoundError: No module named 'attn_core_inplace_cuda'",
		cause: "framework_import_failed", root: "framework.extension_not_built",
	},
	{
		name:  "mmcv_ext_missing",
		log:   "ModuleNotFoundError: No module named 'mmcv._ext'",
		cause: "framework_import_failed", root: "framework.extension_not_built",
	},
	{
		name:  "detectron2_cannot_import_c",
		log:   "ImportError: cannot import name '_C' from 'detectron2' (/home/u/detectron2/detectron2/__init__.py)",
		cause: "framework_import_failed", root: "framework.extension_not_built",
	},
	{
		// torch._C keeps its own, decided reading (a shadowing folder).
		name:       "torch_c_keeps_its_signature",
		log:        "ModuleNotFoundError: No module named 'torch._C'",
		cause:      "framework_import_failed",
		root:       "framework.torch_c_extensions_not_loaded",
		decided:    true,
		notFinding: []string{"framework.extension_not_built"},
	},
	{
		// numba-cuda is a package of its own, not a compiled part.
		name:       "numba_cuda_is_a_package",
		log:        "ModuleNotFoundError: No module named 'numba_cuda'",
		notFinding: []string{"framework.extension_not_built"},
	},
	{
		name:       "partially_initialized_is_not_unbuilt",
		log:        "ImportError: cannot import name '_C' from partially initialized module 'cupy_backends.cuda.api'",
		notFinding: []string{"framework.extension_not_built"},
	},
	{
		// torchvision's own words put it on the torch/torchvision pair.
		name:  "torchvision_custom_ops",
		log:   "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible, or if you had errors while compiling torchvision from source.",
		cause: "framework_import_failed", root: "framework.torchvision_ops_unloadable",
	},
	{
		name:  "torchvision_no_cuda_kernel",
		log:   "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if using custom build).",
		cause: "cuda_version_mismatch_tf_build", root: "framework.torchvision_ops_no_cuda_kernel",
	},
	{
		name:  "nvcc_host_compiler_refused",
		log:   "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 13 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check",
		cause: "framework_import_failed", root: "build.nvcc_host_compiler_unsupported",
	},
	{
		// The build's last words yield to the line that says why.
		name: "build_failed_yields_to_cuda_home",
		log: "      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n" +
			"      [end of output]\n  ERROR: Failed building wheel for flash-attn",
		cause:      "libcudart_missing",
		root:       "build.cuda_home_not_set",
		decided:    true,
		notFinding: []string{"broad.extension_build_failed"},
	},
	{
		name: "build_failed_yields_to_arch",
		log: "nvcc fatal   : Unsupported gpu architecture 'compute_86'\n" +
			"error: command '/usr/local/cuda-10.2/bin/nvcc' failed with exit status 1",
		cause:      "unsupported_compute_capability",
		root:       "gpu.toolkit_too_old_for_arch",
		decided:    true,
		notFinding: []string{"broad.extension_build_failed"},
	},
	{
		name: "build_failed_yields_to_cuda_pair",
		log: "RuntimeError: The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (12.1). Please make sure to use the same CUDA versions.\n" +
			"ERROR: Failed building wheel for xformers",
		cause:      "cuda_version_mismatch_tf_build",
		root:       "framework.torch_extension_cuda_mismatch",
		decided:    true,
		notFinding: []string{"broad.extension_build_failed"},
	},
	{
		name:  "build_failed_alone",
		log:   "RuntimeError: Error compiling objects for extension\n  ERROR: Failed building wheel for pytorch3d",
		cause: "framework_import_failed", root: "broad.extension_build_failed",
	},
	{
		// A wheel that compiles no CUDA code is not this family.
		name:       "other_wheel_build_not_extension",
		log:        "  ERROR: Failed building wheel for tokenizers",
		notFinding: []string{"broad.extension_build_failed"},
	},
	{
		name:  "torch_unknown_cuda_arch",
		log:   "ValueError: Unknown CUDA arch (8.9) or GPU not supported",
		cause: "unsupported_compute_capability", root: "build.torch_arch_list_unknown",
	},
	{
		name:  "ninja_missing",
		log:   "RuntimeError: Ninja is required to load C++ extensions",
		cause: "framework_import_failed", root: "build.ninja_missing_for_extension",
	},
	{
		name:  "lua_rock_nil_call",
		log:   "/usr/local/share/lua/5.1/trepl/init.lua:384: /usr/local/share/lua/5.1/cutorch/test.lua:3013: attempt to call a nil value",
		cause: "framework_import_failed", root: "lua.torch_rock_load_failed",
	},
	{
		name:       "lua_user_code_nil_call",
		log:        "/home/u/proj/train.lua:12: attempt to call a nil value",
		notFinding: []string{"lua.torch_rock_load_failed"},
	},
	{
		name:  "tf_custom_op_other_tf",
		log:   "tensorflow.python.framework.errors_impl.NotFoundError: ./zero_out.so: undefined symbol: _ZN10tensorflow8internal21CheckOpMessageBuilder9NewStringEv",
		cause: "framework_import_failed", root: "framework.tf_custom_op_built_for_other_tf",
		notFinding: []string{"broad.compiled_module_unloadable"},
	},
	{
		name:    "openmmlab_version_assert",
		log:     "AssertionError: MMCV==1.6.0 is used but incompatible. Please install mmcv>=1.3.17, <=1.5.0.",
		cause:   "framework_import_failed",
		root:    "framework.openmmlab_version_assert",
		decided: true,
	},
	{
		// The traceback quotes the assert's source: no version there.
		name:       "openmmlab_source_line_alone",
		log:        "    f'MMCV=={mmcv.__version__} is used but incompatible. ' \\",
		notFinding: []string{"framework.openmmlab_version_assert"},
	},
	{
		// torchvision's image extension warning stays harmless, as
		// torchvision says, even when it quotes a torch symbol.
		name:       "torchvision_image_extension_warning",
		log:        "/usr/lib/python3/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: '/usr/lib/python3/dist-packages/torchvision/image.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev'If you don't plan on using image functionality from torchvision.io, you can ignore this warning.",
		cause:      "benign_warning_only",
		notFinding: []string{"framework.extension_built_for_other_torch", "broad.compiled_module_unloadable"},
	},
	{
		name:  "jit_extension_not_built",
		log:   "ImportError: /root/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: cannot open shared object file: No such file or directory",
		cause: "framework_import_failed", root: "framework.extension_not_built",
	},
	{
		name:  "operator_not_registered",
		log:   "RuntimeError: No such operator detectron2::nms_rotated",
		cause: "framework_import_failed", root: "framework.extension_not_built",
	},
	{
		name:  "old_torchvision_no_such_operator",
		log:   "RuntimeError: No such operator torchvision::nms",
		cause: "framework_import_failed", root: "framework.torchvision_ops_unloadable",
		notFinding: []string{"framework.extension_not_built"},
	},
	{
		name:  "mmdet_ops_not_compiled",
		log:   "ImportError: cannot import name 'deform_conv_cuda' from 'mmdet.ops.dcn' (/home/u/mmdetection/mmdet/ops/dcn/__init__.py)",
		cause: "framework_import_failed", root: "framework.extension_not_built",
	},
	{
		// The source's own compile error decides; the build's last
		// words are its consequence.
		name: "thc_header_removed",
		log: "/home/u/AdelaiDet/adet/layers/csrc/ml_nms/ml_nms.cu:4:10: fatal error: THC/THC.h: No such file or directory\n" +
			"error: command '/usr/local/cuda-11.3/bin/nvcc' failed with exit code 1",
		cause:      "framework_import_failed",
		root:       "build.extension_source_for_other_torch",
		decided:    true,
		notFinding: []string{"broad.extension_build_failed"},
	},
	{
		name:    "at_check_undefined",
		log:     "/home/u/maskrcnn_benchmark/csrc/cuda/ROIAlign_cuda.cu(275): error: identifier \"AT_CHECK\" is undefined",
		cause:   "framework_import_failed",
		root:    "build.extension_source_for_other_torch",
		decided: true,
	},
	{
		// THC in a run-time CUDA error's file path is not a build.
		name:       "thc_general_runtime_path",
		log:        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch/work/aten/src/THC/THCGeneral.cpp line=51 error=30 : unknown error",
		cause:      "cuinit_unknown_error",
		notFinding: []string{"build.extension_source_for_other_torch"},
	},
	{
		name:  "no_cxx_compiler",
		log:   "UserWarning: Error checking compiler version for c++: [Errno 2] No such file or directory: 'c++'",
		cause: "framework_import_failed", root: "build.cxx_compiler_not_found",
	},
	{
		// nvcc's registration calls are CUDA runtime symbols too.
		name:       "nvcc_registration_symbol",
		log:        "ImportError: /home/u/proj/lib/nms/_ext.cpython-37m-x86_64-linux-gnu.so: undefined symbol: __cudaPopCallConfiguration",
		cause:      "framework_import_failed",
		root:       "cuda.undefined_runtime_symbol",
		notFinding: []string{"broad.compiled_module_unloadable"},
	},
	{
		// A paste that lost the closing quote still names the arch.
		name: "nvcc_arch_quote_cut",
		log: "nvcc fatal   : Unsupported gpu architecture 'compute_61\n" +
			"error: command '/usr/bin/nvcc' failed with exit status 1",
		cause:      "unsupported_compute_capability",
		root:       "gpu.toolkit_too_old_for_arch",
		decided:    true,
		notFinding: []string{"broad.extension_build_failed"},
	},
	{
		name:  "lua_rock_not_found",
		log:   "/home/u/torch/install/share/lua/5.1/trepl/init.lua:389: module 'cutorch' not found:No LuaRocks module found for cutorch",
		cause: "framework_not_installed", root: "lua.torch_rock_not_installed",
	},
	{
		// MMCV's FAQ: the lite mmcv has no ops (install mmcv-full).
		name:  "mmcv_ops_missing",
		log:   "ModuleNotFoundError: No module named 'mmcv.ops'",
		cause: "framework_import_failed", root: "framework.extension_not_built",
	},
}

func TestExt9CompiledModules(t *testing.T) {
	for _, c := range ext9Cases {
		t.Run(c.name, func(t *testing.T) {
			r := ExplainText(c.log)
			var b strings.Builder
			for _, f := range r.Findings {
				b.WriteString("\n  " + f.ID + " " + string(f.Severity) + " " + f.Cause + ": " + f.Title)
			}
			got, gotID := "", ""
			if r.RootCause != nil {
				got, gotID = r.RootCause.Cause, r.RootCause.ID
			}
			if got != c.cause {
				t.Fatalf("root cause %q, want %q; findings:%s", got, c.cause, b.String())
			}
			if c.root != "" && gotID != c.root {
				t.Errorf("root finding %s, want %s; findings:%s", gotID, c.root, b.String())
			}
			for _, f := range r.Findings {
				if r.RootCause != nil && f.ID == r.RootCause.ID && c.cause != "" {
					if d, _ := f.Evidence[DecidedKey].(bool); d != c.decided {
						t.Errorf("root %s decided=%v, want %v", f.ID, d, c.decided)
					}
					if c.titleLacks != "" && strings.Contains(f.Title, c.titleLacks) {
						t.Errorf("root %s title %q holds %q", f.ID, f.Title, c.titleLacks)
					}
				}
				if !f.Failing() {
					continue
				}
				for _, bad := range c.notFinding {
					if strings.SplitN(f.ID, "#", 2)[0] == bad {
						t.Errorf("finding %s reported; findings:%s", bad, b.String())
					}
				}
			}
		})
	}
}
