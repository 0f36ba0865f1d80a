package rules

import (
	"path/filepath"
	"strings"
	"testing"
)

// review2ACase is one of the second reviewer's probes (testdata/review/r2a_*,
// /work/coord/review2/FINDINGS.md section A and E) where explain said
// "Root cause:" or printed a fix the paste does not prove, or a fix that
// follows the label and not the framework, platform or version shown.
type review2ACase struct {
	log     string
	cause   string   // root cause; "none" for none
	decided bool     // evidence.decided of the root cause
	noFix   []string // fix IDs no failing finding may offer
	fixes   *string  // the root cause's fix IDs, comma-separated, when checked
	detail  string   // a phrase the root finding's detail must contain
}

func strpA(s string) *string { return &s }

func TestReview2AProbes(t *testing.T) {
	for _, c := range []review2ACase{
		// A1: Slurm's NoDevFiles and an srun without --gres: the
		// scheduler gave the job no GPU; unsetting the variable is no fix.
		{log: "aa2_nodevfiles", cause: "scheduler_no_gpu_allocated", decided: true, noFix: []string{"unset-cuda-visible-devices"}, fixes: strpA("")},
		{log: "aa3_slurm_cvd_empty", cause: "scheduler_no_gpu_allocated", decided: true, noFix: []string{"unset-cuda-visible-devices"}, fixes: strpA("")},
		// A2: a missing CUDA library gets TensorFlow's pip fix only when
		// it is TensorFlow's, on Linux, from 2.14 (the [and-cuda] extra).
		{log: "d02_smi_cupy", cause: "kernel_module_not_built", decided: false, noFix: []string{"pip-install-tensorflow"}},
		{log: "f06_win_cudnn", cause: "libcudnn_missing", decided: true, noFix: []string{"pip-install-tensorflow"}, fixes: strpA(""), detail: "CUDA 11.2 and cuDNN 8.1"},
		{log: "v05_tf212_cudart", cause: "libcudart_missing", decided: false, noFix: []string{"pip-install-tensorflow"}, fixes: strpA(""), detail: "CUDA 11.8 and cuDNN 8.6"},
		{log: "v02_ignore_cudart", cause: "libcudart_missing", decided: false},
		// A3: a PyTorch or vLLM paste gets no TensorFlow release advice.
		{log: "l01_nokernelimage", cause: "unsupported_compute_capability", decided: true, noFix: []string{"older-tensorflow"}},
		{log: "e02_bf16", cause: "unsupported_compute_capability", decided: true, noFix: []string{"older-tensorflow"}, detail: "--dtype=half"},
		// A4: MIG instances listed: an index past the one MIG device a
		// CUDA process enumerates, not MIG misconfigured.
		{log: "a07_ordinal_mig", cause: "gpu_index_out_of_range", decided: true, noFix: []string{"ask-admin-mig"}, detail: "CUDA_VISIBLE_DEVICES=MIG-"},
		// A5: application Xids, an illegal address, a GSP timeout: no
		// drain-and-RMA.
		{log: "n02_xid13", cause: "gpu_hardware_xid_error", decided: false, noFix: []string{"gpu-drain-and-reboot"}},
		{log: "n01_xid31", cause: "gpu_hardware_xid_error", decided: false, noFix: []string{"gpu-drain-and-reboot"}},
		{log: "n04_illegal", cause: "gpu_hardware_xid_error", decided: false, noFix: []string{"gpu-drain-and-reboot"}},
		{log: "bb2_xid119", cause: "gpu_hardware_xid_error", decided: true, noFix: []string{"gpu-drain-and-reboot"}, detail: "NVreg_EnableGpuFirmware=0"},
		// A7: Insufficient nvidia.com/gpu: taken or not advertised;
		// no Docker commands on Kubernetes.
		{log: "k05_k8s_insufficient", cause: "container_runtime_no_gpu", decided: false, noFix: []string{"container-gpus"}},
		// A8: 'No devices were found' with the module loaded: no driver
		// install until the kernel log decides.
		{log: "h01_smi_nodev", cause: "driver_missing", decided: false, noFix: []string{"install-driver"}},
		// E19: NVML Unknown Error with --gpus shown: not 'start it with
		// --gpus'.
		{log: "h06_cuda_unknown_docker", cause: "container_runtime_no_gpu", decided: false, noFix: []string{"container-gpus"}, detail: "daemon-reload"},
		// A1b: 'No module named torch' inside pip's isolated build: the
		// build environment lacks it, not the user's.
		{log: "aa1_buildiso", cause: "framework_not_installed", decided: true, fixes: strpA(""), detail: "--no-build-isolation"},
		// A8: the open module loaded for a Pascal GPU decides it
		// without the kernel's own refusal line.
		{log: "j07_open_pascal_nomsg", cause: "open_kernel_module_unsupported_gpu", decided: true},
		// G24: the user's fix, then a run listing GPU:0: the finding
		// says the last run works.
		{log: "y01_fixed_later", cause: "libcudnn_missing", decided: true, detail: "shows the GPU in use"},
		// G22: unplugged power cables: connect them, no RMA.
		{log: "x03_power", cause: "gpu_hardware_xid_error", decided: true, fixes: strpA(""), detail: "connect every power connector"},
	} {
		t.Run(c.log, func(t *testing.T) { checkReview2A(t, c) })
	}
}

// TestOpen515TitleNamesDataCenter (G23): the 515/520 open module's
// refusal of a GeForce is not titled "older than Turing".
func TestOpen515TitleNamesDataCenter(t *testing.T) {
	r := explainFile(t, "testdata/review/r2a_j09_open515_geforce.log")
	for _, f := range r.Findings {
		if f.Cause == "open_kernel_module_unsupported_gpu" {
			if strings.Contains(f.Title, "older than Turing") || !strings.Contains(f.Title, "data-center") {
				t.Errorf("title %q", f.Title)
			}
			return
		}
	}
	t.Fatal("no open_kernel_module_unsupported_gpu finding")
}

func checkReview2A(t *testing.T, c review2ACase) {
	t.Helper()
	cause := c.cause
	if cause == "none" {
		cause = ""
	}
	r := explainFile(t, filepath.Join("testdata/review", "r2a_"+c.log+".log"))
	checkReport(t, r, judgmentCase{name: c.log, cause: cause, decided: c.decided, noFix: c.noFix, fixes: c.fixes, detail: c.detail})
}
