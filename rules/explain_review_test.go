package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
)

// reviewCase is one of the reviewer's probe logs (testdata/review)
// where explain was confidently wrong: the root cause it must name, whether
// the log decides it, and the fixes it may print.
type reviewCase struct {
	log     string
	cause   string // root cause; "none" for no root cause
	decided bool   // evidence.decided of the root cause
	fixes   string // the root cause's fix IDs, comma-separated
}

func TestReviewProbes(t *testing.T) {
	for _, c := range []reviewCase{
		// item 7: 'Blas GEMM launch failed' follows any cuBLAS error.
		{"p_blas", "gpu_memory_preallocation", false, ""},
		// item 9: an unversioned cuda* symbol missing from an extension.
		{"p_undef", "framework_import_failed", false, ""},
		// item 11: a False or a +cpu version answers the question right
		// above it, not one further up (mps, hip, ipex.__version__).
		{"q_gpuq", "none", false, ""},
		{"q_gpuq2", "none", false, ""},
		{"q_ver", "none", false, ""},
		{"torch_false_answer", "framework_cpu_only_build", false, ""},
		{"torch_cpu_answer", "framework_cpu_only_build", true, "framework-gpu-build"},
		// item 5: nvcc missing is harmless unless the paste builds CUDA code.
		{"v_nvcc", "libcudart_missing", true, ""},
		{"nvcc_missing_in_build", "libcudart_missing", true, ""},
		{"nvcc_missing_no_build", "benign_warning_only", false, ""},
		// item 6: a +cuXXX / .postXXX build asked for on PyPI is the wrong
		// index, not an unsupported Python (no TensorFlow Python ranges).
		{"p_pipcu", "framework_not_installed", false, ""},
		{"p_paddlepip", "framework_not_installed", false, ""},
		// item 16: a crash after harmless notices is not "nothing to fix".
		{"v_segv", "framework_import_failed", false, ""},
		// item 12: nvidia-smi answered in the same paste: the driver is not
		// missing; within one CUDA major it runs the build.
		{"s_minor4", "cuda_visible_devices_hides_gpu", false, ""},
		{"torch_cu121_driver_470", "driver_too_old_for_cuda", true, "install-driver"},
		// review 2, G26: pip found TensorFlow at a prompt naming an
		// activated environment, the notebook's kernel runs the system
		// Python: decided. A kernel in some environment stays undecided.
		{"r2_o01_jupyter", "jupyter_kernel_wrong_env", true, "ipykernel-install"},
		{"r2x_jupyter_base_env", "jupyter_kernel_wrong_env", false, ""},
		// review 2, G25: nvidia-smi before the job shows the memory held,
		// and TensorFlow then could take only 280 MB: decided. The same
		// table pasted after the job's lines proves nothing of the start.
		{"r2_j04_tf_oom_other", "gpu_out_of_memory_other_process", true, "use-free-gpu,tf-allow-growth"},
		{"r2x_tf_oom_smi_after", "gpu_out_of_memory_other_process", false, ""},
	} {
		t.Run(c.log, func(t *testing.T) {
			r := explainFile(t, filepath.Join("testdata/review", c.log+".log"))
			if got := topCause(r); got != c.cause {
				t.Fatalf("root cause %s, want %s", got, c.cause)
			}
			if r.RootCause == nil {
				return
			}
			var f *checks.Finding
			for i := range r.Findings {
				if r.Findings[i].ID == r.RootCause.ID {
					f = &r.Findings[i]
				}
			}
			if f == nil {
				t.Fatalf("root cause finding %s not among the findings", r.RootCause.ID)
			}
			if d, _ := f.Evidence[DecidedKey].(bool); d != c.decided {
				t.Errorf("%s: decided %v, want %v", f.ID, d, c.decided)
			}
			if got := strings.Join(fixIDs(f.Fixes), ","); got != c.fixes {
				t.Errorf("%s: fixes [%s], want [%s]", f.ID, got, c.fixes)
			}
		})
	}
}

