package fixes

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/internal/testenv"
	"github.com/tfdoctor/doctor/rules"
)

// env is one test machine: a --root tree, a home, a state folder, all
// temporary.
type env struct {
	t     *testing.T
	dir   string
	root  string
	home  string
	state string
	m     *Machine
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, root: filepath.Join(dir, "root"), home: filepath.Join(dir, "home"), state: filepath.Join(dir, "state")}
	for _, d := range []string{e.root, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.m = &Machine{
		Root: e.root,
		Env: map[string]string{
			"HOME": e.home, "XDG_STATE_HOME": e.state, "SHELL": "/bin/bash",
			"PATH": os.Getenv("PATH"), "LANG": "C.UTF-8",
		},
		IsRoot: func() bool { return true },
	}
	return e
}

func (e *env) write(path, content string) string {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func (e *env) read(path string) string {
	e.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// tree returns every file under dirs (path → mode and content), the state
// folder left out: "byte-identical" compares these.
func (e *env) tree(dirs ...string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if strings.HasPrefix(p, e.state) {
				return filepath.SkipDir
			}
			info, err := de.Info()
			if err != nil {
				return nil
			}
			if de.IsDir() {
				out[p+"/"] = info.Mode().String()
				return nil
			}
			b, _ := os.ReadFile(p)
			out[p] = info.Mode().String() + "\x00" + string(b)
			return nil
		})
	}
	return out
}

func sameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s is gone", what, k)
		} else if g != v {
			t.Errorf("%s: %s differs:\n want %q\n got  %q", what, k, v, g)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is new", what, k)
		}
	}
}

// session returns a session over e's machine with answers on its input.
func (e *env) session(answers string, tty, yes bool, named ...string) (*Session, *bytes.Buffer) {
	var out bytes.Buffer
	return &Session{M: e.m, W: &out, In: strings.NewReader(answers), TTY: tty, Yes: yes, Named: named,
		NoLive: "", Grace: DefaultGrace, Self: "doctor"}, &out
}

// report builds a report with one failing finding per fix, none of them
// explained by another.
func report(fixes ...checks.Fix) *rules.Report {
	var fs []checks.Finding
	for i, fx := range fixes {
		fs = append(fs, checks.Finding{ID: fmt.Sprintf("test.%d.%s", i, fx.ID), Check: "test", Cause: "healthy", Severity: checks.SevError,
			Link: checks.LinkEnvironment, Title: "needs " + fx.ID, Evidence: map[string]any{}, Fixes: []checks.Fix{fx}})
	}
	r := rules.Assemble(fs)
	for i := range r.Findings {
		r.Findings[i].BlockedBy = nil
	}
	return r
}

// plan plans the report's fixes on e's machine.
func (e *env) plan(r *rules.Report, names ...string) []*Plan {
	e.t.Helper()
	plans, _, err := Build(e.m, r, names)
	if err != nil {
		e.t.Fatal(err)
	}
	return plans
}

// apply plans and applies with --yes, no terminal.
func (e *env) apply(r *rules.Report, names ...string) (*Result, string) {
	e.t.Helper()
	plans := e.plan(r, names...)
	s, out := e.session("", false, true, names...)
	res := s.Run(context.Background(), plans)
	return res, out.String()
}

// bash runs a bash script (a constant of the test) with env, in dir.
func bash(t *testing.T, dir string, env []string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command("bash", args...)
	cmd.Dir = dir
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash %q: %v\n%s", args, err, e.String())
	}
	return o.String(), e.String()
}

func needBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		testenv.Missing(t, "bash not installed")
	}
}
