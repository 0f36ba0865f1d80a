package rules

import (
	"testing"

	"github.com/tfdoctor/doctor/checks"
)

// TestLabelNeedsItsEvidence: a bare CUDA_ERROR_NO_DEVICE does not prove
// that CUDA_VISIBLE_DEVICES hides the GPU (its likeliest reading, so
// undecided) and gets no fix; the same line
// next to an assignment that hides every GPU does.
func TestLabelNeedsItsEvidence(t *testing.T) {
	fixIDs := func(r *Report) []string {
		var ids []string
		for _, f := range r.Findings {
			for _, x := range f.Fixes {
				ids = append(ids, x.ID)
			}
		}
		return ids
	}
	bare := ExplainText("2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n")
	// The variable is the commonest reading and may be named as the most
	// likely cause, never as what the log settles.
	for _, f := range bare.Findings {
		if bare.RootCause != nil && f.ID == bare.RootCause.ID && !Undecided(&f) {
			t.Errorf("bare CUDA_ERROR_NO_DEVICE: root cause %s decided without the variable in the paste", f.Cause)
		}
	}
	for _, id := range fixIDs(bare) {
		t.Errorf("bare CUDA_ERROR_NO_DEVICE: fix %s offered although the cause is not proven", id)
	}
	shown := ExplainText("$ export CUDA_VISIBLE_DEVICES=\"\"\n$ python train.py\n2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n")
	if got := topCause(shown); got != "cuda_visible_devices_hides_gpu" {
		t.Errorf("CUDA_VISIBLE_DEVICES=\"\" shown: root cause %s", got)
	}
	found := false
	for _, id := range fixIDs(shown) {
		found = found || id == checks.FixUnsetCUDAVisibleDevices
	}
	if !found {
		t.Errorf("CUDA_VISIBLE_DEVICES=\"\" shown: no %s fix in %v", checks.FixUnsetCUDAVisibleDevices, fixIDs(shown))
	}
}

// TestStrongerFactOutranks: the WSL 1 kernel string explains a failed
// DKMS build and a failing nvidia-smi in the same paste.
func TestStrongerFactOutranks(t *testing.T) {
	r := ExplainText("$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\nError! Your kernel headers for kernel 4.4.0-19041-Microsoft cannot be found.\n")
	if got := topCause(r); got != "wsl1_no_gpu" {
		t.Errorf("root cause %s, want wsl1_no_gpu", got)
	}
}

// TestConsequenceNeverOutranksCause: a container that cannot start
// because NVML reports a driver/library version mismatch is not a
// container problem; the host's driver is.
func TestConsequenceNeverOutranksCause(t *testing.T) {
	r := ExplainText("docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown.\n")
	if got := topCause(r); got != "driver_library_mismatch" {
		t.Errorf("root cause %s, want driver_library_mismatch", got)
	}
}

// TestMessageFamilies: one message family is recognised across versions,
// platforms and typography (any apostrophe, any quote).
func TestMessageFamilies(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'libcudart.so.10.1'; dlerror: libcudart.so.10.1: cannot open shared object file: No such file or directory", "libcudart_missing"},
		{"W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory", "libcudart_missing"},
		{"I0000 00:00:1712000000.000000 1234 dso_loader.cc:75] Could not load dynamic library 'libcudart.so.12'; dlerror: libcudart.so.12: cannot open shared object file: No such file or directory", "libcudart_missing"},
		{"W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found", "libcudart_missing"},
		{"Could not load dynamic library ‘libcudnn.so.8’; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory", "libcudnn_missing"},
		{"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.", "kernel_module_not_built"},
		{"NVIDIA-SMI has failed because it couldn’t communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.", "kernel_module_not_built"},
		{"NVIDIA-SMI has failed because it couldn‘t communicate with the NVIDIA driver.", "kernel_module_not_built"},
		{"[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)", "driver_library_mismatch"},
		{"Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this kernel module has the version 530.30.02.  Please", "driver_library_mismatch"},
	} {
		if got := topCause(ExplainText(c.line + "\n")); got != c.want {
			t.Errorf("%q: root cause %s, want %s", c.line, got, c.want)
		}
	}
}

// TestAskedForEchoDecides: the output explain asks for
// (echo "CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES]") decides a bare
// no-device error: brackets around nothing or -1 hide every GPU; brackets
// around 0 are the first GPU and do not.
func TestAskedForEchoDecides(t *testing.T) {
	const noDevice = "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected\n"
	echo := func(v string) string {
		return "$ echo \"CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES]\"\nCUDA_VISIBLE_DEVICES=[" + v + "]\n" + noDevice
	}
	for _, v := range []string{"", "-1"} {
		if got := topCause(ExplainText(echo(v))); got != "cuda_visible_devices_hides_gpu" {
			t.Errorf("CUDA_VISIBLE_DEVICES=[%s] then no device: root cause %s", v, got)
		}
	}
	r := ExplainText(echo("0"))
	if got := topCause(r); got == "cuda_visible_devices_hides_gpu" {
		t.Errorf("CUDA_VISIBLE_DEVICES=[0] then no device: root cause %s; index 0 hides nothing", got)
	}
	for _, f := range r.Findings {
		if f.ID == "explain.cuda_visible_devices" {
			t.Errorf("CUDA_VISIBLE_DEVICES=[0]: finding %q", f.Title)
		}
	}
}
