package knowledge

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Mark is the verification mark of a row (knowledge.md legend).
type Mark string

const (
	// Verified in a primary source.
	MarkV Mark = "V"
	// Secondary: logs, resolver output, a third-party copy.
	MarkS Mark = "S"
	// Unverified recollection or inference: a hypothesis.
	MarkU Mark = "U"
)

// Verified reports whether a finding may rest on this row alone at error
// severity: V and S rows may, U rows may not.
func (m Mark) Verified() bool { return m == MarkV || m == MarkS }

// Weaker returns the weaker of two marks (U < S < V).
func (m Mark) Weaker(o Mark) Mark {
	rank := func(x Mark) int {
		switch x {
		case MarkV:
			return 2
		case MarkS:
			return 1
		}
		return 0
	}
	if rank(o) < rank(m) {
		return o
	}
	return m
}

//go:embed data/compat.json
var compatJSON []byte

// TFBuild is one tested Linux GPU build configuration of TensorFlow.
type TFBuild struct {
	TF        string `json:"tf"`     // "2.15.0"
	Python    string `json:"python"` // "3.9-3.11"
	CUDA      string `json:"cuda"`   // "12.2"
	CUDNN     string `json:"cudnn"`  // "8.9"
	Compiler  string `json:"compiler"`
	BuildTool string `json:"build_tool"`
	Mark      Mark   `json:"v"`
	Note      string `json:"note,omitempty"`
}

// SupportsPython reports whether the build's Python range holds py
// ("3.12.3" or "3.12").
func (b TFBuild) SupportsPython(py string) bool {
	lo, hi, ok := pyRange(b.Python)
	v := Version(py)
	if !ok || len(v) < 2 {
		return false
	}
	mm := v[:2]
	return CompareVersions(mm, lo) >= 0 && CompareVersions(mm, hi) <= 0
}

// CUDAMajor is the major version of the build's CUDA.
func (b TFBuild) CUDAMajor() int { return Version(b.CUDA).Major() }

// Pin is one package version that tensorflow[and-cuda] pins.
type Pin struct {
	Version string `json:"version"`
	Mark    Mark   `json:"v"`
	Note    string `json:"v_note,omitempty"`
}

// PinRow is the and-cuda pin list of a range of TensorFlow versions.
type PinRow struct {
	TF        string         `json:"tf"`
	Min       string         `json:"tf_min"`
	Max       string         `json:"tf_max"`
	CUDAMajor int            `json:"cuda_major"`
	Mark      Mark           `json:"v"`
	Note      string         `json:"v_note,omitempty"`
	SameAs    string         `json:"same_as,omitempty"`
	Packages  map[string]Pin `json:"packages"`
	Source    string         `json:"source"`
}

// PinOf returns the pin of one package with its effective mark (the weaker
// of the row's and the package's).
func (r PinRow) PinOf(pkg string) (Pin, bool) {
	p, ok := r.Packages[pkg]
	if !ok {
		return Pin{}, false
	}
	p.Mark = r.Mark.Weaker(p.Mark)
	return p, true
}

// ToolkitDriver is a CUDA toolkit release and the Linux driver it ships
// with (no minor-version compatibility).
type ToolkitDriver struct {
	CUDA     string `json:"cuda"`      // "12.5"
	CUDAFull string `json:"cuda_full"` // "12.5" or "11.0.3"
	Release  string `json:"release"`   // "GA", "Update 1"
	Linux    string `json:"linux_min_driver"`
	Windows  string `json:"windows_min_driver"`
	Label    string `json:"label"`
	Mark     Mark   `json:"v"`
}

// MinorCompat is NVIDIA's minor-version compatibility floor for one CUDA
// major: any build of that major runs on a driver at or above the floor.
type MinorCompat struct {
	CUDAMajor    int    `json:"cuda_major"`
	Branch       string `json:"min_driver_branch"`
	LinuxFloor   string `json:"linux_floor"`
	WindowsFloor string `json:"windows_floor"`
	Note         string `json:"linux_floor_note"`
	Mark         Mark   `json:"v"`
}

// SonameRow gives the library versions that a range of TensorFlow releases
// dlopen: lib<name>.so.<Libs[name]>.
type SonameRow struct {
	Min      string            `json:"tf_min"` // "2.15"
	Max      string            `json:"tf_max"` // "2.17"
	CUDA     string            `json:"cuda"`
	Libs     map[string]string `json:"libs"`
	Mark     Mark              `json:"v"`
	Evidence string            `json:"evidence"`
}

