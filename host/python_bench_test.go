package host

import (
	"context"
	"testing"
)

// BenchmarkPythonCollector measures the python collector alone on this
// machine (the environment analysis doctor --quick pays for).
func BenchmarkPythonCollector(b *testing.B) {
	g := newGatherer(Options{Quick: true})
	for i := 0; i < b.N; i++ {
		if _, _, err := g.examinePython(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPythonCollectorSteps(t *testing.T) {
	g := newGatherer(Options{Quick: true})
	for i := 0; i < 3; i++ {
		_, l, err := g.examinePython(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v", l.TimingsMS)
	}
}
