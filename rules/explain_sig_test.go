package rules

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/knowledge"
)

// TestShippedSignatures parses every shipped signature file as the binary
// does: every pattern compiles, every cause label and fix ID exists, every
// example line matches its own signature through the keyword filter.
func TestShippedSignatures(t *testing.T) {
	l, err := parseLibrary(signatureFS)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, s := range l.sigs {
		kinds[s.Kind]++
		if s.Kind == KindFinding && len(s.Sources) == 0 {
			t.Errorf("%s: a finding signature names its sources", s.ID)
		}
	}
	if kinds[KindFinding] < 50 || kinds[KindFact] == 0 || kinds[KindContext] == 0 || kinds[KindSuccess] == 0 {
		t.Errorf("unexpected library shape: %v", kinds)
	}
	for _, r := range reasoners {
		if r.ID == "" || r.Title == "" || r.Doc == "" || r.Run == nil || r.Link.Order() == len(checks.Links) {
			t.Errorf("reasoner %q: needs an ID, title, doc, link and run function", r.ID)
		}
		for _, c := range r.Causes {
			if !knowledge.IsCause(c) {
				t.Errorf("reasoner %s: unknown cause %q", r.ID, c)
			}
			if _, ok := l.causes[c]; !ok {
				t.Errorf("reasoner %s: cause %q has no entry in causes.json", r.ID, c)
			}
		}
	}
}

// TestLibraryRejectsBadSignatures: the validation catches what a careless
// edit of the data files introduces.
func TestLibraryRejectsBadSignatures(t *testing.T) {
	causes, _ := os.ReadFile("signatures/causes.json")
	good := `{"id": "x.good", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["disk"], "patterns": ["disk full"], "sources": ["s"], "examples": ["the disk full"]}`
	cases := map[string]string{
		"unknown cause":       `{"id": "x.a", "title": "t", "doc": "d", "cause": "no_such_cause", "severity": "error", "keywords": ["a"], "patterns": ["a"], "examples": ["a"]}`,
		"bad regexp":          `{"id": "x.a", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["a"], "patterns": ["a("], "examples": ["a"]}`,
		"upper-case keyword":  `{"id": "x.a", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["Disk"], "patterns": ["Disk"], "examples": ["Disk"]}`,
		"example not matched": `{"id": "x.a", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["zzz"], "patterns": ["disk"], "examples": ["disk"]}`,
		"bad severity":        `{"id": "x.a", "title": "t", "doc": "d", "cause": "disk_full", "severity": "fatal", "keywords": ["a"], "patterns": ["a"], "examples": ["a"]}`,
		"unknown context":     `{"id": "x.a", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["a"], "patterns": ["a"], "examples": ["a"], "contexts": {"mars": {"cause": "disk_full"}}}`,
		"unknown field":       `{"id": "x.a", "titel": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["a"], "patterns": ["a"], "examples": ["a"]}`,
		"duplicate ID":        good,
		"bad case cause":      `{"id": "x.a", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["a"], "patterns": ["(?P<v>a)"], "examples": ["a"], "by": {"value": "v", "cases": {"a": {"cause": "nope"}}}}`,
		// Only a context decides: a value case naming decide is an edit
		// that would silently do nothing.
		"decide in a case": `{"id": "x.a", "title": "t", "doc": "d", "cause": "disk_full", "severity": "error", "keywords": ["a"], "patterns": ["(?P<v>a)"], "examples": ["a"], "by": {"value": "v", "cases": {"a": {"decide": true}}}}`,
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"signatures/causes.json": {Data: causes},
				"signatures/x.json":      {Data: []byte(`{"source": "test", "signatures": [` + good + `, ` + bad + `]}`)},
			}
			if _, err := parseLibrary(fsys); err == nil {
				t.Errorf("accepted: %s", bad)
			}
		})
	}
	fsys := fstest.MapFS{
		"signatures/causes.json": {Data: causes},
		"signatures/x.json":      {Data: []byte(`{"source": "test", "signatures": [` + good + `]}`)},
	}
	if _, err := parseLibrary(fsys); err != nil {
		t.Errorf("rejected a good signature: %v", err)
	}
	// Fixes come from the one catalog: an ID it lacks (the old
	// advice-* IDs too), a risk below its least risk, a needs-root fix
	// without needs_root are each refused.
	for _, c := range []struct{ fix, want string }{
		{`{"id": "rm-rf", "title": "t", "risk": "safe", "steps": ["x"]}`, "not in the fix catalog"},
		{`{"id": "advice-use-wsl2", "title": "t", "risk": "safe", "manual": true, "steps": ["x"]}`, "not in the fix catalog"},
		{`{"id": "pip-install-tensorflow", "title": "t", "risk": "safe", "steps": ["x"]}`, "below the catalog's"},
		{`{"id": "install-driver", "title": "t", "risk": "dangerous", "steps": ["x"]}`, "needs root"},
		{`{"id": "reboot", "title": "t", "risk": "dangerous", "steps": ["x"]}`, "printed only"},
	} {
		fsys["signatures/causes.json"] = &fstest.MapFile{Data: []byte(`{"source": "s", "causes": {"disk_full": {"link": "environment", "fixes": [` + c.fix + `]}}}`)}
		if _, err := parseLibrary(fsys); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", c.fix, c.want, err)
		}
	}
}