// Soname returns lib<name>.so.<version> for a library of the row.
func (r SonameRow) Soname(name string) string {
	v, ok := r.Libs[name]
	if !ok {
		return ""
	}
	return "lib" + name + ".so." + v
}

// AlwaysLib is a library every TensorFlow version dlopens by the same rule.
type AlwaysLib struct {
	Lib          string `json:"lib"`
	Soname       string `json:"soname"` // may hold "<cuda major>"
	MinCUDAMajor int    `json:"min_cuda_major,omitempty"`
	Mark         Mark   `json:"v"`
	Evidence     string `json:"evidence"`
}

// SonameFor fills in the CUDA major.
func (a AlwaysLib) SonameFor(cudaMajor int) string {
	return strings.ReplaceAll(a.Soname, "<cuda major>", strconv.Itoa(cudaMajor))
}

// CCRow is the minimum compute capability of a range of TF versions
// (major.minor, both ends included; Max "" is open).
type CCRow struct {
	Min       string `json:"tf_min"`
	Max       string `json:"tf_max"`
	MinCC     string `json:"min"`
	Supported string `json:"supported"`
	Mark      Mark   `json:"v"`
	Source    string `json:"source"`
	Note      string `json:"note"`
}

// CCWorkaround is one thing said to work for a GPU the wheels fail on.
type CCWorkaround struct {
	Text   string `json:"text"`
	Mark   Mark   `json:"v"`
	Source string `json:"source"`
}

// CCFailure is a GPU generation that a range of TensorFlow releases is
// known to fail on although the build carries PTX it could JIT-compile.
type CCFailure struct {
	MinCC  string         `json:"cc_min"`
	Min    string         `json:"tf_min"`
	Max    string         `json:"tf_max"`
	Mark   Mark           `json:"v"`
	What   string         `json:"what"`
	Source string         `json:"source"`
	Works  []CCWorkaround `json:"works"`
}

// XLAData is where XLA looks for ptxas and libdevice.
type XLAData struct {
	Source      string   `json:"source"`
	Libdevice   string   `json:"libdevice"`
	Ptxas       string   `json:"ptxas"`
	Roots       []string `json:"roots"`
	TFRelative  []string `json:"tf_relative"`
	CondaRelatv []string `json:"conda_relative"`
	Flag        string   `json:"flag"`
	Mark        Mark     `json:"v"`
}

type compatFile struct {
	TensorFlowBuilds struct {
		Source string    `json:"source"`
		Rows   []TFBuild `json:"rows"`
		Win    struct {
			LastTF string `json:"last_tf"`
			Mark   Mark   `json:"v"`
		} `json:"windows_native_gpu"`
	} `json:"tensorflow_builds"`
	Pins struct {
		Rows []PinRow `json:"rows"`
	} `json:"and_cuda_pins"`
	Driver struct {
		Rows []ToolkitDriver `json:"rows"`
	} `json:"cuda_driver"`
	Minor struct {
		Rule string        `json:"rule"`
		Rows []MinorCompat `json:"rows"`
	} `json:"minor_version_compatibility"`
	Sonames struct {
		Rows    []SonameRow `json:"rows"`
		Always  []AlwaysLib `json:"all_versions"`
		Sublibs struct {
			V8   []string `json:"8"`
			V9   []string `json:"9"`
			Mark Mark     `json:"v"`
		} `json:"cudnn_sublibraries"`
		Required struct {
			Libs []string `json:"libs"`
			Mark Mark     `json:"v"`
		} `json:"required"`
	} `json:"sonames"`
	WheelDirs struct {
		CUDA12 []string `json:"cuda12"`
		CUDA13 []string `json:"cuda13"`
		Mark   Mark     `json:"v"`
	} `json:"wheel_lib_dirs"`
	CC struct {
		Rows    []CCRow     `json:"rows"`
		Failing []CCFailure `json:"known_failing"`
	} `json:"compute_capability"`
	XLA      XLAData      `json:"xla"`
	Packages packagesData `json:"packages"`
}

var compat = mustLoadCompat(compatJSON)

func mustLoadCompat(b []byte) *compatFile {
	var f compatFile
	if err := json.Unmarshal(b, &f); err != nil {
		panic(fmt.Sprintf("knowledge: data/compat.json: %v", err))
	}
	// Newest first, whatever the file's order.
	sort.SliceStable(f.TensorFlowBuilds.Rows, func(i, j int) bool {
		return CompareVersions(Version(f.TensorFlowBuilds.Rows[i].TF), Version(f.TensorFlowBuilds.Rows[j].TF)) > 0
	})
	return &f
}

