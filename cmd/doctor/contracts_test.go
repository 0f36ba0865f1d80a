package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/knowledge"
)

// These tests hold docs/CONTRACTS.md and the README to the code: what
// they promise scripts must be what doctor does.

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the part of a Markdown document under heading, up to the
// next heading of the same level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no section %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	level := heading[:strings.Index(heading, " ")+1]
	if j := strings.Index(rest, "\n"+level); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func TestReadmeGoVersionIsGoMod(t *testing.T) {
	mod := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	readme := regexp.MustCompile(`You need Go \((\S+) or newer`).FindStringSubmatch(readRepoFile(t, "README.md"))
	if mod == nil || readme == nil || mod[1] != readme[1] {
		t.Errorf("go.mod requires go %v; README says %v", mod, readme)
	}
}

// TestDocsAreInTheRepository: the README points at documents the
// repository has, never at files outside it.
func TestDocsAreInTheRepository(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	if strings.Contains(readme, "shared/") {
		t.Error("README points at shared/, which is not in the repository")
	}
	for _, m := range regexp.MustCompile(`docs/[A-Z_]+\.md`).FindAllString(readme, -1) {
		if _, err := os.Stat(filepath.Join("..", "..", m)); err != nil {
			t.Errorf("README names %s: %v", m, err)
		}
	}
}

func TestContractExitCodes(t *testing.T) {
	sec := section(t, readRepoFile(t, "docs/CONTRACTS.md"), "## Exit codes")
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\| (\d) \|`).FindAllStringSubmatch(sec, -1) {
		got = append(got, m[1])
	}
	if strings.Join(got, ",") != "0,1,2,3" || exitOK != 0 || exitFindings != 1 || exitUsage != 2 || exitInternal != 3 {
		t.Errorf("documented exit codes %v", got)
	}
}

// TestContractCauseLabels: every label the contract lists exists (labels
// are never removed), and every label doctor can report is listed.
func TestContractCauseLabels(t *testing.T) {
	sec := section(t, readRepoFile(t, "docs/CONTRACTS.md"), "## Cause labels")
	sec = sec[strings.Index(sec, "\n\n"):] // past the introduction
	doc := map[string]bool{}
	for _, w := range regexp.MustCompile(`\b[a-z0-9]+(?:_[a-z0-9]+)+\b|\bhealthy\b`).FindAllString(sec, -1) {
		doc[w] = true
	}
	code := map[string]bool{}
	for _, c := range knowledge.Causes {
		code[c.Label] = true
		if !doc[c.Label] {
			t.Errorf("docs/CONTRACTS.md does not list the cause label %s", c.Label)
		}
	}
	for w := range doc {
		if !code[w] {
			t.Errorf("docs/CONTRACTS.md lists %s, which doctor does not know", w)
		}
	}
}

// jsonKeys collects the keys of v at the paths scripts read: the top
// level, findings[], findings[].fixes[], root_cause, causes[].
func jsonKeys(v map[string]any, into map[string]bool) {
	for k, x := range v {
		into[k] = true
		switch k {
		case "findings", "causes":
			arr, _ := x.([]any)
			for _, e := range arr {
				f, _ := e.(map[string]any)
				for fk, fx := range f {
					into[k+"[]."+fk] = true
					if fk == "fixes" {
						fixes, _ := fx.([]any)
						for _, fe := range fixes {
							m, _ := fe.(map[string]any)
							for xk := range m {
								into["fixes[]."+xk] = true
							}
						}
					}
				}
			}
		case "root_cause":
			if m, ok := x.(map[string]any); ok {
				for rk := range m {
					into[k+"."+rk] = true
				}
			}
		}
	}
}

// TestContractReportFields: every field doctor writes in a report is in
// the documented example of doctor.report/v1.
func TestContractReportFields(t *testing.T) {
	doc := readRepoFile(t, "docs/CONTRACTS.md")
	sec := section(t, doc, "## JSON report: `doctor.report/v1`")
	i := strings.Index(sec, "```json\n")
	j := strings.Index(sec[i+8:], "```")
	var example map[string]any
	if err := json.Unmarshal([]byte(sec[i+8:i+8+j]), &example); err != nil {
		t.Fatalf("the example is not JSON: %v", err)
	}
	documented := map[string]bool{}
	jsonKeys(example, documented)

	produced := map[string]bool{}
	runs := [][]string{
		{"--from", scenarioSnap("no-driver"), "--format", "json"},
		{"--from", scenarioSnap("cuda-visible-devices-minus-1"), "--format", "json"},
		{"--from", scenarioSnap("healthy-linux"), "--format", "json"},
		{"explain", "--format", "json", explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log"},
	}
	if snaps, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "snapshots", "*", "snapshot.json")); len(snaps) > 0 {
		runs = append(runs, []string{"--from", snaps[0], "--format", "json"})
	}
	for _, args := range runs {
		_, out, errOut := runDoctor(t, "", args...)
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, errOut)
		}
		jsonKeys(r, produced)
	}
	var missing []string
	for k := range produced {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("fields doctor writes that docs/CONTRACTS.md's example lacks: %v", missing)
	}
	// And every field is explained in the table below the example.
	table := sec[i+8+j:]
	for k := range documented {
		name := k[strings.LastIndexAny(k, ".")+1:]
		if !strings.Contains(table, "`"+name+"`") && !strings.Contains(table, "`"+k) {
			t.Errorf("docs/CONTRACTS.md's table does not explain %s", k)
		}
	}
}

// TestContractSnapshotFields: every top-level field of a snapshot, and of
// a collector's status, is in the documented table of doctor.snapshot/v1.
func TestContractSnapshotFields(t *testing.T) {
	sec := section(t, readRepoFile(t, "docs/CONTRACTS.md"), "## Snapshot: `doctor.snapshot/v1`")
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "snapshot.json"))
	tree := filepath.Join("..", "..", "testdata", "scenarios", "nouveau-loaded", "tree")
	_, live, errOut := runDoctor(t, "", "snapshot", "--root", tree, "--quick")
	if live == "" {
		t.Fatalf("doctor snapshot: %s", errOut)
	}
	docs := []string{live}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	seen := map[string]bool{}
	for _, d := range docs {
		var s map[string]json.RawMessage
		if err := json.Unmarshal([]byte(d), &s); err != nil {
			continue // a deliberately broken snapshot
		}
		for k := range s {
			seen[k] = true
		}
		var cs map[string]map[string]any
		_ = json.Unmarshal(s["collectors"], &cs)
		for _, c := range cs {
			for k := range c {
				seen[k] = true
			}
		}
	}
	for k := range seen {
		if !strings.Contains(sec, "`"+k+"`") {
			t.Errorf("docs/CONTRACTS.md does not document the snapshot field %s", k)
		}
	}
}

// TestReadmeNamesEveryFlag: every flag of every command is in the README
// (hidden commands aside).
func TestReadmeNamesEveryFlag(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	app := newApp(NewFactory(&iostreams.IOStreams{}))
	check := func(where string, flags []cli.Flag) {
		for _, fl := range flags {
			name := fl.Names()[0]
			if name == "help" {
				continue
			}
			if !strings.Contains(readme, "--"+name) {
				t.Errorf("README does not name %s's flag --%s", where, name)
			}
		}
	}
	check("doctor", app.Flags)
	for _, c := range app.Commands {
		if !c.Hidden {
			check("doctor "+c.Name, c.Flags)
		}
	}
}
