package watch

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldenpkg "github.com/tfdoctor/doctor/internal/golden"
	"github.com/tfdoctor/doctor/internal/metrics"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Check(t, filepath.Join("testdata", name), got)
}

// starved is the acceptance's second job as canned samples: small GPU
// steps fed by a single-threaded preprocessing loop.
func starved() *Series {
	s := canned(jobPID, 15, func(i int) tick {
		return tick{util: []int{9, 14, 7, 12, 10}[i%5], procs: []GPUProc{procSM(jobPID, []int{9, 14, 7, 12, 10}[i%5])}, procUtil: true,
			memMiB: 5120, cpu: 103, busiest: 99.2, threads: 24, events: 0, readBps: 1e5}
	})
	s.SelfCPUPercent = fp(0.21)
	s.SetupMS = 35.5
	return s
}

func TestReportGolden(t *testing.T) {
	tool := host.Tool{Name: "doctor", Version: "0.1.0-test"}
	for _, tt := range []struct {
		name string
		s    *Series
	}{{"starved", starved()}, {"cpu-only", canned(jobPID, 5, func(int) tick { return tick{cpu: 100, busiest: 99} })}} {
		r := Report(tt.s, tool)
		var text, js, md, prom bytes.Buffer
		to := TextOptions(r)
		to.Verbose = true
		if err := report.Text(&text, r, to); err != nil {
			t.Fatal(err)
		}
		if err := report.JSON(&js, r); err != nil {
			t.Fatal(err)
		}
		if err := report.Markdown(&md, report.Redact(r, report.Identity{})); err != nil {
			t.Fatal(err)
		}
		if err := metrics.Write(&prom, report.PrometheusCollector(r, time.Time{}), PrometheusCollector(tt.s)); err != nil {
			t.Fatal(err)
		}
		golden(t, tt.name+".txt", text.Bytes())
		golden(t, tt.name+".json", js.Bytes())
		golden(t, tt.name+".md", md.Bytes())
		golden(t, tt.name+".prom", prom.Bytes())

		// The JSON is doctor.report/v1 and reads back.
		var back rules.Report
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Schema != rules.ReportSchema {
			t.Errorf("%s: JSON does not read back: %v", tt.name, err)
		}
		// Every metric has HELP and TYPE once.
		seen := map[string]int{}
		for _, line := range strings.Split(prom.String(), "\n") {
			if strings.HasPrefix(line, "# TYPE ") {
				seen[strings.Fields(line)[2]]++
			}
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("%s: metric %s declared %d times", tt.name, name, n)
			}
		}
	}
}

func TestLiveGolden(t *testing.T) {
	s := starved()
	var plain, tty bytes.Buffer
	p, l := NewLive(&plain, false), NewLive(&tty, true)
	for _, smp := range s.Samples[:3] {
		p.Update(s, smp)
		l.Update(s, smp)
	}
	golden(t, "live-plain.txt", plain.Bytes())
	golden(t, "live-tty.txt", tty.Bytes())
	// On a terminal the view is redrawn in place: back up over its lines.
	if n := strings.Count(tty.String(), "\033[2A"); n != 2 {
		t.Errorf("terminal view moved up %d times, want 2 (one GPU line, one job line, redrawn twice)", n)
	}
	if strings.Contains(plain.String(), "\033") {
		t.Error("plain lines carry escape sequences")
	}
}
