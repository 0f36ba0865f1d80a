package rules

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// broadFindings returns the findings of a log that come from broad
// signatures (Signature.Tier).
func broadFindings(t *testing.T, log string) []string {
	t.Helper()
	r, err := Explain(strings.NewReader(log), ExplainOptions{Version: "test"})
	if err != nil {
		t.Fatalf("%q: %v", log, err)
	}
	var out []string
	for _, f := range r.Findings {
		if s, _ := f.Evidence["signature"].(string); strings.HasPrefix(s, "broad.") {
			out = append(out, s)
		}
	}
	return out
}

// TestBroadFindingIsUndecided: alone, a broad finding is the root cause,
// undecided (explain says "Most likely"), with no fix and with what to
// paste next.
func TestBroadFindingIsUndecided(t *testing.T) {
	for _, c := range []struct{ log, cause, sig string }{
		{"[renderer] error: your NVIDIA display driver is too old for this version of the renderer\n", "driver_too_old_for_cuda", "broad.driver_too_old"},
		{"ModuleNotFoundError: No module named 'tensorflow_gpu'\n", "tf_not_installed", "broad.module_not_found"},
		{"[upscaler] error: cannot find cublasLt64_12.dll\n", "libcublas_missing", "broad.cuda_library_unloadable"},
		{"RuntimeError: failed to load libnvrtc.so.12\n", "framework_import_failed", "broad.cuda_library_unloadable"},
		// A context picks the most likely label; it never decides a
		// broad finding (nor gives it a fix).
		{"$ docker run --rm -it renderer:latest\n[renderer] Error: found 0 CUDA devices\n", "container_runtime_no_gpu", "broad.no_cuda_device"},
	} {
		r, err := Explain(strings.NewReader(c.log), ExplainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.RootCause == nil || r.RootCause.Cause != c.cause {
			t.Errorf("%q: root cause %+v, want %s", c.log, r.RootCause, c.cause)
			continue
		}
		for _, f := range r.Findings {
			if f.ID != r.RootCause.ID {
				continue
			}
			if s, _ := f.Evidence["signature"].(string); s != c.sig {
				t.Errorf("%q: signature %q, want %s", c.log, s, c.sig)
			}
			if !Undecided(&f) {
				t.Errorf("%q: a broad finding must be undecided", c.log)
			}
			if len(f.Fixes) != 0 {
				t.Errorf("%q: a broad finding offers no fix, got %v", c.log, f.Fixes)
			}
			if ask, _ := f.Evidence["ask_for"].([]string); len(ask) == 0 {
				t.Errorf("%q: a broad finding asks for what would decide", c.log)
			}
		}
	}
}

// TestBroadYieldsToAnyOtherFinding: a broad finding is dropped when any
// other signature or reasoner reports an error or a warning, whatever its
// cause and link, and it never reads a line another signature knows (a
// harmless notice included).
func TestBroadYieldsToAnyOtherFinding(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		// The specific OOM message (a bare one: its commonest reading)
		// outranks the broad driver reading.
		{"ERROR: the GPU driver is out of date, please update your NVIDIA driver\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n", "gpu_out_of_memory_own_job"},
		// A decided finding on a higher link still wins.
		{"RuntimeError: No GPU found. A GPU is needed for quantization.\nImportError: No module named pycuda.driver\n", "framework_cpu_only_build"},
		// XLA's harmless 'driver is older than the ptxas' notice is not
		// read as a driver too old.
		{"2024-01-01 00:00:00.000000: W external/xla/xla/service/gpu/nvptx_compiler.cc:742] The NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.\n", "benign_warning_only"},
	} {
		r, err := Explain(strings.NewReader(c.log), ExplainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := topCause(r); got != c.want {
			t.Errorf("%q: root cause %s, want %s", c.log, got, c.want)
		}
		if b := broadFindings(t, c.log); len(b) > 0 {
			t.Errorf("%q: broad findings %v next to a specific one", c.log, b)
		}
	}
	// A crash with an error line above it: the error says more than the
	// crash (process.crashed is itself broad).
	log := "terminate called after throwing an instance of 'std::runtime_error'\n  what():  CUDA runtime error 999 at kernels.cu:42\nAborted (core dumped)\n"
	if r, _ := Explain(strings.NewReader(log), ExplainOptions{}); topCause(r) != "cuinit_unknown_error" {
		t.Errorf("crash after a CUDA error: root cause %s, want cuinit_unknown_error", topCause(r))
	}
}

// TestBroadNegatives: lines that merely mention a family's words (help
// text, pip and apt output, version tables, nvidia-smi, source code a
// traceback quotes, harmless notices) give no broad finding.
func TestBroadNegatives(t *testing.T) {
	for _, log := range []string{
		"| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n",
		"nvidia-driver-535 is already the newest version (535.129.03-0ubuntu1).\n0 upgraded, 0 newly installed, 0 to remove and 3 not upgraded.\n",
		"Setting up nvidia-driver-535 (535.129.03-0ubuntu1) ...\n",
		"ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.\njax 0.4.13 requires jaxlib<=0.4.13, but you have jaxlib 0.4.30 which is incompatible.\n",
		"Successfully installed jax-0.4.30 jaxlib-0.4.30\n",
		"The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
		"  CUDA Capability Major/Minor version number:    8.6\n",
		"2023-05-01 12:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1635] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22302 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n",
		"2023-05-01 12:00:00.000000: I tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:424] Loaded cuDNN version 8600\n",
		"2021-03-01 10:00:00.000000: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully opened dynamic library libcudart.so.11.0\n",
		"\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8\n",
		"crw-rw-rw- 1 root root 195,   0 Jan  1 10:00 /dev/nvidia0\n",
		"Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1       916G  402G  468G  47% /\n",
		"usage: train.py [-h] [--device DEVICE] [--no-cuda]\n  --no-cuda   train on the CPU even if no CUDA device is found\n",
		"A matching Triton is not available, some optimizations will not be enabled.\nError caught was: No module named 'triton'\n",
		"No module 'xformers'. Proceeding without it.\n",
		"Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n",
		// Host memory is not GPU memory; advice is not a failure.
		"OSError: [Errno 12] Cannot allocate memory\n",
		"Out of memory: Killed process 1234 (python) total-vm:81234567kB\n",
		"MemoryError: Unable to allocate 3.2 GiB for an array with shape (20000, 20000)\n",
		"ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory\n",
		"  --gpu-memory-fraction F   set it to avoid running out of GPU memory\n",
		// Source code a traceback quotes is the program's, not a message.
		"Traceback (most recent call last):\n  File \"app.py\", line 9, in <module>\n    raise SystemExit(\"No CUDA device found\") if strict else None\nKeyboardInterrupt\n",
		"---------------------------------------------------------------------------\nKeyboardInterrupt                         Traceback (most recent call last)\n----> 5 if not found: print('GPU device not found')\n",
	} {
		if b := broadFindings(t, log); len(b) > 0 {
			t.Errorf("%q: broad findings %v", log, b)
		}
	}
	// Two long lines in a row read as one wrapped message for specific
	// signatures; a broad one's words must stand on one line.
	wrapped := "[renderer] using the NVIDIA driver shipped with the system image for this session\n" +
		"[renderer] the scene cache is too old and will be rebuilt now, please wait a moment\n"
	if b := broadFindings(t, wrapped); len(b) > 0 {
		t.Errorf("words of two lines paired: broad findings %v", b)
	}
	// A frame with no source ('<stdin>') is followed by the error itself:
	// that line is read.
	log := "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nImportError: torch_scatter was compiled against torch 2.1 and is not compatible with torch 2.3\n"
	if b := broadFindings(t, log); len(b) != 1 || b[0] != "broad.framework_version_incompatible" {
		t.Errorf("error right below a source-less frame: broad findings %v", b)
	}
}

// TestLibraryRejectsBadBroadSignatures: a broad signature is a symptom,
// says what would decide, and has no context that could decide it.
func TestLibraryRejectsBadBroadSignatures(t *testing.T) {
	causes, _ := os.ReadFile("signatures/causes.json")
	ctx := `{"id": "ctx.x", "kind": "context", "context": "x", "title": "t", "doc": "d", "keywords": ["x"], "patterns": ["x"], "examples": ["x"]}`
	base := `"id": "x.broad", "tier": "broad", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["disk"], "patterns": ["disk full"], "sources": ["s"], "examples": ["disk full"]`
	good := `{` + base + `, "symptom": true, "next": ["df -h"]}`
	for name, sig := range map[string]string{
		"not a symptom":      `{` + base + `, "next": ["df -h"]}`,
		"no next":            `{` + base + `, "symptom": true}`,
		"a deciding context": `{` + base + `, "symptom": true, "next": ["df -h"], "contexts": {"x": {"cause": "disk_full", "decide": true}}}`,
		"a context's link":   `{` + base + `, "symptom": true, "next": ["df -h"], "contexts": {"x": {"cause": "disk_full", "link": "driver"}}}`,
		"unknown tier":       strings.Replace(good, `"tier": "broad"`, `"tier": "wide"`, 1),
	} {
		fsys := fstest.MapFS{
			"signatures/causes.json": {Data: causes},
			"signatures/x.json":      {Data: []byte(`{"source": "test", "signatures": [` + ctx + `, ` + sig + `]}`)},
		}
		if _, err := parseLibrary(fsys); err == nil {
			t.Errorf("%s: accepted %s", name, sig)
		}
	}
	fsys := fstest.MapFS{
		"signatures/causes.json": {Data: causes},
		"signatures/x.json":      {Data: []byte(`{"source": "test", "signatures": [` + ctx + `, ` + good + `]}`)},
	}
	if _, err := parseLibrary(fsys); err != nil {
		t.Errorf("rejected a good broad signature: %v", err)
	}
}
