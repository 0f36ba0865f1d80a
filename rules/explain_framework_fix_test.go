package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
)

// tfFix reports whether a printed fix is TensorFlow's: a TensorFlow-only
// catalog ID, or a step that only a TensorFlow user can follow.
func tfFix(f checks.Fix) bool {
	if tfOnlyFixes[f.ID] || tfStep(f.Title) {
		return true
	}
	for _, s := range f.Steps {
		if tfStep(s) {
			return true
		}
	}
	return false
}

func fixIDs(fs []checks.Fix) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

// frameworkOfLines returns the one framework the lines name, or "" when
// they name none or several.
func frameworkOfLines(lines []string) string {
	found := ""
	for _, l := range lines {
		for _, name := range lineFrameworksOf(l) {
			if found != "" && found != name {
				return ""
			}
			found = name
		}
	}
	return found
}

// TestFrameworkFixes: the reviewer's probe logs of other frameworks
// (testdata/framework_fix, review item 8) keep their root cause but print
// none of TensorFlow's fixes; a fix the catalog has for that framework
// stays.
func TestFrameworkFixes(t *testing.T) {
	for _, c := range []struct {
		log, sig, framework string
		want                []string // fix IDs, in order
	}{
		{"p_torchext", "framework.torch_extension_cuda_mismatch", "pytorch", nil},
		{"r_xf", "framework.xformers_build_mismatch", "pytorch", nil},
		{"r_bnb", "framework.bitsandbytes_no_binary_for_cuda", "pytorch", nil},
		{"p_paddle", "framework.paddle_version_mismatch", "paddle", []string{checks.FixLDLibraryPath}},
		{"r_pipconf", "pip.tf_dependency_conflict", "pytorch", nil},
		{"p_header", "build.cuda_header_missing", "other", nil},
		{"r_sm120", "gpu.torch_arch_not_in_build", "pytorch", nil},
		{"r_compile", "pip.requires_python", "pytorch", nil},
		{"r_cv", "framework.library_without_gpu_build", "opencv", nil},
		{"p_oom", "cuda.out_of_memory", "pytorch", nil},
		{"p_pipcu", "pip.no_matching_distribution", "pytorch", nil},
		{"p_paddlepip", "pip.no_matching_distribution", "paddle", nil},
	} {
		t.Run(c.log, func(t *testing.T) {
			r := explainFile(t, filepath.Join("testdata/framework_fix", c.log+".log"))
			var f *checks.Finding
			for i := range r.Findings {
				if r.Findings[i].Evidence["signature"] == c.sig {
					f = &r.Findings[i]
				}
			}
			if f == nil {
				t.Fatalf("no finding of %s", c.sig)
			}
			if f.Evidence["framework"] != c.framework {
				t.Errorf("framework %v, want %s", f.Evidence["framework"], c.framework)
			}
			if got, want := strings.Join(fixIDs(f.Fixes), ","), strings.Join(c.want, ","); got != want {
				t.Errorf("fixes [%s], want [%s]", got, want)
			}
			for _, fx := range f.Fixes {
				if tfFix(fx) {
					t.Errorf("TensorFlow fix %s on a %s finding: %q", fx.ID, c.framework, fx.Steps)
				}
			}
		})
	}
}

// TestNoTensorFlowFixForOtherFrameworks: every example of every finding
// signature, explained alone; a finding whose evidence is another
// framework's (declared, or named by its line) carries no TensorFlow fix,
// and one whose line names only another framework is read as that
// framework's.
func TestNoTensorFlowFixForOtherFrameworks(t *testing.T) {
	lib := mustLibrary()
	for _, s := range lib.sigs {
		if s.Kind != "" && s.Kind != KindFinding {
			continue
		}
		for _, ex := range s.Examples {
			named := frameworkOfLines([]string{ex})
			r := ExplainText(ex)
			for _, f := range r.Findings {
				if f.Evidence["signature"] != s.ID {
					continue
				}
				fw, _ := f.Evidence["framework"].(string)
				if named != "" && named != FrameworkTensorFlow && (fw == "" || fw == FrameworkTensorFlow) {
					t.Errorf("%s: %q names %s but the finding is read as %q", s.ID, ex, named, fw)
				}
				if fw == "" || fw == FrameworkTensorFlow {
					continue
				}
				for _, fx := range f.Fixes {
					if tfFix(fx) {
						t.Errorf("%s (%s): TensorFlow fix %s for %q", s.ID, fw, fx.ID, ex)
					}
				}
			}
		}
	}
}

func TestFixesFor(t *testing.T) {
	fixes := []checks.Fix{
		{ID: checks.FixPipInstallTensorFlow, Steps: []string{"python -m pip install 'tensorflow[and-cuda]'"}},
		{ID: checks.FixLDLibraryPath, Steps: []string{"python -m pip install 'tensorflow[and-cuda]'   # pinned", "ldconfig -p | grep cudnn"}},
		{ID: checks.FixFrameworkGPUBuild, Steps: []string{"PyTorch: ..."}},
		{ID: checks.FixInstallDriver, Steps: []string{"Or install a TensorFlow/PyTorch build made for the CUDA version"}},
	}
	for _, c := range []struct{ fw, want string }{
		{"", "pip-install-tensorflow,ld-library-path,framework-gpu-build,install-driver"},
		{FrameworkTensorFlow, "pip-install-tensorflow,ld-library-path,framework-gpu-build,install-driver"},
		{"pytorch", "ld-library-path,framework-gpu-build,install-driver"},
		{"opencv", "ld-library-path,install-driver"},
	} {
		got := fixesFor(c.fw, fixes)
		if s := strings.Join(fixIDs(got), ","); s != c.want {
			t.Errorf("%q: %s, want %s", c.fw, s, c.want)
		}
		if c.fw == "pytorch" && len(got[0].Steps) != 1 {
			t.Errorf("TensorFlow step kept: %q", got[0].Steps)
		}
	}
	if len(fixes[1].Steps) != 2 {
		t.Error("fixesFor changed its input")
	}
}

// TestLineFrameworksPrefilter: the word test before each expression
// never hides a match — over every line of the corpus, the frameworks
// named are those the expressions alone find.
func TestLineFrameworksPrefilter(t *testing.T) {
	for _, c := range readCorpus(t) {
		for _, line := range strings.Split(c.Log, "\n") {
			var want []string
			for _, lf := range lineFrameworks {
				if lf.re.MatchString(line) {
					want = append(want, lf.name)
				}
			}
			if got := lineFrameworksOf(line); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%s: %q names %v, the expressions alone %v", c.ID, line, got, want)
			}
		}
	}
}
