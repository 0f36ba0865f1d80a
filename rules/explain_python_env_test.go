package rules

import "testing"

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
