package main

import (
	"go/build"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The house has no import running back up (DESIGN.md): cmd -> report,
// fixes, verify, watch, fleet -> rules -> checks -> host -> knowledge, and
// internal/* helpers import none of doctor's own packages above them.
// watch renders with report's text options (same level, one way only).
func TestImportsRunOneWay(t *testing.T) {
	const mod = "github.com/tfdoctor/doctor/"
	rank := map[string]int{
		"knowledge": 0, "host": 1, "checks": 2, "rules": 3,
		"report": 4, "fixes": 4, "verify": 4, "watch": 4, "fleet": 4, "cmd/doctor": 6,
	}
	allowed := map[string]bool{"watch->report": true}
	pkgs, _ := filepath.Glob(filepath.Join("..", "..", "internal", "*"))
	for _, p := range pkgs {
		rank["internal/"+filepath.Base(p)] = -1 // helpers: below everything
	}
	var names []string
	for n := range rank {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		bp, err := build.ImportDir(filepath.Join("..", "..", name), 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue
			}
			t.Fatalf("%s: %v", name, err)
		}
		for _, imp := range bp.Imports { // non-test files only
			dep, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			r, known := rank[dep]
			if !known {
				t.Errorf("%s imports %s, which has no place in the layers (add it here)", name, dep)
				continue
			}
			if rank[name] == -1 && r != -1 {
				t.Errorf("internal helper %s imports doctor's %s", name, dep)
			} else if r >= rank[name] && rank[name] != -1 && !allowed[name+"->"+dep] {
				t.Errorf("%s imports %s: an import running up or sideways", name, dep)
			}
		}
	}
}
