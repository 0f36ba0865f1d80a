package rules

import (
	"path/filepath"
	"testing"
)

// TestReview2Probes: the second review's probe logs (testdata/review/r2_*)
// for the broad tier and the unrecognised paste (FINDINGS.md D14-16, F20):
// the root cause, the status, how many independent causes, and which
// findings may not appear.
func TestReview2Probes(t *testing.T) {
	for _, c := range []struct {
		log    string
		cause  string // root cause; "none" for no root cause
		status string
		causes int
		absent string // a finding id that must not appear
		want   string // a finding id that must appear
	}{
		// D14: code an IPython traceback quotes (numbered lines below
		// 'File ~/x.py:31, in f(...)'), a typed command, --help text, the
		// user's own sentence, a README's requirements, ls saying a path
		// is absent: none is a message.
		{"r2_i01_ipy8_src", "none", "ok", 0, "broad.no_cuda_device", ""},
		{"r2_i02_cmdecho", "none", "ok", 0, "broad.no_cuda_device", ""},
		{"r2_b03_help", "none", "ok", 0, "broad.driver_too_old", ""},
		{"r2_g01_prose", "benign_warning_only", "ok", 0, "broad.driver_too_old", ""},
		{"r2_i06_readme_paste", "none", "ok", 0, "broad.compute_capability", ""},
		{"r2_i03_ls_cudnn", "none", "ok", 0, "broad.cuda_library_unloadable", ""},
		// D15, D16: the broad tier gives one answer, the most specific
		// reading ('update your driver to 535' over 'no CUDA devices').
		{"r2_i07_two_broad_one_fault", "driver_too_old_for_cuda", "error", 1, "", "broad.no_cuda_device"},
		// Two readings of one line, equal in weight: the chain's root
		// (the lower link) stays the answer.
		{"r2_k02_broad_cudamm", "cuda_version_mismatch_tf_build", "error", 1, "", "broad.framework_version_incompatible"},
		// F20: a Python version read from a site-packages path is not
		// recognised output.
		{"r2_z07_assert_path", "none", "ok", 0, "explain.no_problem_seen", "explain.unrecognised"},
		{"r2_z06_pynvml", "none", "ok", 0, "explain.no_problem_seen", "explain.unrecognised"},
		// GPU machine (H200, another process holding 85%): JAX's
		// preallocation refused, XLA's allocator backing off by 10% a
		// step; the memory was taken before the job allocated anything.
		{"r2_jax_oom_other_h200", "gpu_out_of_memory_other_process", "error", 1, "", "xla.allocator_backpedal"},
		// E19b: out of memory at '>>> torch.zeros(1).cuda()', the first
		// CUDA call: not the job's size.
		{"r2_dd1_tiny_oom", "gpu_out_of_memory_other_process", "error", 1, "", ""},
		// E17: 'srun --partition=compute ... --pty bash' with no --gres or
		// --gpus, then False and 'nvidia-smi: command not found': the job
		// was given no GPU (on a node without the driver), not a driver
		// to install on a batch node.
		{"r2_j03_slurm_nogres", "scheduler_no_gpu_allocated", "error", 1, "", ""},
	} {
		t.Run(c.log, func(t *testing.T) {
			r := explainFile(t, filepath.Join("testdata/review", c.log+".log"))
			if got := topCause(r); got != c.cause {
				t.Errorf("root cause %s, want %s", got, c.cause)
			}
			if r.Status != c.status {
				t.Errorf("status %s, want %s", r.Status, c.status)
			}
			if len(r.Causes) != c.causes {
				t.Errorf("%d causes %v, want %d", len(r.Causes), r.Causes, c.causes)
			}
			seen := map[string]bool{}
			for _, f := range r.Findings {
				seen[f.ID] = true
			}
			if c.absent != "" && seen[c.absent] {
				t.Errorf("finding %s must not appear", c.absent)
			}
			if c.want != "" && !seen[c.want] {
				t.Errorf("finding %s must appear", c.want)
			}
		})
	}
}
