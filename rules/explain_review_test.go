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
