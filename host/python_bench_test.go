package host

import (
	"context"
	"sort"
	"testing"
)

// BenchmarkPythonCollector measures the python collector alone on this
// machine: the environment analysis doctor --quick pays for. Each step's
// time is reported as a metric (ms/op).
func BenchmarkPythonCollector(b *testing.B) {
	g := newGatherer(Options{Quick: true})
	sum := map[string]float64{}
	for i := 0; i < b.N; i++ {
		_, l, err := g.examinePython(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for k, v := range l.TimingsMS {
			sum[k] += v
		}
	}
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.ReportMetric(sum[k]/float64(b.N), k+"-ms/op")
	}
}
