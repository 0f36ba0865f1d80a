package rules

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// TestEveryRoleDeclared: every role a reasoner reads is declared by a
// shipped signature of its kind (else the reasoner never fires), and no
// reasoner names a signature by its ID.
func TestEveryRoleDeclared(t *testing.T) {
	l := mustLibrary()
	for name, r := range sigRoles {
		if r.doc == "" {
			t.Errorf("role %q: needs a doc", name)
		}
		if l.withRole(r) == nil {
			t.Errorf("role %q: no shipped signature declares it, so what reads it never fires", name)
		}
	}
	// The Go code names no signature ID: an ID in a string literal of
	// a non-test file is a reasoner that a rename would stop silently.
	files, _ := filepath.Glob("*.go")
	lit := regexp.MustCompile(`"([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
			if l.byID[m[1]] != nil {
				t.Errorf("%s names signature %s by its ID: declare a role on it instead (explain_roles.go)", f, m[1])
			}
		}
	}
}

// renamedLibrary returns the shipped signature files with every signature
// that declares a role renamed (kept in its ID family: kernel.*, smi.*,
// nvml.* say an NVIDIA driver is installed, showsNvidiaInstall), and the
// renaming.
func renamedLibrary(t *testing.T) (fstest.MapFS, map[string]string) {
	t.Helper()
	fsys := fstest.MapFS{}
	renamed := map[string]string{}
	entries, err := fs.ReadDir(signatureFS, "signatures")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := path.Join("signatures", e.Name())
		b, err := fs.ReadFile(signatureFS, name)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if e.Name() != "causes.json" {
			var sf sigFile
			if err := json.Unmarshal(b, &sf); err != nil {
				t.Fatal(err)
			}
			for _, s := range sf.Signatures {
				if len(s.Roles) == 0 {
					continue
				}
				to := s.ID + "_renamed"
				renamed[to] = s.ID
				old := `"id": "` + s.ID + `"`
				if strings.Count(text, old) != 1 {
					t.Fatalf("%s: %s is not written once", name, old)
				}
				text = strings.Replace(text, old, `"id": "`+to+`"`, 1)
			}
		}
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	return fsys, renamed
}

// TestRenamingASignatureKeepsBehaviour: the reasoners find the signatures
// they read by role, so renaming every signature that declares one changes
// no report but for the IDs (every unit log compared).
func TestRenamingASignatureKeepsBehaviour(t *testing.T) {
	fsys, renamed := renamedLibrary(t)
	if len(renamed) < 40 {
		t.Fatalf("only %d signatures declare a role", len(renamed))
	}
	lib, err := parseLibrary(fsys)
	if err != nil {
		t.Fatal(err)
	}
	ship := mustLibrary()
	var back []string
	for to, from := range renamed {
		back = append(back, to, from)
	}
	unrename := strings.NewReplacer(back...)
	report := func(l *library, text string) string {
		hits, extra := l.m.scan(text)
		r := explainHits(l, hits, extra, "test", time.Time{})
		r.TimingsMS = nil
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	seen := map[string]int{}
	for _, c := range logCases(t) {
		b, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		want := report(ship, string(b))
		got := report(lib, string(b))
		for to := range renamed {
			if strings.Contains(got, `"`+to+`"`) {
				seen[to]++
			}
		}
		if got = unrename.Replace(got); got != want {
			t.Errorf("%s: renaming the signatures that declare roles changes the report:\n got %s\nwant %s", c.path, got, want)
		}
	}
	// The comparison proves something only where the renamed signatures
	// and the reasoners that read them show in the reports.
	if len(seen) < len(renamed)*3/4 {
		t.Errorf("only %d of the %d renamed signatures show in a unit log's report", len(seen), len(renamed))
	}
	for _, reason := range []string{"explain.container_gpus_passed", "explain.error35_container_without_gpus", "explain.not_a_fault", "explain.gpu_memory_held", "explain.no_gpu_listed"} {
		found := false
		for _, c := range logCases(t) {
			b, _ := os.ReadFile(c.path)
			if strings.Contains(report(lib, string(b)), `"`+reason+`"`) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no unit log exercises %s under the renamed library", reason)
		}
	}
}

// TestLibraryRejectsBadRoles: a role the code does not know, a role on the
// wrong kind of signature, a role declared twice and a one-signature role
// on two signatures each fail the load with a message that says so.
func TestLibraryRejectsBadRoles(t *testing.T) {
	causes, err := os.ReadFile("signatures/causes.json")
	if err != nil {
		t.Fatal(err)
	}
	sig := func(id, extra string) string {
		return `{"id": "` + id + `", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["disk"], "patterns": ["disk full"], "sources": ["s"], "examples": ["the disk full"]` + extra + `}`
	}
	fact := func(id, extra string) string {
		return `{"id": "` + id + `", "kind": "fact", "title": "t", "doc": "d", "keywords": ["disk"], "patterns": ["disk full"], "examples": ["the disk full"]` + extra + `}`
	}
	for _, c := range []struct {
		name, sigs, want string
	}{
		{"unknown role", sig("x.a", `, "roles": ["no_such_role"]`), `x.a: unknown role "no_such_role"`},
		{"misspelt role", sig("x.a", `, "roles": ["out_of_memroy"]`), `unknown role "out_of_memroy" (the roles are listed in rules/explain_roles.go`},
		{"wrong kind", fact("x.a", `, "roles": ["out_of_memory"]`), `x.a: role "out_of_memory" is for finding signatures, this one is a fact`},
		{"declared twice", sig("x.a", `, "roles": ["xid", "xid"]`), `x.a: role "xid" declared twice`},
		{"one role on two", fact("x.a", `, "roles": ["tf_version_fact"]`) + `, ` + fact("x.b", `, "roles": ["tf_version_fact"]`), `role "tf_version_fact" is declared by x.a, x.b`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"signatures/causes.json": {Data: causes},
				"signatures/x.json":      {Data: []byte(`{"source": "test", "signatures": [` + c.sigs + `]}`)},
			}
			_, err := parseLibrary(fsys)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want an error with %q, got %v", c.want, err)
			}
		})
	}
	fsys := fstest.MapFS{
		"signatures/causes.json": {Data: causes},
		"signatures/x.json":      {Data: []byte(`{"source": "test", "signatures": [` + sig("x.a", `, "roles": ["out_of_memory", "xid"]`) + `, ` + fact("x.b", `, "roles": ["tf_version_fact"]`) + `]}`)},
	}
	l, err := parseLibrary(fsys)
	if err != nil {
		t.Fatalf("rejected good roles: %v", err)
	}
	if s := l.byID["x.a"]; !s.is(roleOOM) || !s.is(roleXid) || s.is(roleTFVersionFact) || l.withRole(roleTFVersionFact) != l.byID["x.b"] {
		t.Errorf("roles not resolved: x.a %v", s.roles)
	}
}
