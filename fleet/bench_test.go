package fleet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/fleet"
)

// BenchmarkRead10000 reads a fleet of 10,000 machines' reports (the real
// reports of the recorded machines, each under its own host name, about
// 18 KB each, in 100 folders) and summarises them. The target is under
// 2 s on the CI machine (2 cores):
//
//	go test ./fleet -run '^$' -bench Read10000 -benchtime 3x
func BenchmarkRead10000(b *testing.B) {
	const n = 10000
	snaps := recordedSnapshots(b)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var templates [][]byte
	for i, s := range snaps {
		templates = append(templates, reportJSON(b, s, fmt.Sprintf("tmpl-%03d", i), at))
	}
	// DOCTOR_FLEET_BENCH_DIR keeps the reports between runs (profiling).
	dir := os.Getenv("DOCTOR_FLEET_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "rack-00")); err == nil {
		n := 0
		filepath.WalkDir(dir, func(string, os.DirEntry, error) error { n++; return nil })
		b.Logf("reusing %s (%d entries)", dir, n)
		benchRead(b, dir, n-101)
		return
	}
	total := 0
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("rack-%02d", i%100))
		if i < 100 {
			if err := os.Mkdir(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		t := templates[i%len(templates)]
		// The same report under another host name (same length, so the
		// bytes stay a valid report).
		data := []byte(string(t))
		name := fmt.Sprintf("tmpl-%03d", i%len(templates))
		host := fmt.Sprintf("n%07d", i)
		data = []byte(replaceOnce(string(data), `"hostname": "`+name+`"`, `"hostname": "`+host+`"`))
		total += len(data)
		if err := os.WriteFile(filepath.Join(sub, host+".json"), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchRead(b, dir, n)
	// After the loop: ResetTimer deletes metrics reported before it.
	b.ReportMetric(float64(total)/n/1024, "KB/report")
}

func benchRead(b *testing.B, dir string, n int) {
	b.ResetTimer()
	for b.Loop() {
		s := fleet.Read([]string{dir})
		if s.Machines.Total != n || len(s.Unreadable) != 0 {
			b.Fatalf("machines %+v, unreadable %d", s.Machines, len(s.Unreadable))
		}
	}
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("hostname not found in the report: " + old)
}