// TFBuilds lists the tested Linux GPU builds, newest first.
func TFBuilds() []TFBuild { return append([]TFBuild(nil), compat.TensorFlowBuilds.Rows...) }

// TFBuildFor returns the build row of a TensorFlow version: the row of the
// same major.minor (2.16.2 uses the 2.16.1 row; patch releases are not
// listed in the docs table).
func TFBuildFor(version string) (TFBuild, bool) {
	v := Version(version)
	if len(v) < 2 {
		return TFBuild{}, false
	}
	for _, r := range compat.TensorFlowBuilds.Rows {
		rv := Version(r.TF)
		if rv[0] == v[0] && rv[1] == v[1] {
			return r, true
		}
	}
	return TFBuild{}, false
}

// TFForPython returns the newest TensorFlow build whose Python range holds
// py and, when maxCUDAMajor > 0, whose CUDA major is at most maxCUDAMajor
// (what the driver runs).
func TFForPython(py string, maxCUDAMajor int) (TFBuild, bool) {
	for _, r := range compat.TensorFlowBuilds.Rows {
		if !r.SupportsPython(py) {
			continue
		}
		if maxCUDAMajor > 0 && r.CUDAMajor() > maxCUDAMajor {
			continue
		}
		return r, true
	}
	return TFBuild{}, false
}

// TFChoice is the TensorFlow release doctor recommends and why newer
// releases were passed over.
type TFChoice struct {
	Build TFBuild
	// Why says, for each reason newer releases were passed over, which
	// releases and why ("TensorFlow 2.17.0 to 2.21.0 need compute
	// capability 6.0 or higher; GPU 0 has 5.2").
	Why []string
}

// NewestTF returns the newest tested build whose Python range holds py,
// whose CUDA major is at most maxCUDAMajor (when > 0: what the driver
// runs) and whose wheels support every compute capability in ccs.
func NewestTF(py string, maxCUDAMajor int, ccs []string) (TFChoice, bool) {
	type span struct{ newest, oldest, text string }
	var order []string
	skipped := map[string]*span{}
	skip := func(key, tf, text string) {
		if sp, ok := skipped[key]; ok {
			sp.oldest = tf
			return
		}
		skipped[key] = &span{newest: tf, oldest: tf, text: text}
		order = append(order, key)
	}
	why := func() []string {
		var out []string
		for _, k := range order {
			sp := skipped[k]
			r := "TensorFlow " + sp.newest
			if sp.oldest != sp.newest {
				r = "TensorFlow " + sp.oldest + " to " + sp.newest
			}
			out = append(out, r+": "+sp.text)
		}
		return out
	}
	for _, r := range compat.TensorFlowBuilds.Rows {
		if !r.SupportsPython(py) {
			skip("python", r.TF, "no build for Python "+majorMinor(py))
			continue
		}
		if maxCUDAMajor > 0 && r.CUDAMajor() > maxCUDAMajor {
			skip("cuda", r.TF, fmt.Sprintf("built with CUDA %d, newer than the driver runs (CUDA %d)", r.CUDAMajor(), maxCUDAMajor))
			continue
		}
		bad := ""
		for _, cc := range ccs {
			if ok, row := SupportsCC(r.TF, cc); !ok {
				bad = fmt.Sprintf("the wheels support %s; the GPU has %s", row.Supported, cc)
				skip("cc"+row.MinCC, r.TF, bad)
				break
			}
		}
		if bad != "" {
			continue
		}
		return TFChoice{Build: r, Why: why()}, true
	}
	return TFChoice{Why: why()}, false
}

func majorMinor(v string) string {
	if n := Version(v); len(n) >= 2 {
		return n[:2].String()
	}
	return v
}

// PythonRange returns the oldest and newest Python minor any tested
// TensorFlow build supports ("3.6", "3.13").
func PythonRange() (string, string) {
	var lo, hi VersionNumber
	for _, r := range compat.TensorFlowBuilds.Rows {
		l, h, ok := pyRange(r.Python)
		if !ok {
			continue
		}
		if lo == nil || CompareVersions(l, lo) < 0 {
			lo = l
		}
		if hi == nil || CompareVersions(h, hi) > 0 {
			hi = h
		}
	}
	return lo.String(), hi.String()
}

// LastWindowsNativeGPU is the last TensorFlow with GPU support on native
// Windows ("2.10") and its mark.
func LastWindowsNativeGPU() (string, Mark) {
	return compat.TensorFlowBuilds.Win.LastTF, compat.TensorFlowBuilds.Win.Mark
}

