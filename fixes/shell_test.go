package fixes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFindAssignments(t *testing.T) {
	type a = assignment
	tests := []struct {
		name    string
		content string
		syn     syntax
		want    []a
	}{
		{"export", "export CUDA_VISIBLE_DEVICES=-1\n", shSyntax,
			[]a{{Line: 1, Text: "export CUDA_VISIBLE_DEVICES=-1", Value: "-1", Static: true, Sole: true}}},
		{"plain assignment", "x=1\nCUDA_VISIBLE_DEVICES=''\n", shSyntax,
			[]a{{Line: 2, Text: "CUDA_VISIBLE_DEVICES=''", Value: "", Static: true, Sole: true}}},
		{"indented, quoted, commented", "if true; then\n  export CUDA_VISIBLE_DEVICES=\"-1\" # cpu only\nfi\n", shSyntax,
			[]a{{Line: 2, Text: "  export CUDA_VISIBLE_DEVICES=\"-1\" # cpu only", Value: "-1", Static: true, Sole: true}}},
		{"trailing semicolon", "export CUDA_VISIBLE_DEVICES='-1';\n", shSyntax,
			[]a{{Line: 1, Text: "export CUDA_VISIBLE_DEVICES='-1';", Value: "-1", Static: true, Sole: true}}},
		{"declare -x", "declare -x CUDA_VISIBLE_DEVICES=-1", shSyntax,
			[]a{{Line: 1, Text: "declare -x CUDA_VISIBLE_DEVICES=-1", Value: "-1", Static: true, Sole: true}}},
		{"expansion", "export CUDA_VISIBLE_DEVICES=$GPU\n", shSyntax,
			[]a{{Line: 1, Text: "export CUDA_VISIBLE_DEVICES=$GPU", Value: "$GPU", Static: false, Sole: true}}},
		{"command substitution in quotes", "export CUDA_VISIBLE_DEVICES=\"$(pick-gpu)\"\n", shSyntax,
			[]a{{Line: 1, Text: "export CUDA_VISIBLE_DEVICES=\"$(pick-gpu)\"", Value: "$(pick-gpu)", Static: false, Sole: true}}},
		{"prefix assignment for one command", "CUDA_VISIBLE_DEVICES=-1 python train.py\n", shSyntax, nil},
		{"comment", "# export CUDA_VISIBLE_DEVICES=-1\n", shSyntax, nil},
		{"other variable", "export CUDA_VISIBLE_DEVICES_X=1\nexport MY_CUDA_VISIBLE_DEVICES=1\n", shSyntax, nil},
		{"two assignments", "export A=1 CUDA_VISIBLE_DEVICES=-1\n", shSyntax,
			[]a{{Line: 1, Text: "export A=1 CUDA_VISIBLE_DEVICES=-1", Static: false, Sole: false}}},
		{"two commands", "export CUDA_VISIBLE_DEVICES=-1; export X=2\n", shSyntax,
			[]a{{Line: 1, Text: "export CUDA_VISIBLE_DEVICES=-1; export X=2", Value: "-1", Static: true, Sole: false}}},
		{"here-document body", "cat <<EOF >x\nexport CUDA_VISIBLE_DEVICES=-1\nEOF\nexport CUDA_VISIBLE_DEVICES=0\n", shSyntax,
			[]a{{Line: 4, Text: "export CUDA_VISIBLE_DEVICES=0", Value: "0", Static: true, Sole: true}}},
		{"continued line", "echo a \\\nexport CUDA_VISIBLE_DEVICES=-1\n", shSyntax,
			[]a{{Line: 2, Text: "export CUDA_VISIBLE_DEVICES=-1", Value: "-1", Static: true, Sole: false}}},
		{"unclosed quote", "export CUDA_VISIBLE_DEVICES='-1\n'\n", shSyntax,
			[]a{{Line: 1, Text: "export CUDA_VISIBLE_DEVICES='-1", Sole: false}}},
		{"CRLF", "export CUDA_VISIBLE_DEVICES=-1\r\n", shSyntax,
			[]a{{Line: 1, Text: "export CUDA_VISIBLE_DEVICES=-1", Value: "-1", Static: true, Sole: true}}},
		{"pam_env quoted", "PATH=\"/usr/bin\"\nCUDA_VISIBLE_DEVICES=\"-1\"\n", pamEnvSyntax,
			[]a{{Line: 2, Text: "CUDA_VISIBLE_DEVICES=\"-1\"", Value: "-1", Static: true, Sole: true}}},
		{"pam_env no expansion", "CUDA_VISIBLE_DEVICES=$X\n", pamEnvSyntax,
			[]a{{Line: 1, Text: "CUDA_VISIBLE_DEVICES=$X", Value: "$X", Static: true, Sole: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findAssignments([]byte(tt.content), cvd, tt.syn)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findAssignments (-want +got):\n%s", diff)
			}
		})
	}
}

