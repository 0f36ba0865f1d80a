package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	goldenpkg "github.com/tfdoctor/doctor/internal/golden"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
)

func load(t *testing.T, scenario string) (*rules.Report, *host.Snapshot) {
	t.Helper()
	s, err := host.LoadSnapshot(filepath.Join("../testdata/scenarios", scenario, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := rules.Evaluate(s, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Source = "snapshot"
	return r, s
}

func identity(s *host.Snapshot) report.Identity {
	return report.Identity{User: s.Platform.User, Home: s.Platform.Home, Hostname: s.Platform.Hostname}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Check(t, filepath.Join("testdata", name), got)
}

var goldenScenarios = []string{"healthy-linux", "no-driver", "gpu-memory-other-process", "xid-79", "healthy-wsl2", "throttled-disk-full"}

func TestGolden(t *testing.T) {
	for _, sc := range goldenScenarios {
		r, s := load(t, sc)
		var b bytes.Buffer
		if err := report.Text(&b, r, report.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		golden(t, sc+".txt", b.Bytes())

		b.Reset()
		if err := report.Text(&b, r, report.TextOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
		golden(t, sc+".verbose.txt", b.Bytes())

		b.Reset()
		if err := report.JSON(&b, r); err != nil {
			t.Fatal(err)
		}
		golden(t, sc+".json", b.Bytes())

		b.Reset()
		if err := report.Markdown(&b, report.Redact(r, identity(s))); err != nil {
			t.Fatal(err)
		}
		golden(t, sc+".md", b.Bytes())

		b.Reset()
		if err := report.Prometheus(&b, r); err != nil {
			t.Fatal(err)
		}
		golden(t, sc+".prom", b.Bytes())
	}
}

// TestJSONContract checks the doctor.report/v1 shape that scripts rely on.
func TestJSONContract(t *testing.T) {
	for _, sc := range []string{"no-driver", "healthy-linux", "cuda-visible-devices-minus-1"} {
		r, _ := load(t, sc)
		var b bytes.Buffer
		if err := report.JSON(&b, r); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"schema", "tool", "status", "root_cause", "findings", "verification", "timings_ms"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: key %q missing", sc, k)
			}
		}
		if m["schema"] != "doctor.report/v1" {
			t.Errorf("%s: schema %v", sc, m["schema"])
		}
		status := m["status"].(string)
		if status != "ok" && status != "warning" && status != "error" {
			t.Errorf("%s: status %q", sc, status)
		}
		if rc, ok := m["root_cause"].(map[string]any); ok {
			for _, k := range []string{"id", "cause", "title", "fix"} {
				if _, ok := rc[k]; !ok {
					t.Errorf("%s: root_cause.%s missing", sc, k)
				}
			}
			if !knowledge.IsCause(rc["cause"].(string)) {
				t.Errorf("%s: root cause label %v", sc, rc["cause"])
			}
		} else if m["root_cause"] != nil || status == "error" {
			t.Errorf("%s: root_cause %v with status %s", sc, m["root_cause"], status)
		}
		for _, fi := range m["findings"].([]any) {
			f := fi.(map[string]any)
			for _, k := range []string{"id", "cause", "severity", "link", "title", "detail", "evidence", "blocked_by", "fixes"} {
				if _, ok := f[k]; !ok {
					t.Errorf("%s: finding %v lacks %q", sc, f["id"], k)
				}
			}
			switch f["severity"] {
			case "error", "warning", "info", "ok":
			default:
				t.Errorf("%s: severity %v", sc, f["severity"])
			}
			for _, xi := range f["fixes"].([]any) {
				x := xi.(map[string]any)
				switch x["risk"] {
				case "safe", "moderate", "dangerous":
				default:
					t.Errorf("%s: fix risk %v", sc, x["risk"])
				}
				if _, ok := x["steps"].([]any); !ok {
					t.Errorf("%s: fix %v steps is not a list", sc, x["id"])
				}
				if _, ok := x["needs_root"].(bool); !ok {
					t.Errorf("%s: fix %v needs_root is not a bool", sc, x["id"])
				}
			}
		}
	}
}

// TestMarkdownRedacted: no scenario's Markdown names the user, the host, a
// home folder, a GPU UUID or a serial number.
func TestMarkdownRedacted(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/scenarios/*")
	for _, d := range dirs {
		sc := filepath.Base(d)
		r, s := load(t, sc)
		var b bytes.Buffer
		if err := report.Markdown(&b, report.Redact(r, identity(s))); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		leaks := []string{s.Platform.Hostname, "/home/" + s.Platform.User, "bob"}
		if s.Platform.User != "" && s.Platform.User != "root" {
			leaks = append(leaks, s.Platform.User)
		}
		for _, g := range s.NVML.GPUs {
			leaks = append(leaks, g.UUID)
			if g.Serial != "" {
				leaks = append(leaks, g.Serial)
			}
		}
		for _, l := range leaks {
			if l != "" && strings.Contains(md, l) {
				t.Errorf("%s: Markdown contains %q", sc, l)
			}
		}
	}
}

func TestRedactKeepsStructure(t *testing.T) {
	r, s := load(t, "exclusive-process-held")
	red := report.Redact(r, identity(s))
	if len(red.Findings) != len(r.Findings) || red.Status != r.Status || red.RootCause.Cause != r.RootCause.Cause {
		t.Fatal("redaction changed the report's structure")
	}
	if r.Summary.Hostname == "<host>" {
		t.Fatal("redaction modified the original report")
	}
	if red.Summary.Hostname != "<host>" {
		t.Errorf("hostname not redacted: %q", red.Summary.Hostname)
	}
}