// PinsFor returns the tensorflow[and-cuda] pins of a TensorFlow version.
func PinsFor(version string) (PinRow, bool) {
	v := Version(version)
	if len(v) == 0 {
		return PinRow{}, false
	}
	post := strings.Contains(version, "post")
	var best *PinRow
	for i := range compat.Pins.Rows {
		r := &compat.Pins.Rows[i]
		if CompareVersions(v, Version(r.Min)) < 0 || CompareVersions(v, Version(r.Max)) > 0 {
			continue
		}
		// 2.15.0 and 2.15.0.post1 share numbers; the post row is exact.
		if strings.Contains(r.Min, "post") != post {
			if best == nil {
				best = r
			}
			continue
		}
		best = r
		break
	}
	if best == nil {
		return PinRow{}, false
	}
	return *best, true
}

// ToolkitDrivers lists CUDA toolkit releases and their Linux drivers,
// newest first.
func ToolkitDrivers() []ToolkitDriver { return append([]ToolkitDriver(nil), compat.Driver.Rows...) }

// ToolkitGA returns the GA release row of a CUDA major.minor ("12.5").
func ToolkitGA(cuda string) (ToolkitDriver, bool) {
	want := Version(cuda)
	if len(want) < 2 {
		return ToolkitDriver{}, false
	}
	var found *ToolkitDriver
	for i := range compat.Driver.Rows {
		r := &compat.Driver.Rows[i]
		rv := Version(r.CUDA)
		if rv[0] != want[0] || rv[1] != want[1] {
			continue
		}
		// Rows are newest first: the last match is the GA (or the oldest).
		found = r
	}
	if found == nil {
		return ToolkitDriver{}, false
	}
	return *found, true
}

// MinorCompatFor returns the minor-version compatibility floor of a CUDA
// major.
func MinorCompatFor(cudaMajor int) (MinorCompat, bool) {
	for _, r := range compat.Minor.Rows {
		if r.CUDAMajor == cudaMajor {
			return r, true
		}
	}
	return MinorCompat{}, false
}

// MinorCompatRule is NVIDIA's wording of minor-version compatibility.
func MinorCompatRule() string { return compat.Minor.Rule }

// CUDAMajorForDriver returns the newest CUDA major whose minor-version
// compatibility floor the Linux driver version meets (0 when none).
func CUDAMajorForDriver(driver string) (int, Mark) {
	d := Version(driver)
	if len(d) == 0 {
		return 0, MarkU
	}
	best, mark := 0, MarkU
	for _, r := range compat.Minor.Rows {
		if CompareVersions(d, Version(r.LinuxFloor)) >= 0 && r.CUDAMajor > best {
			best, mark = r.CUDAMajor, r.Mark
		}
	}
	return best, mark
}

// SonamesFor returns the soname row of a TensorFlow version (by
// major.minor).
func SonamesFor(version string) (SonameRow, bool) {
	v := Version(version)
	if len(v) < 2 {
		return SonameRow{}, false
	}
	mm := v[:2]
	for _, r := range compat.Sonames.Rows {
		if CompareVersions(mm, Version(r.Min)) >= 0 && CompareVersions(mm, Version(r.Max)) <= 0 {
			return r, true
		}
	}
	return SonameRow{}, false
}

// LatestSonames is the newest soname row (a fallback for TensorFlow
// versions newer than the table).
func LatestSonames() SonameRow {
	best := compat.Sonames.Rows[0]
	for _, r := range compat.Sonames.Rows[1:] {
		if CompareVersions(Version(r.Max), Version(best.Max)) > 0 {
			best = r
		}
	}
	return best
}

// AlwaysLibs are the libraries every TensorFlow dlopens (libcuda.so.1,
// NCCL, CUPTI, nvJitLink).
func AlwaysLibs() []AlwaysLib { return append([]AlwaysLib(nil), compat.Sonames.Always...) }

// CudnnSublibraries returns the sub-libraries libcudnn.so.<major> loads.
func CudnnSublibraries(major int) ([]string, Mark) {
	switch major {
	case 8:
		return compat.Sonames.Sublibs.V8, compat.Sonames.Sublibs.Mark
	case 9:
		return compat.Sonames.Sublibs.V9, compat.Sonames.Sublibs.Mark
	}
	return nil, MarkU
}

