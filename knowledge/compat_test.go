package knowledge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedCompat finds the project's shared knowledge file, the source of
// data/compat.json (absent outside the project's workspace).
func sharedCompat(t *testing.T) []byte {
	t.Helper()
	cands := []string{os.Getenv("DOCTOR_SHARED_COMPAT")}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; d != "/" && d != "."; d = filepath.Dir(d) {
			cands = append(cands, filepath.Join(d, "shared", "knowledge", "compat.json"))
		}
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if b, err := os.ReadFile(c); err == nil {
			return b
		}
	}
	t.Skip("shared/knowledge/compat.json not found (set DOCTOR_SHARED_COMPAT)")
	return nil
}

// TestCompatMatchesShared checks every row of the embedded data against the
// shared source it was built from, so the two cannot drift apart.
func TestCompatMatchesShared(t *testing.T) {
	var src struct {
		Tables []json.RawMessage `json:"tables"`
	}
	if err := json.Unmarshal(sharedCompat(t), &src); err != nil {
		t.Fatal(err)
	}
	tables := map[string]map[string]json.RawMessage{}
	for _, raw := range src.Tables {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var name string
		_ = json.Unmarshal(m["table"], &name)
		tables[name] = m
	}

	// Table 1: TF builds.
	var builds []struct {
		TF, Python, CUDA, CUDNN string
	}
	var rows []map[string]string
	_ = json.Unmarshal(tables["tensorflow_tested_build_configurations_linux_gpu"]["rows"], &rows)
	for _, r := range rows {
		builds = append(builds, struct{ TF, Python, CUDA, CUDNN string }{r["tf_version"], r["python"], r["cuda"], r["cudnn"]})
	}
	if len(builds) != len(TFBuilds()) {
		t.Errorf("TF builds: shared has %d rows, embedded %d", len(builds), len(TFBuilds()))
	}
	for _, b := range builds {
		got, ok := TFBuildFor(b.TF)
		if !ok || got.TF != b.TF || got.Python != b.Python || got.CUDA != b.CUDA || got.CUDNN != b.CUDNN {
			t.Errorf("TF %s: shared %+v, embedded %+v", b.TF, b, got)
		}
		if got.Mark != MarkV {
			t.Errorf("TF %s: mark %q, the docs table is verified", b.TF, got.Mark)
		}
	}

	// Table 2: and-cuda pins, with per-package marks.
	var pinRows []struct {
		TF       string `json:"tf_version"`
		Packages map[string]struct {
			Version string `json:"version"`
			V       string `json:"v"`
		} `json:"packages"`
	}
	_ = json.Unmarshal(tables["tensorflow_and_cuda_extra_pins"]["rows"], &pinRows)
	checked := 0
	for _, r := range pinRows {
		if r.Packages == nil {
			continue
		}
		ver := r.TF
		if strings.HasPrefix(ver, "2.18") {
			ver = "2.19.0"
		}
		row, ok := PinsFor(ver)
		if !ok {
			t.Errorf("pins for %s missing", r.TF)
			continue
		}
		for name, p := range r.Packages {
			got, ok := row.Packages[name]
			if !ok || got.Version != p.Version || string(got.Mark) != p.V[:1] {
				t.Errorf("pin %s %s: shared %+v, embedded %+v", r.TF, name, p, got)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("only %d pins compared", checked)
	}

	// Table 4: toolkit drivers and minor-version compatibility.
	var drv []map[string]string
	_ = json.Unmarshal(tables["cuda_toolkit_to_minimum_driver"]["toolkit_driver"], &drv)
	emb := ToolkitDrivers()
	if len(drv) != len(emb) {
		t.Fatalf("driver rows: shared %d, embedded %d", len(drv), len(emb))
	}
	for i, r := range drv {
		if r["cuda"] != emb[i].Label || ">="+emb[i].Linux != r["linux_x86_64_min_driver"] {
			t.Errorf("driver row %d: shared %v, embedded %+v", i, r, emb[i])
		}
	}
	var minor []map[string]string
	_ = json.Unmarshal(tables["cuda_toolkit_to_minimum_driver"]["minor_version_compatibility"], &minor)
	for _, r := range minor {
		maj := Version(r["cuda_major"]).Major()
		mc, ok := MinorCompatFor(maj)
		if !ok || !strings.HasPrefix(r["exact_floor_linux"], ">="+mc.LinuxFloor) {
			t.Errorf("minor compat %d: shared %v, embedded %+v", maj, r, mc)
		}
	}
}

func TestTFForPython(t *testing.T) {
	for _, c := range []struct {
		py      string
		maxCUDA int
		want    string
		ok      bool
	}{
		{"3.12.3", 0, "2.21.0", true},
		{"3.12", 13, "2.21.0", true},
		{"3.9.18", 0, "2.20.0", true},
		{"3.11", 11, "2.14.0", true},
		{"3.8.10", 0, "2.13.0", true},
		{"3.14.0", 0, "", false},
		{"3.5", 0, "", false},
		{"", 0, "", false},
	} {
		got, ok := TFForPython(c.py, c.maxCUDA)
		if ok != c.ok || got.TF != c.want {
			t.Errorf("TFForPython(%q, %d) = %q %v, want %q %v", c.py, c.maxCUDA, got.TF, ok, c.want, c.ok)
		}
	}
	lo, hi := PythonRange()
	if lo != "3.6" || hi != "3.13" {
		t.Errorf("PythonRange = %s-%s", lo, hi)
	}
}

func TestLookups(t *testing.T) {
	b, ok := TFBuildFor("2.16.2")
	if !ok || b.TF != "2.16.1" || b.CUDA != "12.3" {
		t.Errorf("TFBuildFor(2.16.2) = %+v", b)
	}
	if b.SupportsPython("3.13") || !b.SupportsPython("3.12.1") {
		t.Errorf("2.16 Python range wrong")
	}
	if _, ok := TFBuildFor("1.15.0"); ok {
		t.Errorf("1.15 has no row")
	}
	s, ok := SonamesFor("2.15.0.post1")
	if !ok || s.Soname("cudnn") != "libcudnn.so.8" || s.Soname("cufft") != "libcufft.so.11" || s.Mark != MarkU {
		t.Errorf("SonamesFor(2.15) = %+v", s)
	}
	s, _ = SonamesFor("2.8.0")
	if s.Soname("cudart") != "libcudart.so.11.0" || s.Mark != MarkS {
		t.Errorf("SonamesFor(2.8) = %+v", s)
	}
	if LatestSonames().Soname("cudnn") != "libcudnn.so.9" {
		t.Errorf("latest sonames")
	}
	p, ok := PinsFor("2.15.0.post1")
	if !ok || p.TF != "2.15.0.post1" {
		t.Errorf("PinsFor(2.15.0.post1) = %v", p.TF)
	}
	if _, ok := p.Packages["tensorrt"]; ok {
		t.Errorf("2.15.0.post1 pins have no tensorrt")
	}
	p, _ = PinsFor("2.15.0")
	if p.TF != "2.15.0" {
		t.Errorf("PinsFor(2.15.0) = %s", p.TF)
	}
	p, _ = PinsFor("2.20.0")
	nvcc, _ := p.PinOf("nvidia-cuda-nvcc-cu12")
	if nvcc.Version != "12.5.82" || nvcc.Mark != MarkU {
		t.Errorf("2.20 nvcc pin = %+v (row marks weaken package marks)", nvcc)
	}
	if maj, m := CUDAMajorForDriver("580.159.04"); maj != 13 || m != MarkV {
		t.Errorf("CUDAMajorForDriver(580) = %d %s", maj, m)
	}
	if maj, _ := CUDAMajorForDriver("535.104.05"); maj != 12 {
		t.Errorf("CUDAMajorForDriver(535) = %d", maj)
	}
	if maj, _ := CUDAMajorForDriver("440.1"); maj != 0 {
		t.Errorf("CUDAMajorForDriver(440) = %d", maj)
	}
	if ga, ok := ToolkitGA("12.5"); !ok || ga.Linux != "555.42.02" {
		t.Errorf("ToolkitGA(12.5) = %+v", ga)
	}
	if last, m := LastWindowsNativeGPU(); last != "2.10" || m != MarkV {
		t.Errorf("windows: %s %s", last, m)
	}
	if subs, _ := CudnnSublibraries(9); len(subs) == 0 {
		t.Errorf("no cuDNN 9 sub-libraries")
	}
	if x := XLA(); x.Libdevice == "" || len(x.TFRelative) == 0 {
		t.Errorf("XLA data empty")
	}
}

func TestVersion(t *testing.T) {
	for in, want := range map[string]string{"2.15.0.post1": "2.15.0", "12.5.82": "12.5.82", "3.12.3rc1": "3.12.3", "": "", "x": "", "8": "8", "11.0": "11.0"} {
		if got := Version(in).String(); got != want {
			t.Errorf("Version(%q) = %q, want %q", in, got, want)
		}
	}
	if CompareVersions(Version("2.9"), Version("2.10")) >= 0 || CompareVersions(Version("2.10.0"), Version("2.10")) != 0 {
		t.Errorf("CompareVersions wrong")
	}
}

func TestMarks(t *testing.T) {
	if MarkU.Verified() || !MarkS.Verified() || MarkV.Weaker(MarkU) != MarkU || MarkS.Weaker(MarkV) != MarkS {
		t.Errorf("marks")
	}
}

// Issue 12, item 1: the minimum compute capability by TensorFlow release,
// each row with its source and mark.
func TestMinComputeCapability(t *testing.T) {
	for _, c := range []struct {
		tf, min string
		mark    Mark
	}{
		{"2.21.0", "6.0", MarkV}, {"2.17.0", "6.0", MarkV}, {"2.17.1", "6.0", MarkV},
		{"2.16.2", "5.0", MarkS}, {"2.15.0.post1", "5.0", MarkS},
		{"2.14.0", "3.5", MarkV}, {"2.4.0", "3.5", MarkV},
		{"", "3.5", MarkV}, // nothing installed: the most permissive row
	} {
		r, ok := MinComputeCapability(c.tf)
		if !ok || r.MinCC != c.min || r.Mark != c.mark || r.Source == "" {
			t.Errorf("MinComputeCapability(%q) = %s %s (source %q), want %s %s", c.tf, r.MinCC, r.Mark, r.Source, c.min, c.mark)
		}
	}
	if ok, _ := SupportsCC("2.17.0", "5.2"); ok {
		t.Errorf("2.17 supports Maxwell")
	}
	if ok, _ := SupportsCC("2.16.1", "5.2"); !ok {
		t.Errorf("2.16 does not support Maxwell")
	}
	if ok, _ := SupportsCC("2.16.1", "3.7"); ok {
		t.Errorf("a CUDA 12 build supports Kepler")
	}
}

// Issue 12, item 1: the newest release for the GPU and the Python, and why.
func TestNewestTF(t *testing.T) {
	for _, c := range []struct {
		py      string
		maxCUDA int
		ccs     []string
		want    string
		why     string
	}{
		{"3.12.3", 0, []string{"5.2"}, "2.16.1", "2.17.0 to 2.21.0: the wheels support compute capability 6.0 and higher"}, // GTX 980
		{"3.12", 0, []string{"9.0"}, "2.21.0", ""},
		{"3.9", 0, []string{"6.1"}, "2.20.0", "2.21.0: no build for Python 3.9"},
		{"3.11", 0, []string{"3.7"}, "2.14.0", "2.15.0 to 2.16.1: the wheels support compute capability 5.0"}, // K80
		{"3.12", 0, []string{"3.7"}, "", "2.16.1: the wheels support compute capability 5.0"},                 // nothing for Kepler + 3.12
		{"3.10", 11, []string{"8.6"}, "2.14.0", "built with CUDA 12"},
		{"3.12", 0, []string{"9.0", "5.2"}, "2.16.1", "6.0 and higher"}, // the oldest GPU decides
	} {
		got, ok := NewestTF(c.py, c.maxCUDA, c.ccs)
		if got.Build.TF != c.want || ok != (c.want != "") || !strings.Contains(strings.Join(got.Why, "; "), c.why) {
			t.Errorf("NewestTF(%s, %d, %v) = %q %v %q, want %q and why containing %q", c.py, c.maxCUDA, c.ccs, got.Build.TF, ok, got.Why, c.want, c.why)
		}
	}
}

// Issue 12, item 2: Blackwell on TensorFlow 2.16 to 2.21 is a known
// failure with sources; what works is marked, and the unverified part too.
func TestKnownCCFailure(t *testing.T) {
	for _, c := range []struct {
		tf, cc string
		want   bool
	}{
		{"2.20.0", "12.0", true}, {"2.18.1", "10.0", true}, {"2.16.2", "12.0", true}, {"2.21.0", "12.0", true},
		{"2.20.0", "9.0", false}, {"2.15.0", "12.0", false}, {"", "12.0", false}, {"2.20.0", "", false},
	} {
		f, ok := KnownCCFailure(c.tf, c.cc)
		if ok != c.want {
			t.Errorf("KnownCCFailure(%q, %q) = %v", c.tf, c.cc, ok)
		}
		if ok && (!f.Mark.Verified() || !strings.Contains(f.Source, "issues/101746") || !strings.Contains(f.What, "CUDA_ERROR_INVALID_PTX")) {
			t.Errorf("failure row lacks its sources: %+v", f)
		}
	}
	var marks []Mark
	for _, f := range CCFailures() {
		for _, w := range f.Works {
			if w.Source == "" || w.Text == "" {
				t.Errorf("workaround without text or source: %+v", w)
			}
			marks = append(marks, w.Mark)
		}
	}
	if !containsMark(marks, MarkS) || !containsMark(marks, MarkU) {
		t.Errorf("what works should have a secondary and an unverified part: %v", marks)
	}
}

func containsMark(ms []Mark, m Mark) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}
