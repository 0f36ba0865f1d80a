package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/internal/golden"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

// Golden files live with explain's other test data; rewrite them with

const (
	explainLogs   = "../../rules/testdata/explain/logs"
	explainGolden = "../../rules/testdata/explain/golden"
)

func runExplainCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	code = Main(context.Background(), append([]string{"doctor"}, args...), ios)
	return out.String(), errOut.String(), code
}

var timingRE = regexp.MustCompile(`("explain": |doctor_collector_duration_seconds\{collector="explain"\} |doctor_last_run_timestamp_seconds )[0-9.e+-]+`)

// normalize removes what changes between runs: the tool version and the
// time the explanation took.
func normalize(s string) string {
	s = strings.ReplaceAll(s, toolVersion(), "VERSION")
	return timingRE.ReplaceAllString(s, "${1}0")
}

func TestExplainGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"libcudnn_text", []string{"explain", explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log"}, 1},
		{"libcudnn_verbose", []string{"explain", "-v", explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log"}, 1},
		{"driver_too_old_json", []string{"explain", "--format", "json", explainLogs + "/driver_too_old_for_cuda/smi_cuda114_tf215.log"}, 1},
		{"secure_boot_markdown", []string{"explain", "--format", "markdown", explainLogs + "/secure_boot_unsigned_module/required_key.log"}, 1},
		{"xid_prometheus", []string{"explain", "--format", "prometheus", explainLogs + "/gpu_hardware_xid_error/xid79_journal.log"}, 1},
		{"benign_text", []string{"explain", explainLogs + "/benign_warning_only/tf216_startup.log"}, 0},
		{"unrecognised_text", []string{"explain", explainLogs + "/none/unrelated_traceback.log"}, 0},
		{"gpu_works_text", []string{"explain", explainLogs + "/none/gpu_works.log"}, 0},
		{"compute_mode_text", []string{"explain", explainLogs + "/compute_mode_prohibited/smi_prohibited.log"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runExplainCLI(t, "", c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, c.code, errOut)
			}
			got := normalize(out)
			path := filepath.Join(explainGolden, c.name+".golden")
			golden.Check(t, path, []byte(got))

		})
	}
}

func TestExplainCLI(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.log", nil)
	binary := write("core", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 2000)...))
	secure, _ := os.ReadFile(explainLogs + "/secure_boot_unsigned_module/required_key.log")
	cases := []struct {
		name    string
		stdin   string
		args    []string
		code    int
		stdout  string // substring
		stderr  string // substring
		noStdin bool
	}{
		{name: "stdin by default", stdin: string(secure), args: []string{"explain"}, code: 1, stdout: "Root cause: Secure Boot refuses"},
		{name: "stdin with -", stdin: string(secure), args: []string{"explain", "-f", "json", "-"}, code: 1, stdout: `"cause": "secure_boot_unsigned_module"`},
		{name: "format before the subcommand", stdin: string(secure), args: []string{"--format", "json", "explain"}, code: 1, stdout: `"source": "log"`},
		{name: "empty file", args: []string{"explain", empty}, code: 2, stderr: "the log is empty"},
		{name: "empty stdin", args: []string{"explain"}, code: 2, stderr: "standard input: the log is empty"},
		{name: "binary file", args: []string{"explain", binary}, code: 2, stderr: "looks binary"},
		{name: "missing file", args: []string{"explain", filepath.Join(dir, "nope.log")}, code: 2, stderr: "cannot read the log"},
		{name: "a folder", args: []string{"explain", dir}, code: 2, stderr: "it is a folder"},
		{name: "two files", args: []string{"explain", empty, binary}, code: 2, stderr: "one FILE"},
		{name: "unknown format", stdin: string(secure), args: []string{"explain", "-f", "yaml"}, code: 2, stderr: "unknown --format"},
		{name: "unknown flag", args: []string{"explain", "--bogus"}, code: 2, stderr: "bogus"},
		{name: "nothing recognised exits 0", stdin: "just some text\n", args: []string{"explain"}, code: 0, stdout: "? Nothing in the log was recognised."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runExplainCLI(t, c.stdin, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stdout %q; stderr %q", code, c.code, out, errOut)
			}
			if !strings.Contains(out, c.stdout) {
				t.Errorf("stdout %q lacks %q", out, c.stdout)
			}
			if !strings.Contains(errOut, c.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, c.stderr)
			}
		})
	}
}

// TestRulesListsSignatures: `doctor rules` lists the log signatures and
// the reasoning steps next to the checks.
func TestRulesListsSignatures(t *testing.T) {
	out, errOut, code := runExplainCLI(t, "", "rules", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Rules []ruleDoc `json:"rules"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	ids := map[string]bool{}
	for _, r := range doc.Rules {
		kinds[r.Kind]++
		ids[r.ID] = true
		if r.Kind != "check" && (r.Doc == "" || len(r.Causes) == 0 || r.Link == "") {
			t.Errorf("rule %s lacks a doc, causes or link", r.ID)
		}
	}
	if kinds["signature"] < 50 || kinds["reasoning"] < 5 || !ids["cuda.dlopen_failed"] || !ids["explain.driver_too_old"] {
		t.Errorf("doctor rules lists %v", kinds)
	}
	text, _, _ := runExplainCLI(t, "", "rules")
	if !strings.Contains(text, "cudnn.version_mismatch  (signature, link cuda_libraries)") {
		t.Errorf("text listing lacks the signatures:\n%s", text[:min(len(text), 2000)])
	}
}
