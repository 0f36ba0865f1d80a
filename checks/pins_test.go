package checks_test

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
	"github.com/tfdoctor/doctor/rules"
)

// Issue 12, items 5-7: every version pin and conda package spec that any
// check prints, over every recorded machine in testdata/ (and each of them
// with every Python TensorFlow has supported), is one the knowledge marks
// as existing and verified (V or S), or one the machine itself has
// installed. Nothing names conda cudnn 8.6/8.7, tensorflow[and-cuda]==2.15.0
// or the latest-dkms stream.

var (
	pipPinRE    = regexp.MustCompile(`([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9,._-]+\])?==([0-9][A-Za-z0-9.+!_-]*)`)
	condaSpecRE = regexp.MustCompile(`(?:^|[\s'"])([a-z][a-z0-9._-]*)=([0-9][0-9.*]*)(?:$|[\s'"])`)
)

func recordedMachines(t *testing.T) []string {
	var out []string
	for _, pat := range []string{"../testdata/scenarios/*/snapshot.json", "../testdata/upper/*/snapshot.json", "../testdata/snapshots/*/snapshot.json"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 30 {
		t.Fatalf("only %d recorded machines", len(out))
	}
	return out
}

func readSnap(t *testing.T, file string) *host.Snapshot {
	s, err := host.LoadSnapshot(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// installed lists what the machine has: pip name==version and conda
// name=version.
func installed(s *host.Snapshot) map[string]bool {
	have := map[string]bool{}
	if s.Python == nil {
		return have
	}
	for _, d := range s.Python.Distributions {
		have[strings.ToLower(d.Name)+"=="+d.Version] = true
		have[d.Key+"=="+d.Version] = true
	}
	for _, c := range s.Python.CondaPackages {
		have[c.Name+"="+c.Version] = true
	}
	if tf := s.Python.TensorFlow; tf != nil && tf.Version != "" {
		have["tensorflow=="+tf.Version] = true
	}
	return have
}

func TestEveryPrintedPinIsKnown(t *testing.T) {
	checked := map[string]bool{}
	for _, file := range recordedMachines(t) {
		base := readSnap(t, file)
		pys := []string{""}
		if base.Python != nil && base.Python.Found {
			pys = []string{base.Python.Version, "3.8.18", "3.9.18", "3.10.12", "3.11.7", "3.12.3", "3.13.1"}
		}
		for _, py := range pys {
			s := readSnap(t, file)
			if py != "" {
				s.Python.Version = py
			}
			r, err := rules.Evaluate(s, rules.Options{})
			if err != nil {
				t.Fatal(err)
			}
			have := installed(s)
			for _, f := range r.Findings {
				for _, fx := range f.Fixes {
					texts := append([]string{}, fx.Steps...)
					for _, k := range []string{"requirement", "packages"} {
						if v := fx.Params[k]; v != "" {
							texts = append(texts, v)
						}
					}
					for _, text := range texts {
						where := file + " (Python " + py + ") " + f.ID + " " + fx.ID + ": " + text
						if strings.Contains(text, "latest-dkms") {
							t.Errorf("%s: the latest-dkms stream is the old proprietary one", where)
						}
						for _, m := range pipPinRE.FindAllStringSubmatch(text, -1) {
							name, version := strings.ToLower(m[1]), m[3]
							pin := name + m[2] + "==" + version
							checked[pin] = true
							if s.Python != nil {
								if u, bad := knowledge.PipUninstallable(pin, s.Python.Version); bad {
									t.Errorf("%s: %s cannot install: %s", where, pin, u.Why)
								}
							}
							if have[name+"=="+version] {
								continue
							}
							if mark, _, ok := knowledge.KnownPipVersion(name, version); !ok || !mark.Verified() {
								t.Errorf("%s: %s==%s is not a version the knowledge marks as existing and verified (mark %q)", where, name, version, mark)
							}
						}
						if !strings.Contains(text, "conda") && fx.ID != checks.FixCondaReinstall {
							continue
						}
						for _, m := range condaSpecRE.FindAllStringSubmatch(" "+text+" ", -1) {
							spec := m[1] + "=" + m[2]
							checked[spec] = true
							if have[spec] {
								continue
							}
							if mark, _, ok := knowledge.KnownCondaSpec(spec); !ok || !mark.Verified() {
								t.Errorf("%s: conda %s is not a spec the knowledge marks as existing on conda-forge", where, spec)
							}
						}
					}
				}
			}
		}
	}
	var list []string
	for k := range checked {
		list = append(list, k)
	}
	sort.Strings(list)
	t.Logf("%d pins and specs checked: %s", len(list), strings.Join(list, " "))
	if len(list) < 5 {
		t.Errorf("too few pins seen to mean anything: %v", list)
	}
}

// Item 5: conda-forge has no cudnn 8.6 or 8.7; TensorFlow 2.12/2.13 get
// their own recipe (cudatoolkit=11.8.0 + nvidia-cudnn-cu11==8.6.0.163).
func TestCondaForgeCudnn(t *testing.T) {
	for _, v := range []string{"8.5", "8.6", "8.7"} {
		if got, _, _, ok := knowledge.CondaForgeCudnn(v); ok {
			t.Errorf("conda-forge cudnn %s: %s", v, got)
		}
	}
	if got, m, src, ok := knowledge.CondaForgeCudnn("8.9"); !ok || got != "8.9.7.29" || m != knowledge.MarkV || !strings.Contains(src, "cudnn-feedstock") {
		t.Errorf("conda-forge cudnn 8.9: %s %s %s", got, m, src)
	}
	for _, tf := range []string{"2.12.0", "2.13.1"} {
		r, ok := knowledge.RecipeFor(tf)
		if !ok || strings.Join(r.Conda, " ") != "cudatoolkit=11.8.0" || strings.Join(r.Pip, " ") != "nvidia-cudnn-cu11==8.6.0.163" || !strings.Contains(r.Activate, "LD_LIBRARY_PATH") {
			t.Errorf("recipe for %s: %+v", tf, r)
		}
	}
	// A conda env whose TensorFlow 2.13 loads an older cuDNN: the fix is
	// the recipe's wheel, not conda cudnn=8.6.
	s := loadUpper(t, "conda-cudnn-gone")
	s.Python.TensorFlow.Version = "2.13.0"
	s.Libraries.TFVersion, s.Libraries.CUDNN = "2.13.0", "8.6"
	f := runOne(t, checks.CUDNNVersion, s)
	for _, x := range f {
		for _, fx := range x.Fixes {
			for _, st := range fx.Steps {
				if strings.Contains(st, "cudnn=8.6") || strings.Contains(st, "cudnn=8.7") {
					t.Errorf("%s prints %q", x.ID, st)
				}
			}
		}
	}
}

// Item 6: 2.15.0 is installed as 2.15.0.post1; 2.14.0 on Python 3.11 gets
// no [and-cuda] (tensorrt 8.5.3.1 has no wheel for it), and says so.
func TestUninstallablePins(t *testing.T) {
	s := loadUpper(t, "tf215-cudnn-missing")
	s.Python.Version = "3.11.7"
	s.NVML.CUDADriverVersion, s.NVML.DriverVersion = 11080, "520.61.05"
	s.Python.Distributions = nil
	s.Python.TensorFlow = nil
	f := only(t, runOne(t, checks.TensorFlowInstall, s), "python.tensorflow")
	if !hasStep(&f, "-m pip install tensorflow==2.14.0") || hasStep(&f, "-m pip install 'tensorflow[and-cuda]") || !hasStep(&f, "issues/61986") {
		t.Errorf("2.14 on Python 3.11: %+v", f.Fixes)
	}
	// TensorFlow 2.15.0 installed, its cuDNN gone: the reinstall names
	// 2.15.0.post1.
	s = loadUpper(t, "tf215-cudnn-missing")
	var seen bool
	for _, x := range runOne(t, checks.CUDALibraries, s) {
		for _, fx := range x.Fixes {
			if fx.Params["requirement"] == "tensorflow[and-cuda]==2.15.0" {
				t.Errorf("%s asks for tensorflow[and-cuda]==2.15.0", x.ID)
			}
			seen = seen || fx.Params["requirement"] == "tensorflow[and-cuda]==2.15.0.post1"
		}
	}
	if !seen {
		t.Errorf("no fix installs tensorflow[and-cuda]==2.15.0.post1")
	}
}
