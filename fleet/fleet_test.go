package fleet_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/fleet"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/golden"
	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
)

// TestMixedGolden: a folder of hand-made reports (healthy, warning, broken
// by two causes, an older report of a host, two redacted ones) and four
// files that are not reports, in every format.
func TestMixedGolden(t *testing.T) {
	s := fleet.Read([]string{"testdata/mixed", "testdata/missing.json"})
	if got := s.Machines; got != (fleet.Counts{Total: 8, Broken: 4, Warning: 1, Healthy: 3}) {
		t.Errorf("machines %+v", got)
	}
	if s.Reports != 9 || s.Superseded != 1 || s.Redacted != 2 {
		t.Errorf("reports %d, superseded %d, redacted %d", s.Reports, s.Superseded, s.Redacted)
	}
	var b bytes.Buffer
	if err := fleet.Text(&b, s, fleet.TextOptions{MaxHosts: 10}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/mixed.txt", b.Bytes())
	b.Reset()
	if err := fleet.Markdown(&b, s, fleet.TextOptions{MaxHosts: 10}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/mixed.md", b.Bytes())
	b.Reset()
	if err := fleet.JSON(&b, s); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/mixed.json", b.Bytes())

	// The JSON contract: doctor.fleet/v1 with machines, by_root_cause
	// ([{cause, count, hosts}]) and unreadable.
	var m struct {
		Schema      string
		Machines    map[string]int
		ByRootCause []struct {
			Cause string
			Count int
			Hosts []string
		} `json:"by_root_cause"`
		Unreadable []struct{ File, Error string }
	}
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Schema != "doctor.fleet/v1" || m.Machines["broken"] != 4 || len(m.ByRootCause) != 3 {
		t.Errorf("JSON: %+v", m)
	}
	if g := m.ByRootCause[0]; g.Cause != "driver_missing" || g.Count != 3 || strings.Join(g.Hosts, ",") != "<host>,gpu-04,gpu-05" {
		t.Errorf("first group %+v, want driver_missing on <host>, gpu-04, gpu-05", g)
	}
	bad := map[string]string{}
	for _, u := range m.Unreadable {
		bad[filepath.Base(u.File)] = u.Error
	}
	for file, why := range map[string]string{
		"truncated.json": "truncated JSON",
		"snapshot.json":  `schema "doctor.snapshot/v1", not doctor.report/v1`,
		"notes.json":     "not JSON",
		"empty.json":     "empty file",
		"missing.json":   "no such file or directory",
	} {
		if !strings.Contains(bad[file], why) {
			t.Errorf("unreadable %s: %q, want %q", file, bad[file], why)
		}
	}
	if len(bad) != 5 {
		t.Errorf("unreadable: %v (README is not a .json file and is not read)", bad)
	}
	// The newer report of gpu-06 counts, not the older healthy one.
	for _, mm := range s.List {
		if mm.Host == "gpu-06" && mm.Status != "error" {
			t.Errorf("gpu-06 counted with its older report: %+v", mm)
		}
	}
	if s.ExitCode() != 1 {
		t.Errorf("exit code %d, want 1", s.ExitCode())
	}
}

// TestDifferences: a fact is listed when one of its values is found only
// among healthy or only among broken machines, and not otherwise.
func TestDifferences(t *testing.T) {
	mk := func(host, status, driver, python string) fleet.Machine {
		return fleet.Machine{Host: host, Status: status, Facts: map[string]string{"driver": driver, "python": python, "cuda": "13.0"}}
	}
	s := fleet.Summarize([]fleet.Machine{
		mk("a", "ok", "580", "3.12"), mk("b", "warning", "580", "3.11"),
		mk("c", "error", "550", "3.12"), mk("d", "error", "580", "3.11"),
	}, nil)
	var facts []string
	for _, d := range s.Differences {
		facts = append(facts, d.Fact)
	}
	if strings.Join(facts, ",") != "driver" {
		t.Fatalf("differences in %v, want only driver (python and cuda are spread alike)", facts)
	}
	want := []fleet.ValueCount{{Value: "580", Healthy: 2, Broken: 1}, {Value: "550", Healthy: 0, Broken: 1}}
	if fmt.Sprint(s.Differences[0].Values) != fmt.Sprint(want) {
		t.Errorf("driver values %v, want %v", s.Differences[0].Values, want)
	}
	// All healthy or all broken: nothing to compare.
	s = fleet.Summarize([]fleet.Machine{mk("a", "error", "550", "3.12"), mk("b", "error", "580", "3.12")}, nil)
	if len(s.Differences) != 0 {
		t.Errorf("differences without healthy machines: %v", s.Differences)
	}
}

// TestHostileText: host names, causes and file names from reports cannot
// put control characters on a terminal or break a Markdown table.
func TestHostileText(t *testing.T) {
	s := fleet.Summarize([]fleet.Machine{
		{Host: "evil\x1b[2J\nhost|x`y", Status: "error", RootCause: "driver_missing\r", Facts: map[string]string{"gpu": "A\tB\xff"}},
		{Host: "good", Status: "ok", Facts: map[string]string{"gpu": "T4"}},
	}, []fleet.Unreadable{{File: "bad\x07.json", Error: "x"}})
	var b bytes.Buffer
	fleet.Text(&b, s, fleet.TextOptions{})
	fleet.Markdown(&b, s, fleet.TextOptions{})
	out := b.String()
	for _, c := range []string{"\x1b", "\r", "\x07", "\xff", "\t"} {
		if strings.Contains(out, c) {
			t.Errorf("output holds %q:\n%s", c, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "host|") || strings.HasPrefix(line, "| 1 |") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 5 {
			t.Errorf("a host name broke a line or a table row: %q", line)
		}
	}
}

// reportJSON evaluates a recorded snapshot as host name, written at t.
func reportJSON(t testing.TB, snap, name string, at time.Time) []byte {
	t.Helper()
	s, err := host.LoadSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	s.Platform.Hostname, s.CollectedAt = name, at
	r, err := rules.Evaluate(s, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Source = "snapshot"
	var b bytes.Buffer
	if err := report.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func recordedSnapshots(t testing.TB) []string {
	snaps, _ := filepath.Glob("../testdata/*/*/snapshot.json")
	sort.Strings(snaps)
	if len(snaps) < 30 {
		t.Fatalf("only %d recorded snapshots", len(snaps))
	}
	return snaps
}

// TestThirtyRealReports: the reports doctor writes for 30 recorded
// machines (every lower-link scenario, the Python environments, the H200)
// plus one truncated file: grouped by root cause as the reports say, the
// broken file named, nothing lost.
func TestThirtyRealReports(t *testing.T) {
	dir := t.TempDir()
	snaps := recordedSnapshots(t)[:30]
	wantStatus := map[string]int{}
	wantCause := map[string][]string{}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, snap := range snaps {
		name := fmt.Sprintf("node-%02d", i+1)
		b := reportJSON(t, snap, name, at)
		var r rules.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		wantStatus[r.Status]++
		if r.RootCause != nil {
			wantCause[r.RootCause.Cause] = append(wantCause[r.RootCause.Cause], name)
		}
		sub := filepath.Join(dir, fmt.Sprintf("rack%d", i%3))
		os.MkdirAll(sub, 0o755)
		if err := os.WriteFile(filepath.Join(sub, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			os.WriteFile(filepath.Join(dir, "broken.json"), b[:len(b)/2], 0o644)
		}
	}
	s := fleet.Read([]string{dir})
	if s.Machines.Total != 30 || s.Machines.Broken != wantStatus["error"] || s.Machines.Warning != wantStatus["warning"] || s.Machines.Healthy != wantStatus["ok"] {
		t.Errorf("machines %+v, reports say %v", s.Machines, wantStatus)
	}
	if wantStatus["error"] == 0 || wantStatus["ok"] == 0 {
		t.Fatalf("the 30 machines are not mixed: %v", wantStatus)
	}
	got := map[string][]string{}
	for _, g := range s.ByRootCause {
		got[g.Cause] = g.Hosts
		if g.Count != len(g.Hosts) {
			t.Errorf("%s: count %d, %d hosts", g.Cause, g.Count, len(g.Hosts))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(wantCause) {
		t.Errorf("by root cause:\n got %v\nwant %v", got, wantCause)
	}
	if len(s.Unreadable) != 1 || filepath.Base(s.Unreadable[0].File) != "broken.json" || s.Unreadable[0].Error != "truncated JSON" {
		t.Errorf("unreadable %+v", s.Unreadable)
	}
	var b bytes.Buffer
	fleet.Text(&b, s, fleet.TextOptions{MaxHosts: 10})
	if !strings.Contains(b.String(), "broken.json: truncated JSON") || !strings.HasPrefix(b.String(), fmt.Sprintf("doctor fleet: %d of 30 machines broken", wantStatus["error"])) {
		t.Errorf("text:\n%s", b.String())
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":              "empty file",
		"  \n":          "empty file",
		"[1,2]":         "not a doctor report",
		`{"schema": 5}`: "not a doctor report",
		`{}`:            "no schema",
		`{"schema": "doctor.report/v1", "status": "fine"}`: `status "fine"`,
		`{"schema": "doctor.report/v1"`:                    "truncated JSON",
		"\x00\x01":                                         "not JSON",
	} {
		_, err := fleet.Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want %q", in, err, want)
		}
	}
	m, err := fleet.Parse([]byte(`{"schema": "doctor.report/v1", "status": "error", "root_cause": {"id": "x", "cause": "driver_missing"}}`))
	if err != nil || m.RootCause != "driver_missing" || len(m.Causes) != 1 || m.Host != "" {
		t.Errorf("a report without summary or causes: %+v, %v", m, err)
	}
}

func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("testdata/mixed/rack2/gpu-06.json")
	f.Add(b)
	f.Add([]byte(`{"schema": "doctor.report/v1", "status": "ok"}`))
	f.Add([]byte(`{"schema": "doctor.report/v1", "status": "ok", "findings": [{"t": "a \\\" ]}"}], "x\u0073": 1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := fleet.Parse(b)
		// The fast reader agrees with encoding/json on every valid report.
		var full struct {
			Schema, Status string
			RootCause      *struct{ Cause string } `json:"root_cause"`
		}
		if json.Valid(b) && json.Unmarshal(b, &full) == nil && full.Schema == "doctor.report/v1" &&
			(full.Status == "ok" || full.Status == "warning" || full.Status == "error") {
			if err != nil {
				// Only a field of the wrong type may still refuse it.
				if !strings.Contains(err.Error(), "not a doctor report (") {
					t.Fatalf("valid report refused: %v\n%q", err, b)
				}
				return
			}
			if m.Status != full.Status || (full.RootCause != nil) != (m.RootCause != "" || full.RootCause != nil && full.RootCause.Cause == "") {
				t.Fatalf("fast reader: %+v, encoding/json: %+v", m, full)
			}
		}
		if err != nil {
			return
		}
		s := fleet.Summarize([]fleet.Machine{m}, nil)
		var out bytes.Buffer
		if err := fleet.Text(&out, s, fleet.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := fleet.JSON(&out, s); err != nil {
			t.Fatal(err)
		}
	})
}
