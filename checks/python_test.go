package checks_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	goldenpkg "github.com/tfdoctor/doctor/internal/golden"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

// The scenarios of issue 3 are recorded snapshots (host's
// TestUpperScenarioSnapshots builds and gathers them); beside each is
// expected.json, the findings of the upper links. -update rewrites it.

const upperDir = "../testdata/upper"

func loadUpper(t *testing.T, name string) *host.Snapshot {
	t.Helper()
	s, err := host.LoadSnapshot(filepath.Join(upperDir, name, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// evalUpper runs the checks of the two upper links.
func evalUpper(t *testing.T, s *host.Snapshot) *rules.Report {
	t.Helper()
	r, err := rules.Evaluate(s, rules.Options{Only: []string{string(checks.LinkLibraries), string(checks.LinkPython)}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type goldenFix struct {
	ID     string            `json:"id"`
	Steps  []string          `json:"steps"`
	Params map[string]string `json:"params,omitempty"`
}

type goldenFinding struct {
	ID       string      `json:"id"`
	Cause    string      `json:"cause"`
	Severity string      `json:"severity"`
	Title    string      `json:"title"`
	Fixes    []goldenFix `json:"fixes,omitempty"`
}

type golden struct {
	RootCause *rules.RootCause `json:"root_cause"`
	Findings  []goldenFinding  `json:"findings"`
}

func goldenOf(r *rules.Report) golden {
	g := golden{RootCause: r.RootCause, Findings: []goldenFinding{}}
	for _, f := range r.Findings {
		if f.Severity == checks.SevOK || f.Skipped {
			continue
		}
		gf := goldenFinding{ID: f.ID, Cause: f.Cause, Severity: string(f.Severity), Title: f.Title}
		for _, x := range f.Fixes {
			gf.Fixes = append(gf.Fixes, goldenFix{ID: x.ID, Steps: x.Steps, Params: x.Params})
		}
		g.Findings = append(g.Findings, gf)
	}
	return g
}

// want is one finding a scenario must produce.
type want struct {
	id, cause string
	sev       checks.Severity
	// fixStep, when set, must appear in one of the finding's fix steps.
	fixStep string
}

var upperScenarios = []struct {
	name      string
	rootCause string // "" for none
	wants     []want
}{
	{"tf215-cudnn-missing", "libcudnn_missing", []want{
		{"libs.cuda_libraries/cudnn", "libcudnn_missing", checks.SevError, "/home/user/tf/bin/python3 -m pip install 'tensorflow[and-cuda]==2.15.0.post1'"},
		{"python.compute_capability/gpu0", "unsupported_compute_capability", checks.SevWarning, ""},
	}},
	{"tf215-python312", "python_version_unsupported", []want{
		{"python.environment", "python_version_unsupported", checks.SevError, "/home/user/tf/bin/python3 -m pip install 'tensorflow[and-cuda]==2.21.0'"},
	}},
	{"tf-plus-tf-cpu", "multiple_tf_installs_conflict", []want{
		{"python.tf_conflict", "multiple_tf_installs_conflict", checks.SevError, "/home/user/tf/bin/python3 -m pip uninstall -y tensorflow-cpu"},
	}},
	{"cpu-only-build", "tf_cpu_only_build_installed", []want{
		{"python.tensorflow", "tf_cpu_only_build_installed", checks.SevError, "/home/user/tf/bin/python3 -m pip install --force-reinstall 'tensorflow[and-cuda]==2.17.0'"},
	}},
	{"ld-library-path-cuda11", "ld_library_path_pollution", []want{
		{"libs.ld_library_path", "ld_library_path_pollution", checks.SevError, "unset LD_LIBRARY_PATH   # this shell"},
		{"libs.cuda_major", "cuda_version_mismatch_tf_build", checks.SevError, "unset LD_LIBRARY_PATH"},
		{"libs.cudnn_version", "cudnn_version_mismatch", checks.SevError, "unset LD_LIBRARY_PATH"},
	}},
	{"libdevice-missing", "xla_ptxas_or_libdevice_missing", []want{
		{"libs.xla", "xla_ptxas_or_libdevice_missing", checks.SevWarning, "/home/user/tf/bin/python3 -m pip install nvidia-cuda-nvcc-cu12==12.2.140"},
	}},
	{"conda-cudnn-gone", "libcudnn_missing", []want{
		{"libs.cuda_libraries/cudnn", "libcudnn_missing", checks.SevError, "conda install -y --force-reinstall -p /home/user/miniconda3/envs/tf -c conda-forge cudnn=8.1.0.77"},
		{"libs.conda_files/cudnn", "libcudnn_missing", checks.SevError, "conda install -y --force-reinstall -p /home/user/miniconda3/envs/tf -c conda-forge cudnn=8.1.0.77"},
	}},
	{"jupyter-other-env", "jupyter_kernel_wrong_env", []want{
		{"python.jupyter/tf", "jupyter_kernel_wrong_env", checks.SevWarning, "/home/user/tf/bin/python3 -m ipykernel install --user --name tf --display-name 'Python (tf)'"},
	}},
	{"tf216-healthy", "", nil},
	{"gpu-machine-cuda13", "tf_not_installed", []want{
		{"python.tensorflow", "tf_not_installed", checks.SevError, "/opt/torch/.venv/bin/python3 -m pip install 'tensorflow[and-cuda]==2.21.0'"},
		{"libs.driver_cuda", "healthy", checks.SevOK, ""},
		{"libs.cuda_libraries/present", "healthy", checks.SevInfo, ""},
	}},
}

func TestUpperScenarios(t *testing.T) {
	for _, sc := range upperScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := loadUpper(t, sc.name)
			r := evalUpper(t, s)
			switch {
			case sc.rootCause == "" && r.RootCause != nil:
				t.Errorf("root cause %s (%s), want none", r.RootCause.Cause, r.RootCause.Title)
			case sc.rootCause != "" && (r.RootCause == nil || r.RootCause.Cause != sc.rootCause):
				t.Errorf("root cause %+v, want %s", r.RootCause, sc.rootCause)
			}
			for _, w := range sc.wants {
				f := findFinding(r, w.id)
				if f == nil {
					t.Errorf("no finding %s; have %v", w.id, findingIDs(r))
					continue
				}
				if f.Cause != w.cause || f.Severity != w.sev {
					t.Errorf("%s: %s/%s, want %s/%s (%s)", w.id, f.Cause, f.Severity, w.cause, w.sev, f.Title)
				}
				if w.fixStep != "" && !hasStep(f, w.fixStep) {
					t.Errorf("%s: no fix step %q in %+v", w.id, w.fixStep, f.Fixes)
				}
			}
			// Unverified rows never give an error on their own: every error
			// here is backed by a V/S row, the build's own facts, or the
			// absence of every copy.
			for _, f := range r.Findings {
				if f.Check == "libs.toolkit" && f.Failing() {
					t.Errorf("the toolkit is only noted: %+v", f)
				}
			}
			// The golden findings.
			got, _ := json.MarshalIndent(goldenOf(r), "", "  ")
			got = append(got, '\n')
			file := filepath.Join(upperDir, sc.name, "expected.json")
			goldenpkg.Check(t, file, got)

		})
	}
}

func findFinding(r *rules.Report, id string) *checks.Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

func findingIDs(r *rules.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.ID+"="+string(f.Severity))
	}
	return out
}

func hasStep(f *checks.Finding, step string) bool {
	for _, x := range f.Fixes {
		for _, s := range x.Steps {
			if strings.Contains(s, step) {
				return true
			}
		}
	}
	return false
}

// TestAcceptanceGPUMachineText is acceptance 1 on the recorded GPU-machine
// scenario: the examined environment is the Python 3.12 venv, TensorFlow is
// missing with a pin that supports 3.12, the CUDA 13 libraries are listed
// with the file that wins, and the CUDA 13.0 driver runs TF's CUDA 12 build.
func TestAcceptanceGPUMachineText(t *testing.T) {
	s := loadUpper(t, "gpu-machine-cuda13")
	r := evalUpper(t, s)
	env := findFinding(r, "python.environment")
	if env == nil || !strings.Contains(env.Title, "Python 3.12.3, venv /opt/torch/.venv") {
		t.Errorf("environment: %+v", env)
	}
	drv := findFinding(r, "libs.driver_cuda")
	if drv == nil || drv.Severity != checks.SevOK || !strings.Contains(drv.Title, "CUDA 13.0") || !strings.Contains(drv.Title, "CUDA 12.5") {
		t.Errorf("driver: %+v", drv)
	}
	pr := findFinding(r, "libs.cuda_libraries/present")
	if pr == nil {
		t.Fatal("no present-libraries finding")
	}
	for _, want := range []string{
		"libcudart.so.13 → /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13 (13.0.96, CUDA 13, runpath, shadows 1)",
		"libcudnn.so.9 → /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9 (9.13.0.50, CUDA 13, runpath)",
		"libcuda.so.1 → /usr/local/nvidia/lib64/libcuda.so.1",
		"libcublas.so.13 → /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13",
	} {
		if !strings.Contains(pr.Detail+strings.Join(fmtList(pr.Evidence["present"]), "\n"), want) {
			t.Errorf("present list lacks %q:\n%s", want, pr.Detail)
		}
	}
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(r)
	if strings.Contains(b.String(), `"severity":"error"`) && r.RootCause.Cause != "tf_not_installed" {
		t.Errorf("unexpected root cause %+v", r.RootCause)
	}
}

func fmtList(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