// causesCase is one of the second review's probe logs (testdata/review/r2_*)
// where Causes was wrong: a fault lost (an import failure folded under a
// driver fault it does not depend on) or one fault counted several times
// (a consequence listed beside its cause). Only the count and the labels
// that must or must not be among the causes are asserted: which reading
// of the lower fault is the root is other tests' business.
type causesCase struct {
	log  string
	n    int    // how many causes
	has  string // labels that must be among the causes, comma-separated
	lack string // labels that must not be
}

func TestReviewCauses(t *testing.T) {
	for _, c := range []causesCase{
		// B.9: an import failure does not rest on the driver: it fails
		// before any GPU call and stays after the driver is fixed.
		{"r2_c06_sb_and_jax", 2, "secure_boot_unsigned_module,framework_import_failed", ""},
		{"r2_d04_smi_jax", 2, "framework_import_failed", ""},
		{"r2_z14_smi_jax2", 2, "framework_import_failed", ""},
		{"r2_f02_smi_tfimport", 2, "framework_import_failed", ""},
		{"r2_z12_smi_illegal", 2, "framework_import_failed", ""},
		{"r2_z11_smi_fbgemm", 2, "framework_import_failed", ""},
		{"r2_z13_smi_cupy_bad", 2, "framework_import_failed", ""},
		// ... as the other independent findings already were.
		{"r2_d01_smi_nomod", 2, "framework_not_installed", ""},
		{"r2_z08_smi_jupyter", 2, "jupyter_kernel_wrong_env", ""},
		{"r2_z09_sb_torchcpu", 2, "framework_cpu_only_build", ""},
		{"r2_d05_smi_disk", 2, "disk_full", ""},
		// B.10: print(torch.__version__, torch.cuda.is_available()).
		{"r2_f01_smi_torchcpu", 2, "framework_cpu_only_build", ""},
		// C.11: a framework that sees no GPU is what the fault below looks
		// like from Python, even when that fault is only the likeliest
		// reading; no CPU-build label without its own evidence.
		{"r2_a01_nodrv_smi", 1, "", "framework_cpu_only_build"},
		{"r2_j03_slurm_nogres", 1, "", "framework_cpu_only_build"},
		{"r2_c07_cvd0", 1, "", "tf_cpu_only_build_installed"},
		{"r2_a02_nogpu_lspci", 1, "", "tf_cpu_only_build_installed"},
		{"r2_o02_tf_cpu_pip", 1, "", "tf_cpu_only_build_installed"},
		{"r2_m04_amd", 1, "", "tf_cpu_only_build_installed"},
		// C.12: JAX's 'no supported devices' with no driver.
		{"r2_f05_smi_jaxplugin", 1, "", "gpu_memory_preallocation"},
		// C.13: one failure and its own reports.
		{"r2_l04_ctk_nvml", 1, "", ""},
		{"r2_l03_cudnn_internal", 1, "", ""},
		{"r2_s01_jax_dnn", 1, "", "libcudnn_missing"},
		{"r2_e01_shm", 1, "dev_shm_unusable", "disk_full"},
		// An unexplained crash at run time (a notebook kernel that died)
		// rests on the driver although its label is the import's.
		{"r2x_smi_kernel_died", 1, "", "framework_import_failed"},
	} {
		t.Run(c.log, func(t *testing.T) {
			r := explainFile(t, filepath.Join("testdata/review", c.log+".log"))
			got := map[string]bool{}
			var list []string
			for _, k := range r.Causes {
				got[k.Cause] = true
				list = append(list, k.ID+" ["+k.Cause+"]")
			}
			if len(r.Causes) != c.n {
				t.Errorf("%d causes %v, want %d", len(r.Causes), list, c.n)
			}
			for _, l := range strings.Split(c.has, ",") {
				if l != "" && !got[l] {
					t.Errorf("%s not among the causes %v", l, list)
				}
			}
			for _, l := range strings.Split(c.lack, ",") {
				if l != "" && got[l] {
					t.Errorf("%s among the causes %v", l, list)
				}
			}
		})
	}
}
