package checks

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// Checks of the Python & TensorFlow link: which environment is examined,
// which TensorFlow it has and how that TensorFlow was built.

// pythonCollected skips a check when the python collector did not run or
// found no interpreter; it returns the examined environment.
func pythonCollected(p *Pass) (*host.Python, bool) {
	s := p.Snap
	st, ran := collector(s, "python")
	switch {
	case !ran && st.Skipped != "":
		p.Skip("the python collector was skipped: " + st.Skipped)
		return nil, false
	case !ran || s.Python == nil:
		p.Skip("the Python environment was not examined")
		return nil, false
	case st.TimedOut:
		p.Skip("the python collector timed out")
		return nil, false
	}
	return s.Python, true
}

func tfInstalled(py *host.Python) bool {
	return py != nil && py.TensorFlow != nil && py.TensorFlow.Importable && py.TensorFlow.Dist != ""
}

// envLabel names an environment for people: "venv /opt/torch/.venv".
func envLabel(py *host.Python) string {
	switch py.Kind {
	case "conda":
		return fmt.Sprintf("conda env %s (%s)", py.EnvName, py.Prefix)
	case "venv":
		return "venv " + py.Prefix
	case "pyenv":
		return "pyenv " + py.Prefix
	}
	return "system Python " + orDefault(py.Prefix, py.Executable)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shQuote quotes a word for a POSIX shell.
func shQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// driverCUDA returns the CUDA version the driver supports (major, minor)
// and how it is known; 0 when unknown.
func driverCUDA(s *host.Snapshot) (major, minor int, from string) {
	if v := s.NVML.CUDADriverVersion; v > 0 {
		return v / 1000, (v % 1000) / 10, "NVML"
	}
	drv := s.NVML.DriverVersion
	if drv == "" {
		drv = s.Modules.KernelDriverVersion
	}
	if drv == "" {
		drv = s.Modules.UserspaceDriver
	}
	if m, _ := knowledge.CUDAMajorForDriver(drv); m > 0 {
		return m, 0, "driver " + drv + " (minor-version compatibility floor)"
	}
	return 0, 0, ""
}

func driverVersion(s *host.Snapshot) string {
	for _, v := range []string{s.NVML.DriverVersion, s.Modules.KernelDriverVersion, s.Modules.UserspaceDriver} {
		if v != "" {
			return v
		}
	}
	return ""
}

// gpuCCs are the compute capabilities of the GPUs NVML lists.
func gpuCCs(s *host.Snapshot) []string {
	var out []string
	for _, g := range s.NVML.GPUs {
		if len(knowledge.Version(g.ComputeCapability)) >= 2 {
			out = append(out, g.ComputeCapability)
		}
	}
	return out
}

// tfChoose picks the newest TensorFlow release for the examined Python and
// the GPUs' compute capability and, when maxCUDA > 0, one whose CUDA major
// the driver runs; Why says what ruled out newer releases.
func tfChoose(s *host.Snapshot, maxCUDA int) (knowledge.TFChoice, bool) {
	py := ""
	if s.Python != nil {
		py = s.Python.Version
	}
	return knowledge.NewestTF(py, maxCUDA, gpuCCs(s))
}

// tfPin picks the TensorFlow to install in the examined environment: the
// newest release whose Python range holds the examined Python, whose wheels
// support the GPUs and, when the driver is known, whose CUDA major the
// driver runs (else the newest regardless of the driver: a driver can be
// upgraded, a GPU's architecture cannot).
func tfPin(s *host.Snapshot) (knowledge.TFBuild, bool) {
	c, ok := tfPinChoice(s)
	return c.Build, ok
}

func tfPinChoice(s *host.Snapshot) (knowledge.TFChoice, bool) {
	maxCUDA, _, _ := driverCUDA(s)
	if c, ok := tfChoose(s, maxCUDA); ok || maxCUDA == 0 {
		return c, ok
	}
	return tfChoose(s, 0)
}

// tfWhy says why the recommended release is not a newer one ("" when it
// is the newest).
func tfWhy(s *host.Snapshot) string {
	c, ok := tfPinChoice(s)
	if !ok {
		return ""
	}
	return whyText(c)
}

// tfRequirement is the pip requirement for a TensorFlow release on
// Python py: tensorflow[and-cuda]==X from 2.14 on (the extra pulls the CUDA
// wheels), plain tensorflow==X before. A requirement the knowledge says
// cannot install is replaced (2.15.0 -> 2.15.0.post1) or loses its extra
// (2.14.0 on Python 3.11); why says so ("" otherwise).
func tfRequirement(version, py string) (req, why string) {
	if knowledge.CompareVersions(knowledge.Version(version), knowledge.Version("2.14")) < 0 {
		return "tensorflow==" + version, ""
	}
	req = "tensorflow[and-cuda]==" + version
	if u, ok := knowledge.PipUninstallable(req, py); ok && u.Mark.Verified() {
		if u.Use != "" {
			return u.Use, fmt.Sprintf("TensorFlow %s with [and-cuda] cannot install: %s (%s).", version, u.Why, u.Source)
		}
		return "tensorflow==" + version, fmt.Sprintf("TensorFlow %s with [and-cuda] cannot install on Python %s: %s (%s); the CUDA libraries must come another way.", version, majorMinorOf(py), u.Why, u.Source)
	}
	return req, ""
}

// ByHand starts a fix step that doctor prints but does not run.
const ByHand = "By hand: "

// venvTarget is where doctor suggests a fresh venv when the examined
// Python is the system's (pip refuses to install there, PEP 668).
func venvTarget(s *host.Snapshot) string {
	home := s.Platform.Home
	if home == "" {
		home = s.Env["HOME"]
	}
	if home == "" {
		home = "$HOME"
	}
	return path.Join(home, "tf-venv")
}

func envParams(py *host.Python) map[string]string {
	return map[string]string{"python": py.Executable, "env_prefix": py.Prefix, "env_kind": py.Kind}
}

// pipInstallTF is the fix that installs a pinned TensorFlow with the
// examined interpreter (or a new venv made from it, for a system Python).
// Its steps are the commands the plan runs, in order; lines that start
// with ByHand are printed only.
func pipInstallTF(s *host.Snapshot, version string, force bool) Fix {
	py := s.Python
	req, why := tfRequirement(version, py.Version)
	params := envParams(py)
	params["requirement"] = req
	python := py.Executable
	var steps []string
	if py.Kind == "system" {
		v := venvTarget(s)
		steps = append(steps, shQuote(py.Executable)+" -m venv "+shQuote(v))
		python = path.Join(v, "bin", "python")
		params["python"], params["env_prefix"], params["env_kind"], params["create_venv"] = python, v, "venv", py.Executable
	}
	install := shQuote(python) + " -m pip install "
	if force {
		install += "--force-reinstall "
		params["force_reinstall"] = "true"
	}
	steps = append(steps, install+shQuote(req))
	if why != "" {
		steps = append(steps, ByHand+why)
	}
	if !strings.Contains(req, "[and-cuda]") {
		steps = append(steps, cudaRecipeSteps(version)...)
	}
	return Fix{ID: FixPipInstallTensorFlow, Title: fmt.Sprintf("Install TensorFlow %s with its CUDA libraries in %s", version, envLabel(py)),
		Risk: RiskModerate, Steps: steps, Params: params}
}

// cudaRecipeSteps is TensorFlow's own recipe for the CUDA libraries of a
// release without the [and-cuda] extra, printed only; without a verified
// recipe it names the versions and nothing to run.
func cudaRecipeSteps(version string) []string {
	b, ok := knowledge.TFBuildFor(version)
	if !ok {
		return nil
	}
	r, ok := knowledge.RecipeFor(version)
	if !ok || !r.Mark.Verified() {
		return []string{fmt.Sprintf("%sinstall CUDA %s and cuDNN %s for TensorFlow %s (it has no [and-cuda] extra; doctor knows no verified recipe for it)", ByHand, b.CUDA, b.CUDNN, version)}
	}
	out := []string{fmt.Sprintf("%sTensorFlow %s has no [and-cuda] extra; its documented CUDA %s / cuDNN %s recipe, in a conda env (%s):", ByHand, version, b.CUDA, b.CUDNN, r.Source)}
	if len(r.Conda) > 0 {
		out = append(out, ByHand+"conda install -c conda-forge "+strings.Join(r.Conda, " "))
	}
	if len(r.Pip) > 0 {
		out = append(out, ByHand+"python -m pip install "+strings.Join(r.Pip, " "))
	}
	if r.Activate != "" {
		out = append(out, ByHand+"in $CONDA_PREFIX/etc/conda/activate.d/env_vars.sh: "+r.Activate)
	}
	return out
}

// PythonEnvironment reports the examined environment and whether its
// Python is one TensorFlow supports.
var PythonEnvironment = &Check{
	ID:       "python.environment",
	Link:     LinkPython,
	Title:    "Python environment",
	Causes:   []string{"python_version_unsupported", "tf_not_installed"},
	Requires: []string{"python"},
	Doc: `The examined interpreter is --python, else the active conda env
(CONDA_PREFIX) or venv (VIRTUAL_ENV), else python3 on PATH. Its version is
read from pyvenv.cfg, conda-meta or the interpreter's name, without starting
Python. Each TensorFlow release supports a range of Python versions
(tensorflow.org/install/source#gpu): pip falls back to an older release, or
finds none ("No matching distribution found for tensorflow==2.15.0" on
Python 3.12). TensorFlow left in lib/python3.N/site-packages after the
environment's Python was upgraded is not imported at all.`,
	Run: func(p *Pass) {
		py, ok := pythonCollected(p)
		if !ok {
			return
		}
		s := p.Snap
		ev := Ev{"executable": py.Executable, "source": py.Source, "version": py.Version, "version_from": py.VersionFrom, "prefix": py.Prefix, "kind": py.Kind}
		if !py.Found {
			p.Error("tf_not_installed", "No Python interpreter to examine", orDefault(py.Error, "no interpreter found"), ev,
				Fix{ID: FixInstallPython, Title: "Install Python 3 or name the interpreter", Risk: RiskSafe, Manual: true,
					Steps: []string{"doctor --python /path/to/env/bin/python   # the interpreter you run TensorFlow with", "Or install Python 3.12 and create a venv: python3.12 -m venv ~/tf-venv"}})
			return
		}
		if py.Version == "" {
			p.Info("healthy", "Python version unknown ("+envLabel(py)+")", "The environment's files do not say which Python it is; run doctor without --quick to ask the interpreter.", ev)
			return
		}
		lo, hi := knowledge.PythonRange()
		if _, any := knowledge.TFForPython(py.Version, 0); !any {
			p.Error("python_version_unsupported", fmt.Sprintf("No TensorFlow release supports Python %s", py.Version),
				fmt.Sprintf("TensorFlow's tested builds cover Python %s to %s; pip finds no GPU build for %s.", lo, hi, py.Version), ev,
				Fix{ID: FixNewEnvPython, Title: "Create an environment with a Python TensorFlow supports", Risk: RiskSafe, Manual: true,
					Steps: []string{fmt.Sprintf("conda create -n tf python=%s && conda activate tf   # or: uv venv --python %s ~/tf-venv", hi, hi), "python -m pip install 'tensorflow[and-cuda]'", "doctor --python <that env>/bin/python"}})
			return
		}
		tf := py.TensorFlow
		pin, _ := tfPin(s)
		if tf != nil && !tf.Importable && tf.Dist != "" {
			var stale []string
			for _, d := range py.Distributions {
				if d.Stale && host.IsTFDist(d.Key) {
					stale = append(stale, fmt.Sprintf("%s %s in %s", d.Name, d.Version, d.Site))
				}
			}
			if len(stale) > 0 {
				ev["stale"] = stale
				p.Error("python_version_unsupported", fmt.Sprintf("TensorFlow was installed for another Python: the environment now runs Python %s", py.Version),
					fmt.Sprintf("%s; Python %s does not import from there.", strings.Join(stale, "; "), majorMinorOf(py.Version)), ev,
					pipInstallTF(s, pin.TF, false))
				return
			}
		}
		if tfInstalled(py) {
			if b, ok := knowledge.TFBuildFor(tf.Version); ok && !b.SupportsPython(py.Version) {
				ev["tensorflow"] = tf.Version
				ev["supported_python"] = b.Python
				p.Error("python_version_unsupported", fmt.Sprintf("TensorFlow %s does not support Python %s (it supports %s)", tf.Version, majorMinorOf(py.Version), b.Python),
					fmt.Sprintf("TensorFlow %s was built and tested for Python %s; on %s its extension modules do not load. TensorFlow %s supports Python %s%s.%s", tf.Version, b.Python, py.Version, pin.TF, pin.Python, forGPUs(s), tfWhy(s)), ev,
					pipInstallTF(s, pin.TF, false))
				return
			}
		}
		p.OKf(fmt.Sprintf("Python %s, %s", py.Version, envLabel(py)), ev)
	},
}

func majorMinorOf(v string) string {
	if n := knowledge.Version(v); len(n) >= 2 {
		return n[:2].String()
	}
	return v
}

// cpuOnlyDists are distributions that never use an NVIDIA GPU.
var cpuOnlyDists = map[string]string{
	"tensorflow-cpu": "the CPU-only package", "tf-nightly-cpu": "the CPU-only nightly", "tensorflow-macos": "the macOS package",
	"tensorflow-rocm": "the AMD ROCm build", "tensorflow-cpu-aws": "the CPU-only AWS build", "intel-tensorflow": "Intel's CPU-optimized build",
}

// TensorFlowInstall checks that TensorFlow is installed and is a build that
// can use an NVIDIA GPU on this platform.
var TensorFlowInstall = &Check{
	ID:       "python.tensorflow",
	Link:     LinkPython,
	Title:    "TensorFlow install",
	Causes:   []string{"tf_not_installed", "tf_cpu_only_build_installed", "tf_windows_native_gpu_unsupported"},
	Requires: []string{"python", "tensorflow", "python.environment"},
	Doc: `Reads which TensorFlow distribution owns the tensorflow package that
import finds, and its build facts from tensorflow/python/platform/
build_info.py (is_cuda_build, cuda_version, cudnn_version), as files.
tensorflow-cpu and builds without CUDA never see a GPU. Native Windows has
no GPU support after TensorFlow 2.10: use WSL2. The fix installs a pinned
tensorflow[and-cuda]==X with the examined interpreter, X the newest release
whose Python range holds that interpreter's version.`,
	Run: runTensorFlowInstall,
}

func runTensorFlowInstall(p *Pass) {
	py, ok := pythonCollected(p)
	if !ok {
		return
	}
	if !py.Found {
		p.Skip("no interpreter (see python.environment)")
		return
	}
	s := p.Snap
	tf := py.TensorFlow
	pin, havePin := tfPin(s)
	ev := Ev{"python": py.Version, "env": envLabel(py)}
	if tf != nil {
		ev["tensorflow"], ev["dist"], ev["package"], ev["keras"] = tf.Version, tf.Dist, tf.Package, tf.Keras
		if tf.BuildInfo != nil {
			ev["build_info"] = tf.BuildInfo
		}
	}
	if py.Windows || s.Platform.OS == "windows" {
		last, _ := knowledge.LastWindowsNativeGPU()
		if tf == nil || knowledge.CompareVersions(knowledge.Version(majorMinorOf(tf.Version)), knowledge.Version(last)) > 0 {
			p.Error("tf_windows_native_gpu_unsupported", "Native Windows TensorFlow has no GPU support after "+last,
				fmt.Sprintf("%s is a Windows interpreter. TensorFlow %s was the last release that used a GPU on native Windows; newer releases need WSL2.", py.Executable, last), ev,
				Fix{ID: FixUseWSL2, Title: "Run TensorFlow in WSL2", Risk: RiskSafe, Manual: true,
					Steps: []string{"In PowerShell: wsl --install -d Ubuntu", "Inside WSL2: python3 -m venv ~/tf-venv && ~/tf-venv/bin/python -m pip install 'tensorflow[and-cuda]'",
						"Or, native Windows with Python <= 3.10: pip install \"tensorflow<2.11\" with CUDA 11.2 and cuDNN 8.1 (conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0, tensorflow.org/install/pip)"}})
			return
		}
	}
	if tf == nil || tf.Dist == "" && !tf.Importable {
		detail := fmt.Sprintf("No TensorFlow distribution in %s.", envLabel(py))
		var elsewhere []string
		for _, e := range py.Envs {
			if e.TensorFlow != "" && !e.Examined {
				elsewhere = append(elsewhere, fmt.Sprintf("%s %s (%s)", e.Kind, e.Prefix, e.TensorFlow))
			}
		}
		if len(elsewhere) > 0 {
			ev["installed_elsewhere"] = elsewhere
			detail += " TensorFlow is installed in: " + strings.Join(elsewhere, "; ") + " — if you meant that one, run doctor --python <it>/bin/python."
		}
		if !havePin {
			p.Error("tf_not_installed", "TensorFlow is not installed", detail, ev)
			return
		}
		ev["recommended"] = pin.TF
		p.Error("tf_not_installed", "TensorFlow is not installed in "+envLabel(py),
			detail+fmt.Sprintf(" TensorFlow %s is the newest release for Python %s%s (supports Python %s; CUDA %s, cuDNN %s).%s", pin.TF, majorMinorOf(py.Version), forGPUs(s), pin.Python, pin.CUDA, pin.CUDNN, tfWhy(s)),
			ev, pipInstallTF(s, pin.TF, false))
		return
	}
	if !tf.Importable {
		if tf.Dist != "" && !staleOnly(py) {
			ver := tf.Version
			if b, ok := knowledge.TFBuildFor(ver); !ok || !b.SupportsPython(py.Version) {
				ver = pin.TF
			}
			p.Error("tf_not_installed", fmt.Sprintf("%s %s is registered but its package folder is missing", tf.Dist, tf.Version),
				"pip lists the distribution but tensorflow/__init__.py is gone (an interrupted install or uninstall): import tensorflow fails.", ev,
				pipInstallTF(s, ver, true))
		} else {
			p.Skip("TensorFlow is only in another Python's site folder (see python.environment)")
		}
		return
	}
	key := host.NormalizeDistName(tf.Dist)
	version := tf.Version
	target := version
	if b, ok := knowledge.TFBuildFor(version); !ok || !b.SupportsPython(py.Version) || knowledge.CompareVersions(knowledge.Version(version), knowledge.Version("2.14")) < 0 {
		target = pin.TF
	}
	if what, cpu := cpuOnlyDists[key]; cpu || key == "tensorflow-intel" && !py.Windows {
		if what == "" {
			what = "the Windows CPU package"
		}
		p.Error("tf_cpu_only_build_installed", fmt.Sprintf("%s %s is installed: %s, without GPU support", tf.Dist, version, what),
			"This distribution has no CUDA kernels; TensorFlow will list no GPU whatever the driver and libraries.", ev,
			Fix{ID: FixPipUninstall, Title: "Uninstall " + tf.Dist, Risk: RiskModerate,
				Steps:  []string{shQuote(py.Executable) + " -m pip uninstall -y " + tf.Dist},
				Params: withParam(envParams(py), "packages", tf.Dist)},
			pipInstallTF(s, target, true))
		return
	}
	if bi := tf.BuildInfo; bi != nil {
		if bi.IsROCmBuild != nil && *bi.IsROCmBuild {
			p.Error("tf_cpu_only_build_installed", fmt.Sprintf("%s %s is a ROCm (AMD) build", tf.Dist, version), "A ROCm build cannot use an NVIDIA GPU.", ev, pipInstallTF(s, target, true))
			return
		}
		if bi.IsCUDABuild != nil && !*bi.IsCUDABuild {
			p.Error("tf_cpu_only_build_installed", fmt.Sprintf("%s %s was built without CUDA", tf.Dist, version),
				bi.Path+" says is_cuda_build = False: this build never uses a GPU (a CPU-only wheel or conda build).", ev, pipInstallTF(s, target, true))
			return
		}
	}
	built := ""
	if bi := tf.BuildInfo; bi != nil && bi.CUDAVersion != "" {
		built = fmt.Sprintf(" (built with CUDA %s, cuDNN %s)", bi.CUDAVersion, orUnknown(bi.CUDNNVersion))
	}
	p.OKf(fmt.Sprintf("%s %s%s in %s", tf.Dist, version, built, envLabel(py)), ev)
}

func withParam(m map[string]string, k, v string) map[string]string {
	m[k] = v
	return m
}

// staleOnly reports whether every TensorFlow distribution is in a stale
// site folder.
func staleOnly(py *host.Python) bool {
	any := false
	for _, d := range py.Distributions {
		if host.IsTFDist(d.Key) {
			any = true
			if !d.Stale {
				return false
			}
		}
	}
	return any
}

// TensorFlowConflicts finds several TensorFlow distributions overwriting
// one tensorflow/ folder, and copies that shadow the environment's.
var TensorFlowConflicts = &Check{
	ID:       "python.tf_conflict",
	Link:     LinkPython,
	Title:    "One TensorFlow installation",
	Causes:   []string{"multiple_tf_installs_conflict"},
	Requires: []string{"python"},
	Doc: `tensorflow, tensorflow-cpu, tensorflow-gpu and tf-nightly all install the
same tensorflow/ package folder: with two of them, the last install
overwrote part of the other's files, and uninstalling one breaks the other.
A copy in the user site (~/.local/lib/pythonX.Y/site-packages) or on
PYTHONPATH is imported before the environment's own. The fix uninstalls the
extra distributions and reinstalls one pinned TensorFlow.`,
	Run: runTensorFlowConflicts,
}

func runTensorFlowConflicts(p *Pass) {
	py, ok := pythonCollected(p)
	if !ok {
		return
	}
	s := p.Snap
	type loc struct{ name, version, site, from string }
	var found []loc
	from := map[string]string{}
	for _, sp := range py.SitePaths {
		from[sp.Path] = sp.From
	}
	for _, d := range py.Distributions {
		if host.IsTFDist(d.Key) && !d.Stale {
			found = append(found, loc{d.Name, d.Version, d.Site, from[d.Site]})
		}
	}
	keys := map[string][]loc{}
	sites := map[string]bool{}
	for _, f := range found {
		k := host.NormalizeDistName(f.name)
		keys[k] = append(keys[k], f)
		sites[f.site] = true
	}
	if py.Windows {
		delete(keys, "tensorflow-intel") // tensorflow's own dependency on Windows
	}
	var desc []string
	for _, f := range found {
		desc = append(desc, fmt.Sprintf("%s %s (%s: %s)", f.name, f.version, f.from, f.site))
	}
	ev := Ev{"distributions": desc}
	dupInSite := false
	for _, l := range keys {
		seen := map[string]bool{}
		for _, f := range l {
			if seen[f.site] {
				dupInSite = true
			}
			seen[f.site] = true
		}
	}
	if len(keys) <= 1 && len(sites) <= 1 && !dupInSite {
		if len(found) == 0 {
			p.OK("no TensorFlow installed (see python.tensorflow)")
			return
		}
		p.OKf(fmt.Sprintf("one TensorFlow: %s %s", found[0].name, found[0].version), ev)
		return
	}
	var extra []string
	for k := range keys {
		if k != "tensorflow" {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	uninstall := append([]string{}, extra...)
	if _, ok := keys["tensorflow"]; ok && (len(sites) > 1 || dupInSite) {
		uninstall = append([]string{"tensorflow"}, uninstall...)
	}
	title := fmt.Sprintf("%d TensorFlow installations overwrite each other", len(found))
	detail := "Installed: " + strings.Join(desc, "; ") + "."
	if len(sites) > 1 {
		detail += " The first on sys.path (" + found[0].site + ") is the one import loads."
	}
	target := ""
	if tf := py.TensorFlow; tf != nil && tf.Version != "" {
		if b, ok := knowledge.TFBuildFor(tf.Version); ok && b.SupportsPython(py.Version) && knowledge.CompareVersions(knowledge.Version(tf.Version), knowledge.Version("2.14")) >= 0 {
			target = tf.Version
		}
	}
	if target == "" {
		pin, _ := tfPin(s)
		target = pin.TF
	}
	steps := []string{shQuote(py.Executable) + " -m pip uninstall -y " + strings.Join(uninstall, " ")}
	if len(sites) > 1 {
		steps = append(steps, "Repeat the uninstall until pip reports that no TensorFlow is installed (pip removes one copy per run, the first on sys.path)")
	}
	fixes := []Fix{{ID: FixPipUninstall, Title: "Uninstall " + strings.Join(uninstall, ", "), Risk: RiskModerate, Steps: steps,
		Params: withParam(envParams(py), "packages", strings.Join(uninstall, " "))}}
	if target != "" {
		fixes = append(fixes, pipInstallTF(s, target, true))
	}
	p.Error("multiple_tf_installs_conflict", title, detail, ev, fixes...)
}

// ComputeCapability compares the GPUs' compute capability with what the
// TensorFlow build has kernels for.
var ComputeCapability = &Check{
	ID:       "python.compute_capability",
	Link:     LinkPython,
	Title:    "GPU architecture supported by the TensorFlow build",
	Causes:   []string{"unsupported_compute_capability"},
	Requires: []string{"nvml", "driver.nvml"},
	Doc: `A TensorFlow wheel carries GPU code (SASS) for a list of architectures,
and PTX only for the newest (tensorflow.org/install/pip). Older GPUs are
ignored ("The minimum required Cuda capability is ..."): TensorFlow 2.17
removed Maxwell (5.x) from the wheels, so 6.0 is the minimum from 2.17 and
5.0 for the CUDA 12 builds 2.15 and 2.16. Newer GPUs run only after the
driver JIT-compiles the PTX, which can take 30 minutes on the first start,
and fail ("device kernel image is invalid") when there is no PTX at all.
Blackwell GPUs (compute capability 10.0, 12.0) fail on TensorFlow 2.16 to
2.21 with CUDA_ERROR_INVALID_PTX / CUDA_ERROR_INVALID_HANDLE (reported in
tensorflow/tensorflow#89272, #97387, #99592, #101746, #111958). The list
is build_info.py's cuda_compute_capabilities.`,
	Run: runComputeCapability,
}

func runComputeCapability(p *Pass) {
	s := p.Snap
	if !s.NVML.Available || len(s.NVML.GPUs) == 0 {
		p.Skip("no GPU known (NVML not available)")
		return
	}
	py := s.Python
	var caps []string
	tfv := ""
	if py != nil && tfInstalled(py) {
		tfv = py.TensorFlow.Version
		if bi := py.TensorFlow.BuildInfo; bi != nil {
			caps = bi.ComputeCapabilities
		}
	}
	if l := TFLibraries(s); tfv == "" && l != nil {
		tfv = l.TFVersion
	}
	var sass, ptx []knowledge.VersionNumber
	for _, c := range caps {
		v := parseCC(c)
		if v == nil {
			continue
		}
		if strings.HasPrefix(c, "compute_") {
			ptx = append(ptx, v)
		} else {
			sass = append(sass, v)
		}
	}
	row, haveRow := knowledge.MinComputeCapability(tfv)
	for _, g := range s.NVML.GPUs {
		cc := knowledge.Version(g.ComputeCapability)
		if len(cc) < 2 {
			continue
		}
		cc = cc[:2]
		id := fmt.Sprintf("%s/gpu%d", p.check.ID, g.Index)
		ev := Ev{"gpu": g.Index, "name": g.Name, "compute_capability": g.ComputeCapability, "build_capabilities": caps, "tensorflow": tfv}
		exact := false
		for _, v := range sass {
			if v.Major() == cc.Major() && knowledge.CompareVersions(v, cc) <= 0 {
				exact = true // SASS runs on same-major GPUs of equal or higher minor
			}
		}
		installed := py != nil && tfInstalled(py)
		judged := tfv
		if !installed {
			judged = orDefault(mustPin(s), tfv) // the release doctor would install
		}
		if fail, known := knowledge.KnownCCFailure(judged, g.ComputeCapability); known && !exact {
			ccFailure(p, g, installed, judged, fail, ev).ID = id
			continue
		}
		if len(sass)+len(ptx) > 0 {
			all := append(append([]knowledge.VersionNumber{}, sass...), ptx...)
			lo, hi := minMaxCC(all)
			hiSASS := knowledge.VersionNumber(nil)
			if len(sass) > 0 {
				_, hiSASS = minMaxCC(sass)
			}
			var ptxOK bool
			for _, v := range ptx {
				if knowledge.CompareVersions(v, cc) <= 0 {
					ptxOK = true
				}
			}
			switch {
			case knowledge.CompareVersions(cc, lo) < 0:
				p.Error("unsupported_compute_capability", fmt.Sprintf("GPU %d (%s, compute capability %s) is older than TensorFlow %s supports (from %s)", g.Index, g.Name, g.ComputeCapability, tfv, lo),
					"TensorFlow ignores GPUs below its minimum compute capability."+olderAdvice(s, tfv), ev, olderTFFix(s, tfv)).ID = id
			case !exact && !ptxOK:
				p.Error("unsupported_compute_capability", fmt.Sprintf("TensorFlow %s has no code for GPU %d (%s, compute capability %s)", tfv, g.Index, g.Name, g.ComputeCapability),
					fmt.Sprintf("The build carries %s; without matching SASS or PTX kernels fail with \"device kernel image is invalid\".", strings.Join(caps, ", ")), ev, pipInstallTF(s, mustPin(s), false)).ID = id
			case !exact && cc.Major() >= 10:
				p.Warn("unsupported_compute_capability", fmt.Sprintf("TensorFlow %s has no SASS for GPU %d (compute capability %s): only the PTX for %s", tfv, g.Index, g.ComputeCapability, hi),
					"Whether the driver's PTX JIT works for this GPU with this release is not verified; TensorFlow 2.16 to 2.21 fail on Blackwell GPUs with CUDA_ERROR_INVALID_PTX.", ev, pipInstallTF(s, mustPin(s), false)).ID = id
			case !exact:
				p.Warn("unsupported_compute_capability", fmt.Sprintf("TensorFlow %s JIT-compiles its kernels for GPU %d (compute capability %s)", tfv, g.Index, g.ComputeCapability),
					fmt.Sprintf("The build has SASS up to %s and PTX for %s: the first start JIT-compiles PTX, which can take 30 minutes (cached afterwards).", hiSASS, hi), ev, pipInstallTF(s, mustPin(s), false)).ID = id
			default:
				p.OKf(fmt.Sprintf("GPU %d (compute capability %s) has kernels in TensorFlow %s", g.Index, g.ComputeCapability, tfv), ev).ID = id
			}
			continue
		}
		if haveRow {
			min := knowledge.Version(row.MinCC)
			ev["min_compute_capability"] = row.MinCC
			ev["min_compute_capability_source"] = row.Source
			if knowledge.CompareVersions(cc, min) < 0 {
				what := "TensorFlow " + tfv
				if tfv == "" {
					what = "any TensorFlow release"
				}
				f := p.add(SevWarning, "unsupported_compute_capability", fmt.Sprintf("GPU %d (compute capability %s) is below the minimum of %s (%s)", g.Index, g.ComputeCapability, what, row.MinCC),
					what+" supports "+row.Supported+"."+olderAdvice(s, tfv), ev, []Fix{olderTFFix(s, tfv)})
				if row.Mark.Verified() {
					f.Severity = SevError
				}
				f.ID = id
				continue
			}
			what := "TensorFlow"
			if tfv != "" {
				what += " " + tfv
			}
			p.OKf(fmt.Sprintf("GPU %d compute capability %s (%s supports %s)", g.Index, g.ComputeCapability, what, row.Supported), ev).ID = id
		}
	}
	if len(p.findings) == 0 {
		p.OK("compute capability not judged")
	}
}

// ccFailure reports a GPU that a TensorFlow release is known to fail on,
// with what works today; unverified workarounds are named as such and
// never become steps.
func ccFailure(p *Pass, g host.GPU, installed bool, judged string, fail knowledge.CCFailure, ev Ev) *Finding {
	ev["known_failure_source"] = fail.Source
	ev["known_failure_mark"] = string(fail.Mark)
	var steps, unverified []string
	for _, w := range fail.Works {
		if w.Mark.Verified() {
			steps = append(steps, w.Text+" ("+w.Source+")")
		} else {
			unverified = append(unverified, w.Text)
		}
	}
	detail := fail.What + "."
	if len(unverified) > 0 {
		detail += " Not verified: " + strings.Join(unverified, "; ") + "."
	}
	fix := Fix{ID: FixOlderTensorFlow, Title: "Use a TensorFlow build that supports this GPU", Risk: RiskSafe, Manual: true, Steps: steps}
	title := fmt.Sprintf("TensorFlow %s fails on GPU %d (%s, compute capability %s)", judged, g.Index, g.Name, g.ComputeCapability)
	sev := SevWarning
	if fail.Mark.Verified() {
		sev = SevError
	}
	if !installed {
		// Not installed: a warning about the release doctor would install.
		title = fmt.Sprintf("TensorFlow %s, the newest release for this Python, fails on GPU %d (%s, compute capability %s)", judged, g.Index, g.Name, g.ComputeCapability)
		sev = SevWarning
	}
	var fixes []Fix
	if len(steps) > 0 {
		fixes = []Fix{fix}
	}
	return p.add(sev, "unsupported_compute_capability", title, detail, ev, fixes)
}

// olderAdvice names the newest release that supports the GPUs and the
// Python, and why no newer one does.
func olderAdvice(s *host.Snapshot, tfv string) string {
	c, ok := tfPinChoice(s)
	if !ok {
		return " No TensorFlow release supports both this Python and this GPU." + whyText(c)
	}
	if c.Build.TF == tfv {
		return ""
	}
	return fmt.Sprintf(" TensorFlow %s is the newest release for Python %s%s.%s", c.Build.TF, majorMinorOf(pyVersion(s)), forGPUs(s), whyText(c))
}

func whyText(c knowledge.TFChoice) string {
	if len(c.Why) == 0 {
		return ""
	}
	return " Newer releases do not fit: " + strings.Join(c.Why, "; ") + "."
}

func pyVersion(s *host.Snapshot) string {
	if s.Python != nil {
		return s.Python.Version
	}
	return ""
}

// olderTFFix installs the newest release that supports the GPUs and the
// Python, when there is one and it is not what is installed.
func olderTFFix(s *host.Snapshot, tfv string) Fix {
	if c, ok := tfPinChoice(s); ok && c.Build.TF != tfv && s.Python != nil && s.Python.Found {
		return pipInstallTF(s, c.Build.TF, false)
	}
	return pipInstallOlderHint(s, tfv)
}

// forGPUs names the GPUs' compute capabilities for a recommendation
// (" and GPU compute capability 5.2").
func forGPUs(s *host.Snapshot) string {
	ccs := gpuCCs(s)
	if len(ccs) == 0 {
		return ""
	}
	seen := map[string]bool{}
	var u []string
	for _, c := range ccs {
		if !seen[c] {
			seen[c] = true
			u = append(u, c)
		}
	}
	return " and GPU compute capability " + strings.Join(u, ", ")
}

func mustPin(s *host.Snapshot) string {
	pin, _ := tfPin(s)
	return pin.TF
}

func pipInstallOlderHint(s *host.Snapshot, tfv string) Fix {
	return Fix{ID: FixOlderTensorFlow, Title: "Use a TensorFlow build that supports this GPU, or a newer GPU", Risk: RiskSafe, Manual: true,
		Steps: []string{"Check the GPU's compute capability against https://www.tensorflow.org/install/pip#hardware_requirements",
			"Older TensorFlow releases (and CUDA 11 builds) cover older architectures; or build TensorFlow from source with TF_CUDA_COMPUTE_CAPABILITIES set"}}
}

// ccRE reads the digits of an architecture name: all but the last are the
// major, the last is the minor ("sm_86" 8.6, "sm_100" 10.0, "sm_120a" 12.0).
var ccRE = regexp.MustCompile(`(\d+)(\d)[a-z]?$`)

// parseCC reads "sm_86", "compute_90", "sm_120", "sm_90a", "8.6" or "86".
func parseCC(c string) knowledge.VersionNumber {
	if strings.Contains(c, ".") {
		if v := knowledge.Version(c); len(v) >= 2 {
			return v[:2]
		}
		return nil
	}
	m := ccRE.FindStringSubmatch(c)
	if m == nil {
		return nil
	}
	return knowledge.Version(m[1] + "." + m[2])
}

func minMaxCC(vs []knowledge.VersionNumber) (lo, hi knowledge.VersionNumber) {
	for _, v := range vs {
		if lo == nil || knowledge.CompareVersions(v, lo) < 0 {
			lo = v
		}
		if hi == nil || knowledge.CompareVersions(v, hi) > 0 {
			hi = v
		}
	}
	return lo, hi
}

// JupyterKernels checks that Jupyter runs the environment TensorFlow was
// set up in.
var JupyterKernels = &Check{
	ID:       "python.jupyter",
	Link:     LinkPython,
	Title:    "Jupyter kernels",
	Causes:   []string{"jupyter_kernel_wrong_env"},
	Requires: []string{"python"},
	Doc: `A notebook runs the interpreter its kernel's kernel.json names, not the
shell's active environment: TensorFlow installed in one conda env or venv is
missing (or CPU-only) in a notebook whose kernel points at another. doctor
reads every kernel.json (user, system, and each environment's
share/jupyter) and says which environment each runs. The fix registers the
examined environment as a kernel (python -m ipykernel install --user).`,
	Run: func(p *Pass) {
		py, ok := pythonCollected(p)
		if !ok {
			return
		}
		if len(py.Kernels) == 0 {
			p.OK("no Jupyter kernels found")
			return
		}
		var pyKernels []host.JupyterKernel
		examined := false
		for _, k := range py.Kernels {
			pyKernels = append(pyKernels, k)
			examined = examined || k.Examined
		}
		haveTF := tfInstalled(py)
		kernelFix := func() Fix {
			name := kernelName(py)
			steps := []string{}
			if !hasDist(py, "ipykernel") {
				steps = append(steps, shQuote(py.Executable)+" -m pip install ipykernel")
			}
			steps = append(steps, shQuote(py.Executable)+" -m ipykernel install --user --name "+shQuote(name)+" --display-name "+shQuote("Python ("+name+")"),
				"In Jupyter: Kernel > Change kernel > Python ("+name+")")
			return Fix{ID: FixIpykernelInstall, Title: "Register " + envLabel(py) + " as a Jupyter kernel", Risk: RiskSafe, Steps: steps,
				Params: withParam(envParams(py), "name", name)}
		}
		var lines []string
		for _, k := range pyKernels {
			where := orDefault(k.EnvPrefix, "Jupyter's own Python")
			tf := orDefault(k.TensorFlow, "no TensorFlow")
			lines = append(lines, fmt.Sprintf("%s → %s (%s)", orDefault(k.DisplayName, k.Name), where, tf))
			ev := Ev{"kernel": k.Name, "spec": k.Spec, "argv0": k.Argv0, "env_prefix": k.EnvPrefix, "tensorflow": k.TensorFlow, "examined_env": py.Prefix}
			id := p.check.ID + "/" + k.Name
			switch {
			case k.Error != "":
				p.Warn("jupyter_kernel_wrong_env", fmt.Sprintf("Jupyter kernel %q is broken: %s", k.Name, k.Error), k.Spec, ev, kernelFix()).ID = id
			case !k.Exists:
				p.Warn("jupyter_kernel_wrong_env", fmt.Sprintf("Jupyter kernel %q runs %s, which no longer exists", orDefault(k.DisplayName, k.Name), k.Argv0),
					"Its environment was removed or moved; the kernel fails to start.", ev, kernelFix()).ID = id
			case !k.Examined && haveTF && k.TensorFlow == "" && namesEnv(k, py):
				p.Warn("jupyter_kernel_wrong_env", fmt.Sprintf("Jupyter kernel %q runs %s, not %s", orDefault(k.DisplayName, k.Name), where, envLabel(py)),
					fmt.Sprintf("The kernel is named after the examined environment, where TensorFlow %s is installed, but it starts another interpreter without TensorFlow.", py.TensorFlow.Version), ev, kernelFix()).ID = id
			}
		}
		ev := Ev{"kernels": lines, "examined_env": py.Prefix}
		if haveTF && !examined && len(p.findings) == 0 {
			p.Warn("jupyter_kernel_wrong_env", "No Jupyter kernel runs "+envLabel(py),
				fmt.Sprintf("TensorFlow %s is installed here, but the kernels run other environments: %s. A notebook will not see this TensorFlow.", py.TensorFlow.Version, strings.Join(lines, "; ")), ev, kernelFix())
			return
		}
		if len(p.findings) == 0 {
			p.OKf(fmt.Sprintf("%s: %s", plural(len(pyKernels), "kernel", "kernels"), strings.Join(lines, "; ")), ev)
		}
	},
}

func kernelName(py *host.Python) string {
	n := py.EnvName
	if n == "" || strings.Contains(n, "/") {
		n = path.Base(py.Prefix)
		if n == ".venv" || n == "venv" {
			n = path.Base(path.Dir(py.Prefix))
		}
	}
	n = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, n)
	return orDefault(n, "tf")
}

// namesEnv reports whether a kernel's name or display name refers to the
// examined environment.
func namesEnv(k host.JupyterKernel, py *host.Python) bool {
	name := strings.ToLower(kernelName(py))
	if name == "" {
		return false
	}
	return strings.Contains(strings.ToLower(k.Name), name) || strings.Contains(strings.ToLower(k.DisplayName), name)
}

func hasDist(py *host.Python, key string) bool {
	for _, d := range py.Distributions {
		if d.Key == key && !d.Stale {
			return true
		}
	}
	return false
}
