package host

import (
	"context"
	"testing"
	"time"
)

// BenchmarkGatherLive gathers this machine as `doctor --quick` does, with
// the real NVML library (absent here: the missing-library path).
func BenchmarkGatherLive(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := Gather(context.Background(), Options{GPU: NVMLSource(), Quick: true, Timeout: 10 * time.Second})
		if s.Platform.Kernel == "" {
			b.Fatal("no kernel read")
		}
	}
}

// BenchmarkGatherTree gathers a recorded machine tree (file collectors only).
func BenchmarkGatherTree(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Gather(context.Background(), Options{Root: "../testdata/scenarios/healthy-linux/tree", Environ: []string{"PATH=/usr/bin"}, Quick: true})
	}
}
