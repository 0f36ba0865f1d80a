package rules

import (
	"strings"
	"testing"
)

// judgmentCase is a paste whose cause the log does not prove, or proves
// otherwise than a line read alone suggests: explain must not say "Root
// cause:" with a fix it cannot stand behind. Each log is written from the
// message texts of a reviewer's probe (no personal data).
type judgmentCase struct {
	name string
	log  string
	// cause is the root cause's label; "" expects none.
	cause string
	// decided is the root finding's evidence.decided.
	decided bool
	// noFix lists fix IDs that no failing finding may offer.
	noFix []string
	// notCause lists labels no failing finding may carry.
	notCause []string
	// notFinding lists finding IDs (signatures, reasoners) that must not
	// be reported as failing.
	notFinding []string
	// fixes, when set, is the root finding's fix IDs, comma-separated.
	fixes *string
	// detail, when set, is a phrase the root finding's detail contains.
	detail string
}

var judgmentCases = []judgmentCase{
	{
		name: "windows_tf_2.10_empty_list",
		log: `PS C:\Users\me> pip list | findstr tensorflow
tensorflow                   2.10.1
PS C:\Users\me> python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"
[]
`,
		cause: "tf_cpu_only_build_installed", decided: false,
		noFix: []string{"use-wsl2", "pip-install-tensorflow"}, notCause: []string{"tf_windows_native_gpu_unsupported"},
	},
	{
		name: "windows_no_tf_version",
		log: `PS C:\Users\me> python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"
[]
`,
		cause: "tf_windows_native_gpu_unsupported", decided: false,
	},
	{
		name: "windows_tf_2.15_not_built_with_cuda",
		log: `PS C:\Users\me> python -c "import tensorflow as tf; print(tf.__version__); print(tf.test.is_built_with_cuda())"
2.15.0
False
`,
		cause: "tf_windows_native_gpu_unsupported", decided: true,
	},
	{
		name: "wsl_shell_runs_nvidia_smi_exe",
		log: `(tf) user@PC:~$ nvidia-smi.exe
Thu Dec  3 13:40:01 2026
| NVIDIA-SMI 551.61                 Driver Version: 551.61         CUDA Version: 12.4     |
(tf) user@PC:~$ python3 -c "import tensorflow as tf; print(tf.__version__); print(tf.config.list_physical_devices('GPU'))"
2.15.0
[]
`,
		cause: "tf_cpu_only_build_installed", decided: false,
		noFix: []string{"use-wsl2"}, notCause: []string{"tf_windows_native_gpu_unsupported"},
	},
	{
		name: "gpu_only_with_sudo",
		log: `(myenv) user@box:~$ python -c "import torch; print(torch.cuda.is_available())"
False
(myenv) user@box:~$ sudo python -c "import torch; print(torch.cuda.is_available())"
True
`,
		cause: "device_node_permission", decided: false,
		noFix: []string{"create-device-nodes", "device-group"},
	},
	{
		name: "gpu_only_with_sudo_cuda_visible_devices_shown",
		log: `user@box:~$ env | grep CUDA
CUDA_VISIBLE_DEVICES=-1
user@box:~$ python3 -c "import torch; print(torch.cuda.is_available())"
False
user@box:~$ sudo python3 -c "import torch; print(torch.cuda.is_available())"
True
`,
		cause: "cuda_visible_devices_hides_gpu", decided: true,
		noFix: []string{"create-device-nodes", "device-group"},
	},
	{
		name: "optional_module_peermem_missing_on_healthy_node",
		log: `Dec 03 10:00:01 host systemd-modules-load[312]: Failed to find module 'nvidia-peermem'
Dec 03 10:00:02 host kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15
$ nvidia-smi -L
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5f2e)
`,
		cause: "", notCause: []string{"kernel_module_not_built"}, noFix: []string{"dkms-rebuild"},
	},
	{
		name: "no_module_and_no_nvidia_smi_is_no_driver",
		log: `$ nvidia-smi
Command 'nvidia-smi' not found, but can be installed with:
sudo apt install nvidia-utils-535
$ modinfo nvidia
modinfo: ERROR: Module nvidia not found.
`,
		cause: "driver_missing", decided: true, notCause: []string{"kernel_module_not_built"},
	},
	{
		name: "module_not_found_alone_is_a_symptom",
		log: `$ modinfo nvidia
modinfo: ERROR: Module nvidia not found.
$ lspci | grep -i nvidia
01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)
`,
		cause: "kernel_module_not_built", decided: false, noFix: []string{"dkms-rebuild", "install-driver"},
	},
	{
		name: "module_not_found_with_dkms_is_not_built",
		log: `$ sudo modprobe nvidia
modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.5.0-35-generic
$ dkms status
nvidia/535.171.04, 6.2.0-39-generic, x86_64: installed
`,
		cause: "kernel_module_not_built", decided: true,
	},
	{
		name: "dkms_kernel_list_is_not_the_running_kernel",
		log: `$ ls /lib/modules/
5.15.0-91-generic
6.5.0-35-generic
$ dkms status
nvidia/550.54.15, 6.5.0-35-generic, x86_64: installed
$ uname -r
6.5.0-35-generic
`,
		cause: "", notCause: []string{"kernel_module_not_built"}, noFix: []string{"dkms-rebuild"},
	},
	{
		name: "dkms_built_for_another_kernel_than_uname_r",
		log: `$ ls /lib/modules/
5.15.0-91-generic
6.5.0-35-generic
$ dkms status
nvidia/550.54.15, 5.15.0-91-generic, x86_64: installed
$ uname -r
6.5.0-35-generic
`,
		cause: "kernel_module_not_built", decided: true,
	},
	{
		name: "bare_stub_library_is_a_symptom",
		log: `2024-03-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_STUB_LIBRARY: CUDA driver is a stub library
`,
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "stub_library_with_stubs_on_ld_library_path",
		log: `$ echo $LD_LIBRARY_PATH
/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64
2024-03-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_STUB_LIBRARY: CUDA driver is a stub library
`,
		cause: "ld_library_path_pollution", decided: true, noFix: []string{"install-driver"},
	},
	{
		name: "libcuda_cannot_open_is_a_symptom",
		log: `Traceback (most recent call last):
  File "<string>", line 1, in <module>
OSError: libcuda.so.1: cannot open shared object file: No such file or directory
`,
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "nvidia_smi_without_libnvidia_ml_stays_nvml_symptom",
		log: `$ nvidia-smi
nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: cannot open shared object file: No such file or directory
`,
		cause: "driver_missing", decided: false,
	},
	{
		name: "k8s_pod_limit_zero_beside_node_with_gpus",
		log: `$ kubectl describe node gpu-node-1
Capacity:
  nvidia.com/gpu:     8
Allocatable:
  nvidia.com/gpu:     8
$ kubectl get pod trainer -o yaml | grep -A3 limits
    limits:
      nvidia.com/gpu: 0
`,
		cause: "", notCause: []string{"container_runtime_no_gpu"},
	},
	{
		name: "dcgm_exporter_timeout_setting_is_no_nvml_error",
		log: `time="2024-05-01T10:00:00Z" level=info msg="nvml init ok; dcgm-exporter scrape Timeout set to 30s"
level=info msg="Starting dcgm-exporter" nvml=ok Timeout=5s
`,
		cause: "", notCause: []string{"driver_unresponsive"},
	},
	{
		name: "gpu_util_err_alone_on_a_laptop",
		log: `| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |
|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |
| N/A   45C    P8    N/A /  N/A |    300MiB /  4096MiB |     ERR!      Default |
`,
		cause: "", notCause: []string{"gpu_hardware_xid_error"},
	},
	{
		name: "err_in_fan_power_and_util_is_a_fault",
		log: `| ERR!   52C    P2   ERR! / 250W |   9050MiB / 11178MiB |     ERR!      Default |
`,
		cause: "gpu_hardware_xid_error", decided: true,
	},
	{
		name: "rev_ff_with_bbswitch_off",
		log: `$ lspci | grep -i nvidia
01:00.0 3D controller: NVIDIA Corporation GP107M [GeForce GTX 1050 Mobile] (rev ff)
$ cat /proc/acpi/bbswitch
0000:01:00.0 OFF
`,
		cause: "", notCause: []string{"gpu_hardware_xid_error"},
	},
	{
		name: "rev_ff_without_power_switch_is_off_the_bus",
		log: `$ lspci | grep -i nvidia
01:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev ff)
`,
		cause: "gpu_hardware_xid_error", decided: true,
	},
	{
		name: "find_listing_a_stubs_folder",
		log: `$ find /usr/local/cuda/ -type d -name stubs
/usr/local/cuda/lib64/stubs
/usr/local/cuda/targets/x86_64-linux/lib/stubs
$ python -c "import torch; print(torch.cuda.is_available())"
True
`,
		cause: "", notCause: []string{"ld_library_path_pollution"},
	},
	{
		name: "conda_cuda_not_available_is_no_driver_seen",
		log: `UnsatisfiableError: The following specifications were found
to be incompatible with your system:

  - feature:/linux-64::__glibc==2.28=0
  - pytorch-cuda=12.1 -> __cuda

Your installed version is: not available
`,
		cause: "driver_missing", decided: false, noFix: []string{"install-driver"}, notCause: []string{"driver_too_old_for_cuda"},
	},
	{
		name: "docker_run_continued_on_next_line_with_gpus",
		log: `$ docker run --rm -it \
    --gpus all \
    tensorflow/tensorflow:latest-gpu python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"
2024-05-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected
[]
`,
		// --gpus all passed: the container's reading stays, undecided,
		// and "start the container with GPU access" is not offered.
		cause: "container_runtime_no_gpu", decided: false, notFinding: []string{"container.run_without_gpus"}, noFix: []string{"container-gpus"},
	},
	{
		name: "docker_run_one_line_without_gpus",
		log: `$ docker run --rm -it tensorflow/tensorflow:latest-gpu python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"
2024-05-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected
[]
`,
		cause: "container_runtime_no_gpu", decided: true,
	},
	{
		// Slurm refusing the request is the scheduler giving the job no
		// GPU: its own label, decided, and nothing about
		// CUDA_VISIBLE_DEVICES.
		name: "slurm_rejected_gres_is_the_scheduler",
		log: `$ sbatch --gres=gpu:a100:1 job.sh
sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification
`,
		cause: "scheduler_no_gpu_allocated", decided: true, noFix: []string{"unset-cuda-visible-devices"},
	},
	{
		name: "ollama_driver_too_old_or_missing",
		log: `time=2024-06-01T10:00:00.000Z level=WARN source=gpu.go:228 msg="your nvidia driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama"
`,
		cause: "driver_too_old_for_cuda", decided: false, noFix: []string{"install-driver"},
	},
	{
		name: "gpu_only_with_sudo_cuda_visible_devices_echoed",
		log: `user@box:~$ echo $CUDA_VISIBLE_DEVICES
-1
user@box:~$ python3 -c "import torch; print(torch.cuda.is_available())"
False
user@box:~$ sudo python3 -c "import torch; print(torch.cuda.is_available())"
True
`,
		cause: "cuda_visible_devices_hides_gpu", decided: true,
		noFix: []string{"create-device-nodes", "device-group"},
	},
}