// TestEverySignatureHasATestLog: every finding signature and every
// reasoner that adds findings is exercised by at least one test log.
func TestEverySignatureHasATestLog(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range logCases(t) {
		r := explainFile(t, c.path)
		for _, f := range r.Findings {
			seen[f.Check] = true
			if s, ok := f.Evidence["signature"].(string); ok {
				seen[s] = true
			}
			if rs, ok := f.Evidence["reasoning"].([]string); ok {
				for _, x := range rs {
					seen[x] = true
				}
			}
		}
	}
	for _, s := range mustLibrary().sigs {
		if s.Kind == KindFinding && !seen[s.ID] {
			t.Errorf("signature %s has no test log under testdata/explain/logs", s.ID)
		}
	}
	for _, r := range reasoners {
		if !seen[r.ID] && !strings.HasPrefix(r.ID, "explain.versions") && r.ID != "explain.tf_version_answer" {
			t.Errorf("reasoner %s has no test log under testdata/explain/logs", r.ID)
		}
	}
}

func TestParseLibraryName(t *testing.T) {
	cases := []struct{ in, name, version string }{
		{"libcudnn.so.8", "cudnn", "8"},
		{"libcudart.so.11.0", "cudart", "11.0"},
		{"libcublasLt.so.12", "cublas", "12"},
		{"libcudnn_cnn_infer.so.8", "cudnn", "8"},
		{"libnvinfer_plugin.so.7", "nvinfer", "7"},
		{"libcuda.so.1", "cuda", "1"},
		{"libnvidia-ml.so.1", "nvidia-ml", "1"},
		{"libnvrtc.so", "nvrtc", ""},
		{"/usr/local/cuda-12.2/lib64/libcusparse.so.12", "cusparse", "12"},
		{"cudart64_110.dll", "cudart", "11.0"},
		{"cudart64_101.dll", "cudart", "10.1"},
		{"cudart64_90.dll", "cudart", "9.0"},
		{"cublas64_91.dll", "cublas", "9.1"},
		{"cublas64_10.dll", "cublas", "10"},
		{"cudnn64_8.dll", "cudnn", "8"},
		{"cusolver64_11.dll", "cusolver", "11"},
		{"nvcuda.dll", "cuda", ""},
		{`C:\Program Files\NVIDIA\cublas64_12.dll`, "cublas", "12"},
	}
	for _, c := range cases {
		name, version := parseLibraryName(c.in)
		if name != c.name || version != c.version {
			t.Errorf("parseLibraryName(%q) = %q, %q; want %q, %q", c.in, name, version, c.name, c.version)
		}
	}
}

func TestCompatLookups(t *testing.T) {
	l := mustLibrary()
	for _, c := range []struct{ driver, cuda string }{
		{"410.104", "10.0"}, {"418.39", "10.1"}, {"470.223.02", "11.4"}, {"525.60.13", "12.0"},
		{"535.104.05", "12.2"}, {"550.54.15", "12.4"}, {"580.82.07", "13.0"}, {"340.1", ""},
	} {
		got, ok := l.maxCUDAForDriver(c.driver)
		if got != c.cuda || ok != (c.cuda != "") {
			t.Errorf("maxCUDAForDriver(%s) = %q, %v; want %q", c.driver, got, ok, c.cuda)
		}
	}
	for _, c := range []struct{ tf, cuda string }{{"2.15.0", "12.2"}, {"2.16.1", "12.3"}, {"2.3.1", "10.1"}, {"2.21.0", "12.5"}, {"1.15", "10.0"}, {"3.0", ""}} {
		r, ok := l.tfRow(c.tf)
		if r.CUDA != c.cuda || ok != (c.cuda != "") {
			t.Errorf("tfRow(%s) = %q, %v; want %q", c.tf, r.CUDA, ok, c.cuda)
		}
	}
	if v, ok := l.familyFloor(12); !ok || v != "525.60.13" {
		t.Errorf("familyFloor(12) = %q", v)
	}
}

func TestVersionsAndSizes(t *testing.T) {
	if parseVer("12.2.140").cmp(parseVer("12.2")) <= 0 || parseVer("2.10").cmp(parseVer("2.9")) <= 0 || parseVer("11.0").cmp(ver{11}) != 0 {
		t.Error("version comparison is wrong")
	}
	if got := parseVer("2.15.0rc1"); got.String() != "2.15.0" {
		t.Errorf("parseVer(2.15.0rc1) = %v", got)
	}
	for in, want := range map[string]float64{"190.31MiB": 190.31 * (1 << 20), "7.92 GiB": 7.92 * (1 << 30), "512M": 512 << 20, "1,024": 1024, "x": 0} {
		if got := bytesOf(in); got != want {
			t.Errorf("bytesOf(%q) = %v, want %v", in, got, want)
		}
	}
}
