package rules

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// labelledCase is one line of testdata/explain/cases.jsonl: a real report
// from a public issue thread with the root cause its thread settled on.
type labelledCase struct {
	Log        string `json:"log"`
	Context    string `json:"context"`
	RootCause  string `json:"root_cause"`
	Resolution string `json:"resolution"`
	Evidence   string `json:"evidence"`
}

func readCases(t *testing.T, path string) []labelledCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c labelledCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// topCause is the cause of the report's root cause ("none" without one).
func topCause(r *Report) string {
	if r.RootCause == nil {
		return "none"
	}
	return r.RootCause.Cause
}

// TestLabelledCases scores explain on the labelled real-world logs (a copy
// of shared/testdata-logs/cases.jsonl): the root cause must equal the
// thread's label for at least 20 of the 22.
func TestLabelledCases(t *testing.T) {
	cases := readCases(t, "testdata/explain/cases.jsonl")
	const need = 20
	hits := 0
	for i, c := range cases {
		r := ExplainText(c.Log)
		got := topCause(r)
		if got == c.RootCause {
			hits++
			continue
		}
		t.Logf("case %d: want %s, got %s (%s)", i, c.RootCause, got, c.Context)
	}
	t.Logf("labelled cases: %d/%d root causes right", hits, len(cases))
	if hits < need {
		t.Errorf("only %d/%d labelled cases right, need %d", hits, len(cases), need)
	}
}