func TestExplainJudgment(t *testing.T) {
	for _, c := range judgmentCases {
		t.Run(c.name, func(t *testing.T) { checkJudgment(t, c) })
	}
}

// checkJudgment explains c.log and checks its root cause, whether it is
// decided, and the fixes, labels and findings it must not show.
func checkJudgment(t *testing.T, c judgmentCase) {
	t.Helper()
	checkReport(t, ExplainText(c.log), c)
}

// checkReport checks what explain said (r) against c; c.log is not read.
func checkReport(t *testing.T, r *Report, c judgmentCase) {
	t.Helper()
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString("\n  " + f.ID + " " + string(f.Severity) + " " + f.Cause + ": " + f.Title)
		for _, x := range f.Fixes {
			b.WriteString(" [" + x.ID + "]")
		}
	}
	got := ""
	if r.RootCause != nil {
		got = r.RootCause.Cause
	}
	if got != c.cause {
		t.Fatalf("root cause %q, want %q; findings:%s", got, c.cause, b.String())
	}
	for _, f := range r.Findings {
		if r.RootCause != nil && f.ID == r.RootCause.ID {
			if d, _ := f.Evidence[DecidedKey].(bool); d != c.decided {
				t.Errorf("root finding %s decided=%v, want %v; findings:%s", f.ID, d, c.decided, b.String())
			}
			if c.fixes != nil {
				if got := strings.Join(fixIDs(f.Fixes), ","); got != *c.fixes {
					t.Errorf("%s: fixes [%s], want [%s]", f.ID, got, *c.fixes)
				}
			}
			if c.detail != "" && !strings.Contains(f.Detail, c.detail) {
				t.Errorf("%s: detail %q lacks %q", f.ID, f.Detail, c.detail)
			}
		}
		if !f.Failing() {
			continue
		}
		for _, x := range f.Fixes {
			for _, bad := range c.noFix {
				if x.ID == bad {
					t.Errorf("finding %s offers fix %s; findings:%s", f.ID, bad, b.String())
				}
			}
		}
		for _, bad := range c.notFinding {
			if f.ID == bad {
				t.Errorf("finding %s reported; findings:%s", bad, b.String())
			}
		}
		for _, bad := range c.notCause {
			if f.Cause == bad {
				t.Errorf("finding %s has cause %s; findings:%s", f.ID, bad, b.String())
			}
		}
	}
}

// TestContextReplacesAskFor: a context's override replaces what explain
// asks for, so a Windows paste is not asked for lsmod and dkms.
func TestContextReplacesAskFor(t *testing.T) {
	r := explainFile(t, "testdata/explain/logs/driver_missing/windows_smi_cannot_communicate.log")
	if r.RootCause == nil || r.RootCause.Cause != "driver_missing" {
		t.Fatalf("root cause %+v, want driver_missing", r.RootCause)
	}
	for _, f := range r.Findings {
		if f.ID != r.RootCause.ID {
			continue
		}
		ask, _ := f.Evidence["ask_for"].([]string)
		joined := strings.Join(ask, " ; ")
		if !strings.Contains(joined, "Device Manager") || strings.Contains(joined, "lsmod") || strings.Contains(joined, "dkms") {
			t.Errorf("ask_for %q: want the Windows questions only", joined)
		}
		return
	}
	t.Fatal("root cause finding not in findings")
}
