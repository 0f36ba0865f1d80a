package rules

import (
	"strings"
	"testing"
)

func TestEnvRoot(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/home/me/miniconda3/envs/tf/bin/python", "/home/me/miniconda3/envs/tf"},
		{"/home/me/miniconda3/envs/tf/lib/python3.11/site-packages", "/home/me/miniconda3/envs/tf"},
		{"/usr/bin/python3", "/usr"},
		{"/usr/local/lib/python3.10/dist-packages", "/usr"},
		{"/usr/lib/python3/dist-packages", "/usr"},
		{`C:\Users\me\anaconda3\envs\tf\python.exe`, "c:/users/me/anaconda3/envs/tf"},
		{`C:\\Users\\me\\anaconda3\\envs\\tf\\Lib\\site-packages`, "c:/users/me/anaconda3/envs/tf"},
		{`C:\venvs\a\Scripts\python.exe`, "c:/venvs/a"},
		{"/home/me/.local/lib/python3.10/site-packages", ""},
		{`C:\Users\me\AppData\Roaming\Python\Python310\site-packages`, ""},
		{"/opt/tool/site-packages", ""},
		{"python", ""},
	} {
		if got := envRoot(c.in); got != c.want {
			t.Errorf("envRoot(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPythonEnvReasoner: a notebook whose kernel is the environment pip
// installed into gets no finding; another environment does; outside a
// notebook the comparison is not made.
func TestPythonEnvReasoner(t *testing.T) {
	const elsewhere = "In [1]: import sys; print(sys.executable)\n/usr/bin/python3\n" +
		"Requirement already satisfied: torch in /home/me/venv/lib/python3.11/site-packages (2.3.0)\n"
	const same = "In [1]: import sys; print(sys.executable)\n/home/me/venv/bin/python\n" +
		"Requirement already satisfied: torch in /home/me/venv/lib/python3.11/site-packages (2.3.0)\n"
	const terminal = "$ python -c 'import sys; print(sys.executable)'\n/usr/bin/python3\n" +
		"Requirement already satisfied: torch in /home/me/venv/lib/python3.11/site-packages (2.3.0)\n"
	const unrelated = "In [1]: import sys; print(sys.executable)\n/home/me/venv/bin/python\n" +
		"Name: numpy\nVersion: 1.26.4\nLocation: /usr/lib/python3/dist-packages\n"
	has := func(text string) bool {
		for _, f := range ExplainText(text).Findings {
			if f.ID == "explain.python_env" {
				return true
			}
		}
		return false
	}
	if !has(elsewhere) {
		t.Error("kernel in another environment: no explain.python_env finding")
	}
	if r := ExplainText(elsewhere); r.RootCause == nil || r.RootCause.Cause != "jupyter_kernel_wrong_env" {
		t.Errorf("kernel in another environment: root cause %+v", r.RootCause)
	}
	for name, text := range map[string]string{"same": same, "terminal": terminal, "unrelated": unrelated} {
		if has(text) {
			t.Errorf("%s: unexpected explain.python_env finding", name)
		}
	}
}

// TestTorchCUDABuildReasoner: 'CUDA not available' stays a CPU-only wheel
// unless the paste shows a CUDA build; then the driver is the likely
// reason (a container's or WSL's own), still undecided.
func TestTorchCUDABuildReasoner(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{">>> torch.cuda.is_available()\nFalse\n", "framework_cpu_only_build"},
		{">>> torch.__version__\n'2.1.0+cu121'\n>>> torch.cuda.is_available()\nFalse\n", "driver_missing"},
		{"root@0123456789ab:/w# python -c 'import torch; print(torch.__version__, torch.cuda.is_available())'\ntorch 2.1.0+cu121\nIs CUDA available: False\n", "container_runtime_no_gpu"},
		{">>> torch.__version__\n'2.1.0+cpu'\n>>> torch.cuda.is_available()\nFalse\n", "framework_cpu_only_build"},
	} {
		r := ExplainText(c.log)
		if r.RootCause == nil || r.RootCause.Cause != c.want {
			t.Errorf("%q: root cause %+v, want %s", c.log, r.RootCause, c.want)
			continue
		}
		for _, f := range r.Findings {
			if f.ID == r.RootCause.ID && c.want != "framework_cpu_only_build" && f.Evidence["decided"] != false {
				t.Errorf("%q: decided %v, want false", c.log, f.Evidence["decided"])
			}
		}
	}
}

// TestBlackwellNoteStaysWithTensorFlow: TensorFlow's known failures on
// compute capability 12.0 are not attached to PyTorch's own message.
func TestBlackwellNoteStaysWithTensorFlow(t *testing.T) {
	const torchLog = "UserWarning: Found GPU0 NVIDIA GeForce RTX 5090 which is of compute capability (CC) 12.0.\n" +
		"Please follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release that supports one of these CUDA versions: 12.8, 13.0\n"
	for _, f := range ExplainText(torchLog).Findings {
		if _, ok := f.Evidence["known_failure_source"]; ok || strings.Contains(f.Detail, "TensorFlow") {
			t.Errorf("%s carries TensorFlow's known failure: %s", f.ID, f.Detail)
		}
	}
}