// A disabled line leaves a valid shell file that no longer sets the
// variable, even when it was the only command of a block.
func TestDisabledLineKeepsShellValid(t *testing.T) {
	needBash(t)
	dir := t.TempDir()
	for i, content := range []string{
		"export CUDA_VISIBLE_DEVICES=-1\n",
		"if true; then\n  export CUDA_VISIBLE_DEVICES=\"-1\" # cpu\nfi\n",
		"f() {\n\texport CUDA_VISIBLE_DEVICES=-1\n}\nf\n",
		"case x in\n  x) export CUDA_VISIBLE_DEVICES=-1;;\nesac\n",
	} {
		as := findAssignments([]byte(content), cvd, shSyntax)
		if len(as) != 1 {
			t.Fatalf("%q: %d assignments", content, len(as))
		}
		a := as[0]
		if !a.Sole {
			// "x) export ...;;" is a case arm: not a line doctor edits.
			if i != 3 {
				t.Errorf("%q: not sole", content)
			}
			continue
		}
		out, ok := replaceLine([]byte(content), a.Line, a.Text, disabledLine(a.Text, shSyntax))
		if !ok {
			t.Fatalf("%q: replaceLine failed", content)
		}
		f := filepath.Join(dir, "rc")
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := bash(t, dir, []string{"F=" + f, "PATH=" + os.Getenv("PATH")}, "-c", `. "$F" && printf %s "${CUDA_VISIBLE_DEVICES-unset}"`)
		if got != "unset" {
			t.Errorf("%q: after disabling, sourcing gives %q", content, got)
		}
	}
}

// Values with blanks, quotes, $(), backquotes and newlines are written
// single-quoted: sourcing the file gives the value back, runs nothing.
func TestExportsNeverExpand(t *testing.T) {
	needBash(t)
	dir := t.TempDir()
	values := []string{
		"", "plain", "with space", `it's "quoted"`, "$(touch pwned)", "`touch pwned2`", "line1\nline2",
		`back\slash`, "$HOME ${X:-y}", "ünïcødé", "'", "''", "-1",
	}
	for _, v := range values {
		v := v
		f := filepath.Join(dir, "vars.sh")
		if err := os.WriteFile(f, []byte(exports([]string{"X_VALUE"}, map[string]*string{"X_VALUE": &v})), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := bash(t, dir, []string{"F=" + f, "PATH=" + os.Getenv("PATH")}, "-c", `. "$F" && printf %s "$X_VALUE"`)
		if got != v {
			t.Errorf("value %q came back as %q", v, got)
		}
	}
	for _, p := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("a value was executed: %s exists", p)
		}
	}
}

