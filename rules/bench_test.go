package rules_test

import (
	"os"
	"testing"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

// BenchmarkEvaluate runs every check over a recorded snapshot.
func BenchmarkEvaluate(b *testing.B) {
	f, err := os.Open("../testdata/scenarios/exclusive-process-held/snapshot.json")
	if err != nil {
		b.Fatal(err)
	}
	s, err := host.ReadSnapshot(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rules.Evaluate(s, rules.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