// RequiredLibs are the libraries TensorFlow needs before it registers a GPU.
func RequiredLibs() ([]string, Mark) {
	return append([]string(nil), compat.Sonames.Required.Libs...), compat.Sonames.Required.Mark
}

// WheelLibDirs are the site-packages-relative folders that TensorFlow's
// RUNPATH names for the pip nvidia-* wheels of a CUDA major.
func WheelLibDirs(cudaMajor int) ([]string, Mark) {
	if cudaMajor >= 13 {
		return append([]string(nil), compat.WheelDirs.CUDA13...), compat.WheelDirs.Mark
	}
	return append([]string(nil), compat.WheelDirs.CUDA12...), compat.WheelDirs.Mark
}

// MinComputeCapability returns the minimum compute capability of a
// TensorFlow version (by major.minor). For "" (no TensorFlow installed)
// it returns the most permissive row: a GPU below it has no release at all.
func MinComputeCapability(version string) (CCRow, bool) {
	v := Version(version)
	if len(v) == 0 {
		var best *CCRow
		for i := range compat.CC.Rows {
			r := &compat.CC.Rows[i]
			if best == nil || CompareVersions(Version(r.MinCC), Version(best.MinCC)) < 0 {
				best = r
			}
		}
		if best == nil {
			return CCRow{}, false
		}
		return *best, true
	}
	for _, r := range compat.CC.Rows {
		if inMinorRange(v, r.Min, r.Max) {
			return r, true
		}
	}
	return CCRow{}, false
}

// SupportsCC reports whether a TensorFlow release's wheels support a GPU of
// compute capability cc ("5.2"), by the minimum of its row, and the row.
// Unknown versions or capabilities count as supported (nothing to hold
// against them).
func SupportsCC(version, cc string) (bool, CCRow) {
	c := Version(cc)
	row, ok := MinComputeCapability(version)
	if !ok || len(c) < 2 || len(Version(version)) == 0 {
		return true, row
	}
	return CompareVersions(c[:2], Version(row.MinCC)) >= 0, row
}

// KnownCCFailure returns the known failure of a TensorFlow release on a GPU
// of compute capability cc, when the table has one.
func KnownCCFailure(version, cc string) (CCFailure, bool) {
	v, c := Version(version), Version(cc)
	if len(v) == 0 || len(c) < 2 {
		return CCFailure{}, false
	}
	for _, f := range compat.CC.Failing {
		if CompareVersions(c[:2], Version(f.MinCC)) >= 0 && inMinorRange(v, f.Min, f.Max) {
			return f, true
		}
	}
	return CCFailure{}, false
}

// CCFailures lists the known failures (for doctor rules and tests).
func CCFailures() []CCFailure { return append([]CCFailure(nil), compat.CC.Failing...) }

// inMinorRange reports whether v's major.minor lies in [lo, hi] (hi ""
// is open).
func inMinorRange(v VersionNumber, lo, hi string) bool {
	mm := v
	if len(mm) > 2 {
		mm = mm[:2]
	}
	if CompareVersions(mm, Version(lo)) < 0 {
		return false
	}
	return hi == "" || CompareVersions(mm, Version(hi)) <= 0
}

// XLA returns where XLA looks for its CUDA data (ptxas, libdevice).
func XLA() XLAData { return compat.XLA }

// VersionNumber is a dotted version as numbers ("2.15.0.post1" -> 2 15 0;
// the first non-numeric part ends it).
type VersionNumber []int

// Version parses the leading numeric parts of a version string.
func Version(s string) VersionNumber {
	var out VersionNumber
	for _, p := range strings.Split(strings.TrimSpace(s), ".") {
		n := 0
		digits := 0
		for _, c := range p {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
			digits++
			if n > 1<<30 {
				return out
			}
		}
		if digits == 0 {
			break
		}
		out = append(out, n)
		if digits != len(p) {
			break
		}
	}
	return out
}

// Major is the first number (0 when empty).
func (v VersionNumber) Major() int {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// Minor is the second number (0 when absent).
func (v VersionNumber) Minor() int {
	if len(v) < 2 {
		return 0
	}
	return v[1]
}

func (v VersionNumber) String() string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}

// CompareVersions compares numerically; missing parts count as 0.
func CompareVersions(a, b VersionNumber) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		x, y := 0, 0
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func pyRange(s string) (VersionNumber, VersionNumber, bool) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return nil, nil, false
	}
	l, h := Version(lo), Version(hi)
	if len(l) < 2 || len(h) < 2 {
		return nil, nil, false
	}
	return l[:2], h[:2], true
}
