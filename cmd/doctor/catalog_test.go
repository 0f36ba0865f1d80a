package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

// emittedFixes walks what doctor can emit: every check over every recorded
// snapshot in testdata, every fix explain attaches to a cause, and every
// fix of every explained test log. Watch's verdicts are walked in package
// watch (TestAnalyze), which checks each against the catalog the same way.
func emittedFixes(t *testing.T) map[string][]checks.Fix {
	t.Helper()
	out := map[string][]checks.Fix{}
	snaps, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "snapshot.json"))
	if err != nil || len(snaps) < 20 {
		t.Fatalf("recorded snapshots: %d, %v", len(snaps), err)
	}
	for _, p := range snaps {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := host.ReadSnapshot(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		r, err := rules.Evaluate(s, rules.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range r.Findings {
			out[p] = append(out[p], fd.Fixes...)
		}
	}
	out["causes.json"] = rules.ExplainFixes()
	logs, _ := filepath.Glob(filepath.Join("..", "..", "rules", "testdata", "explain", "logs", "*", "*"))
	if len(logs) < 50 {
		t.Fatalf("explain test logs: %d", len(logs))
	}
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range rules.ExplainText(string(b)).Findings {
			out[p] = append(out[p], fd.Fixes...)
		}
	}
	return out
}

// TestEveryEmittedFixIsInTheCatalog: every fix any package emits has a
// catalog ID, at least the catalog's risk and needs-root, and only
// declared parameters of the declared kinds; `doctor fix` accepts each
// ID.
func TestEveryEmittedFixIsInTheCatalog(t *testing.T) {
	ids := map[string]bool{}
	for where, list := range emittedFixes(t) {
		for _, fx := range list {
			ids[fx.ID] = true
			check := checks.CheckFix
			if !strings.HasSuffix(where, "snapshot.json") {
				check = checks.CheckPrinted // explain prints its fixes; nothing applies them
			}
			if err := check(fx); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
	if len(ids) < 25 {
		t.Fatalf("only %d fix IDs emitted: the walk is broken", len(ids))
	}
	// One `doctor fix` run names every catalog ID: none is unknown.
	e := newFixEnv(t)
	var all []string
	for _, s := range checks.FixCatalog() {
		all = append(all, s.ID)
	}
	sort.Strings(all)
	code, out, errOut := doctor(t, false, "", append([]string{"fix", "--dry-run", "--root", e.root, "--quick"}, all...)...)
	if code == exitUsage || strings.Contains(out+errOut, "unknown fix") {
		t.Fatalf("doctor fix refused a catalog ID: exit %d\n%s\n%s", code, out, errOut)
	}
	for id := range ids {
		if !strings.Contains(out, id) {
			t.Errorf("doctor fix --dry-run does not mention %s", id)
		}
	}
}