func TestReplaceLine(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		old, new string
		want     string
		ok       bool
	}{
		{"in place", "a\nb\nc\n", 2, "b", "B", "a\nB\nc\n", true},
		{"CRLF kept", "a\r\nb\r\n", 2, "b", "B", "a\r\nB\r\n", true},
		{"no final newline", "a\nb", 2, "b", "B", "a\nB", true},
		{"moved", "x\na\nb\n", 2, "b", "B", "x\na\nB\n", true},
		{"gone", "a\n", 1, "b", "B", "", false},
		{"ambiguous after a move", "b\nx\nb\n", 2, "b", "B", "", false},
	}
	for _, tt := range tests {
		got, ok := replaceLine([]byte(tt.in), tt.n, tt.old, tt.new)
		if ok != tt.ok || ok && string(got) != tt.want {
			t.Errorf("%s: got %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUpsertBlock(t *testing.T) {
	got := upsertBlock([]byte("a\nb"), "x", "export X='1'")
	want := "a\nb\n# >>> doctor --fix x >>>\nexport X='1'\n# <<< doctor --fix x <<<\n"
	if string(got) != want {
		t.Fatalf("append:\n%q\nwant\n%q", got, want)
	}
	if again := upsertBlock(got, "x", "export X='1'\n"); string(again) != want {
		t.Errorf("not idempotent:\n%q", again)
	}
	got = upsertBlock([]byte(want+"tail\n"), "x", "export X='2'")
	if string(got) != "a\nb\n# >>> doctor --fix x >>>\nexport X='2'\n# <<< doctor --fix x <<<\ntail\n" {
		t.Errorf("replace: %q", got)
	}
	if string(upsertBlock(nil, "x", "y")) != "# >>> doctor --fix x >>>\ny\n# <<< doctor --fix x <<<\n" {
		t.Error("empty file")
	}
}

func TestDisplayArgv(t *testing.T) {
	got := displayArgv([]string{"/usr/bin/python3", "-m", "pip", "install", "tensorflow[and-cuda]==2.20.0", "a b", "it's", "x\ny", "\x1b[2J"})
	want := `/usr/bin/python3 -m pip install 'tensorflow[and-cuda]==2.20.0' 'a b' 'it'\''s' $'x\ny' $'\x1b[2J'`
	if got != want {
		t.Errorf("displayArgv:\n got %s\nwant %s", got, want)
	}
	if s := sanitize("ok\x1b[31mred\ttab"); s != `ok\x1b[31mred`+"\ttab" {
		t.Errorf("sanitize: %q", s)
	}
}

// FuzzFindAssignments: any file content, no panic; every assignment names
// a real line, and a line reported as sole and static can be disabled.
func FuzzFindAssignments(f *testing.F) {
	for _, s := range []string{
		"export CUDA_VISIBLE_DEVICES=-1\n", "CUDA_VISIBLE_DEVICES=\"a b\" # x\n", "cat <<-'E'\n\tCUDA_VISIBLE_DEVICES=1\n\tE\n",
		"CUDA_VISIBLE_DEVICES='", "x \\\nCUDA_VISIBLE_DEVICES=1", "export CUDA_VISIBLE_DEVICES=\\", "\r\n\r\nCUDA_VISIBLE_DEVICES=$(x)\r\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, content string, pam bool) {
		syn := shSyntax
		if pam {
			syn = pamEnvSyntax
		}
		lines := splitLines([]byte(content))
		for _, a := range findAssignments([]byte(content), cvd, syn) {
			if a.Line < 1 || a.Line > len(lines) {
				t.Fatalf("line %d of %d", a.Line, len(lines))
			}
			if l, _ := trimEOL(lines[a.Line-1]); l != a.Text {
				t.Fatalf("line %d is %q, reported %q", a.Line, l, a.Text)
			}
			if a.Sole {
				if _, ok := replaceLine([]byte(content), a.Line, a.Text, disabledLine(a.Text, syn)); !ok && strings.Count(content, a.Text) == 1 {
					t.Fatalf("cannot disable line %d", a.Line)
				}
			}
		}
	})
}

// FuzzShQuote: doctor's own reading of a shell word gives back any value
// it quoted, as a static value.
func FuzzShQuote(f *testing.F) {
	for _, s := range []string{"", "a b", "it's", "$(x)", "`x`", "a\nb", `\`, "'\"'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := shQuote(s)
		v, static, n, ok := shellWord(q)
		if !ok || !static || n != len(q) || v != s {
			t.Fatalf("shellWord(shQuote(%q)) = %q, %v, %d/%d, %v", s, v, static, n, len(q), ok)
		}
	})
}
