package host

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tfdoctor/doctor/internal/run"
	"github.com/tfdoctor/doctor/knowledge"
)

// collectPython examines the Python environment and then resolves the CUDA
// libraries TensorFlow needs from it: one collector, because the library
// search starts at TensorFlow's own files in that environment.
func collectPython(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	py, libs, err := g.examinePython(ctx)
	if err != nil {
		return nil, err
	}
	return func(s *Snapshot) { s.Python, s.Libraries = py, libs }, nil
}

// stepTimer records how long each step of the collector took.
type stepTimer struct {
	last time.Time
	ms   map[string]float64
}

func newStepTimer() *stepTimer { return &stepTimer{last: time.Now(), ms: map[string]float64{}} }

func (t *stepTimer) step(name string) {
	now := time.Now()
	t.ms[name] += float64(now.Sub(t.last).Microseconds()) / 1000
	t.last = now
}

// examinePython does the work of the python collector.
func (g *gatherer) examinePython(ctx context.Context) (*Python, *Libraries, error) {
	t := newStepTimer()
	py := &Python{}
	exe, source, err := g.selectPython()
	py.Executable, py.Source = exe, source
	var d envDesc
	var condaOwners map[string]string
	if err != nil {
		py.Error = err.Error()
	} else {
		if real, ok := g.followPyenvShim(exe); ok {
			py.Source += " (pyenv shim " + exe + ")"
			exe = real
			py.Executable = real
		}
		d = g.describeEnv(exe)
		py.Found = true
		py.RealExecutable = d.realExe
		py.Prefix, py.BasePrefix, py.Kind, py.EnvName = d.prefix, d.base, d.kind, d.name
		py.Windows, py.IncludeSystemSite = d.windows, d.includeSystemSite
		py.Version, py.VersionFrom = d.version, d.verFrom
		if st, err := os.Stat(g.fs(exe)); err != nil || st.IsDir() {
			py.Found = false
			py.Error = exe + ": not an interpreter"
		}
		if py.Found && py.Version == "" && !g.opts.Quick && g.live() && !d.windows {
			c, out := g.probePython(ctx, exe)
			py.Probe = c
			if v, ok := out["version"].(string); ok {
				py.Version, py.VersionFrom = v, "interpreter"
				d.version = v
			}
		}
		t.step("interpreter")
		minor := majorMinor(py.Version)
		py.SitePaths, py.StaleSites = g.sitePaths(d, minor)
		for _, s := range py.SitePaths {
			if s.Exists {
				py.Distributions = append(py.Distributions, g.scanSite(s.Path)...)
			}
		}
		for _, s := range py.StaleSites {
			for _, dist := range g.scanSite(s) {
				dist.Stale = true
				py.Distributions = append(py.Distributions, dist)
			}
		}
		for i := range py.Distributions {
			if judgedDist(py.Distributions[i].Key) {
				g.readInstaller(&py.Distributions[i])
			}
		}
		t.step("distributions")
		py.TensorFlow = g.findTensorFlow(py)
		t.step("tensorflow")
		if d.kind == "conda" {
			py.CondaPackages, condaOwners = g.condaPackages(d.prefix)
		}
		t.step("conda")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	py.Envs = g.otherEnvs(py.Prefix)
	py.Kernels = g.jupyterKernels(py.Prefix, py.Envs)
	t.step("other_envs")
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	libs := g.resolveLibraries(ctx, py, condaOwners, t)
	libs.TimingsMS = t.ms
	return py, libs, ctx.Err()
}

func majorMinor(v string) string {
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return ""
	}
	return parts[0] + "." + parts[1]
}

// tfDistOrder is the order in which a site folder's TensorFlow
// distributions are taken as the owner of its tensorflow/ package.
var tfDistOrder = []string{"tensorflow", "tf-nightly", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel", "tensorflow-rocm", "intel-tensorflow", "tensorflow-macos", "tf-nightly-gpu", "tf-nightly-cpu", "tensorflow-cpu-aws", "tensorflow-aarch64"}

// findTensorFlow finds the tensorflow package that import loads (the first
// site folder that has one), the distribution that owns it, its build
// facts and its shared objects.
func (g *gatherer) findTensorFlow(py *Python) *TensorFlow {
	var tfDists []Distribution
	keras := ""
	for _, dist := range py.Distributions {
		if IsTFDist(dist.Key) {
			tfDists = append(tfDists, dist)
		}
		if dist.Key == "keras" && keras == "" && !dist.Stale {
			keras = dist.Version
		}
	}
	tf := &TensorFlow{Keras: keras}
	for _, s := range py.SitePaths {
		pkg := path.Join(s.Path, "tensorflow")
		if !s.Exists || !g.exists(path.Join(pkg, "__init__.py")) {
			continue
		}
		tf.Package, tf.Importable = pkg, true
		for _, k := range tfDistOrder {
			for _, dist := range tfDists {
				if dist.Site == s.Path && dist.Key == k && tf.Dist == "" {
					tf.Dist, tf.Version = dist.Name, dist.Version
				}
			}
		}
		break
	}
	if tf.Package == "" {
		if len(tfDists) == 0 {
			if keras == "" {
				return nil
			}
			return tf
		}
		// Distributions without an importable package (files deleted, or
		// only in a stale site folder).
		tf.Dist, tf.Version = tfDists[0].Name, tfDists[0].Version
		return tf
	}
	if text, err := g.readSmall(path.Join(tf.Package, "python/platform/build_info.py"), 1<<20); err == nil {
		tf.BuildInfo = ParseBuildInfo(text)
		tf.BuildInfo.Path = path.Join(tf.Package, "python/platform/build_info.py")
	}
	// The object that calls dlopen (dso_loader lives in the framework
	// library), then the extension module that loaded it, then Python.
	var fw string
	for _, n := range []string{"libtensorflow_framework.so.2", "libtensorflow_framework.so.1", "libtensorflow_framework.so"} {
		if g.exists(path.Join(tf.Package, n)) {
			fw = path.Join(tf.Package, n)
			break
		}
	}
	if fw == "" && py.Kind == "conda" {
		if p := path.Join(py.Prefix, "lib", "libtensorflow_framework.so.2"); g.exists(p) {
			fw = p
		}
	}
	if fw != "" {
		tf.Objects = append(tf.Objects, readELFObject(g.fs(fw), fw))
	}
	if pw := path.Join(tf.Package, "python/_pywrap_tensorflow_internal.so"); g.exists(pw) {
		tf.Objects = append(tf.Objects, readELFObject(g.fs(pw), pw))
	}
	return tf
}

// resolveLibraries resolves what TensorFlow dlopens, and lists the other
// CUDA libraries present, from TensorFlow's own search path.
func (g *gatherer) resolveLibraries(ctx context.Context, py *Python, condaOwners map[string]string, t *stepTimer) *Libraries {
	libs := &Libraries{}
	r := newLibResolver(g)
	libs.LDLibraryPath = r.ldPath
	libs.Cache.Path = "/etc/ld.so.cache"
	if data, err := os.ReadFile(g.fs("/etc/ld.so.cache")); err != nil {
		libs.Cache.Error = shortPathErr(err)
	} else if c, err := ParseLDCache(data); err != nil {
		libs.Cache.Error = err.Error()
	} else {
		r.cache = c
		libs.Cache.Read, libs.Cache.Format, libs.Cache.Entries, libs.Cache.Generator = true, c.Format, len(c.Entries), c.Generator
	}
	libs.LdConfDirs = g.ldSoConfDirs()
	for _, d := range libs.LdConfDirs {
		r.confDirs[d] = true
	}
	for k, v := range g.wheelFiles(py.Distributions) {
		r.owners[k] = v
	}
	for k, v := range condaOwners {
		r.owners[k] = v
	}
	r.conda = py.CondaPackages
	t.step("ld_cache")

	// Which TensorFlow: the installed one, as a fact. What it needs is
	// judged by the checks (checks.TFLibraries); the gather resolves every
	// soname any build of the knowledge tables may dlopen.
	tf := py.TensorFlow
	var bi *BuildInfo
	if tf != nil && tf.Importable && tf.Version != "" {
		libs.TFVersion, libs.TFVersionFrom = tf.Version, "installed"
		bi = tf.BuildInfo
	}
	// The caller and its loaders.
	var chain []*ELFObject
	var exeObj *ELFObject
	if py.Found && py.RealExecutable != "" && !py.Windows {
		exeObj = readELFObject(g.fs(py.RealExecutable), py.RealExecutable)
		if exeObj.Error != "" {
			exeObj = nil
		}
	}
	tfDir := ""
	if libs.TFVersionFrom == "installed" && tf != nil && len(tf.Objects) > 0 && tf.Objects[0].Error == "" {
		chain = append(chain, tf.Objects...)
		tfDir = tf.Package
	} else {
		site := ""
		for _, s := range py.SitePaths {
			if s.From == "env" || s.From == "system" {
				site = s.Path
				break
			}
		}
		if tf != nil && tf.Package != "" {
			site = path.Dir(tf.Package)
		}
		if site != "" {
			tfDir = path.Join(site, "tensorflow")
			chain = append(chain, g.assumedTFObject(site))
		}
	}
	if exeObj != nil {
		chain = append(chain, exeObj)
	}
	if len(chain) > 0 {
		libs.Caller = chain[0]
		r.setCaller(chain[0], g)
	}
	sp := r.searchPath(chain)
	libs.SearchPath = sp

	// Index the folders where CUDA libraries live, to find every copy.
	var dirs []string
	for _, d := range sp {
		if d.Exists && d.From != "ld.so.cache" {
			dirs = append(dirs, d.Dir)
		}
	}
	for _, s := range py.SitePaths {
		ms, _ := filepath.Glob(g.path(path.Join(s.Path, "nvidia", "*", "lib")))
		for _, m := range ms {
			dirs = append(dirs, g.unpath(m))
		}
	}
	if py.Kind == "conda" {
		dirs = append(dirs, path.Join(py.Prefix, "lib"))
	}
	for _, gl := range []string{"/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib"} {
		ms, _ := filepath.Glob(g.path(gl))
		for _, m := range ms {
			dirs = append(dirs, g.unpath(m))
		}
	}
	dirs = append(dirs, libs.LdConfDirs...)
	r.index(uniqueStrings(dirs))
	t.step("index")

	// Resolve every soname a TensorFlow build may dlopen, then what each
	// libcudnn found loads, then the other CUDA libraries present.
	loaded := map[string]bool{}
	resolved := map[string]bool{}
	add := func(lib Library) {
		libs.Resolved = append(libs.Resolved, lib)
		resolved[lib.Soname] = true
		if lib.Found {
			loaded[lib.Soname] = true
		}
	}
	for _, n := range candidateNeeds(libs.TFVersion, bi) {
		add(r.resolve(n.Name, n.Soname, chain, sp))
	}
	for i := 0; i < len(libs.Resolved); i++ {
		main := libs.Resolved[i]
		if main.Name != "cudnn" || !main.Found || main.ELF == nil {
			continue
		}
		major := knowledge.Version(strings.TrimPrefix(main.Soname, "libcudnn.so.")).Major()
		subs, _ := knowledge.CudnnSublibraries(major)
		subChain := append([]*ELFObject{main.ELF}, chain...)
		subSP := r.searchPath(subChain)
		for _, s := range subs {
			so := "lib" + s + ".so." + itoa(major)
			if resolved[so] {
				continue
			}
			lib := r.resolve(s, so, subChain, subSP)
			lib.LoadedBy = main.Soname
			add(lib)
		}
	}
	t.step("needed")
	if ctx.Err() != nil {
		return libs
	}
	for _, so := range r.presentSonames() {
		if !resolved[so] {
			add(r.resolve(libName(so), so, chain, sp))
		}
	}
	for i := range libs.Resolved {
		if libs.Resolved[i].Found {
			libs.Resolved[i].MissingDeps = r.missingDeps(&libs.Resolved[i], loaded, chain)
		}
	}
	t.step("present")
	libs.Toolkit = g.toolkit(ctx)
	libs.XLA = g.xlaInfo(py, tfDir)
	t.step("toolkit")
	return libs
}

func itoa(n int) string { return strconv.Itoa(n) }

// assumedTFObject models TensorFlow's framework library in a site folder
// where TensorFlow is not installed: its RUNPATH names the wheel folders of
// every CUDA major the tables' TensorFlow builds use, the newest first
// (knowledge.md 3.3), and every nvidia/*/lib folder that exists there.
func (g *gatherer) assumedTFObject(site string) *ELFObject {
	o := &ELFObject{Path: path.Join(site, "tensorflow", "libtensorflow_framework.so.2"), Assumed: true, HasRunPath: true}
	seen := map[string]bool{}
	majors := map[int]bool{}
	for _, b := range knowledge.TFBuilds() { // newest first
		if m := b.CUDAMajor(); m > 0 && !majors[m] {
			majors[m] = true
			wheelDirs, _ := knowledge.WheelLibDirs(m)
			for _, d := range wheelDirs {
				if !seen[d] {
					o.RunPath = append(o.RunPath, "$ORIGIN/../"+d)
					seen[d] = true
				}
			}
		}
	}
	ms, _ := filepath.Glob(g.path(path.Join(site, "nvidia", "*", "lib")))
	sort.Strings(ms)
	for _, m := range ms {
		rel := "nvidia/" + path.Base(path.Dir(m)) + "/lib"
		if !seen[rel] {
			o.RunPath = append(o.RunPath, "$ORIGIN/../"+rel)
		}
	}
	return o
}

// candidateNeeds lists every library a TensorFlow build may dlopen: the
// installed version's (with its own build facts) first, then those of
// every build in the knowledge tables. Which of them the TensorFlow at hand
// needs is the checks' judgment; the gather resolves them all.
func candidateNeeds(tfVersion string, bi *BuildInfo) []knowledge.Need {
	var out []knowledge.Need
	seen := map[string]bool{}
	add := func(ns []knowledge.Need) {
		for _, n := range ns {
			if n.Soname != "" && !seen[n.Soname] {
				seen[n.Soname] = true
				out = append(out, n)
			}
		}
	}
	if tfVersion != "" {
		cuda, cudnn := "", ""
		if bi != nil {
			cuda, cudnn = bi.CUDAVersion, bi.CUDNNVersion
		}
		major := knowledge.Version(cuda).Major()
		if row, ok := knowledge.TFBuildFor(tfVersion); ok && major == 0 {
			major = row.CUDAMajor()
		}
		ns, _ := knowledge.TFNeeds(tfVersion, cuda, cudnn, major)
		add(ns)
	}
	for _, b := range knowledge.TFBuilds() {
		ns, _ := knowledge.TFNeeds(b.TF, "", "", b.CUDAMajor())
		add(ns)
	}
	return out
}

var nvccRelease = regexp.MustCompile(`release (\d+\.\d+), V(\d+\.\d+\.\d+)`)

// toolkit finds nvcc and its version from the toolkit's version.json (or
// version.txt); nvcc itself runs only when the files are missing and the
// run is not --quick.
func (g *gatherer) toolkit(ctx context.Context) Toolkit {
	var tk Toolkit
	if real, _, err := g.realpath("/usr/local/cuda"); err == nil && real != "/usr/local/cuda" {
		tk.CUDAHome = real
	} else if err == nil && g.exists("/usr/local/cuda") {
		tk.CUDAHome = "/usr/local/cuda"
	}
	tk.NVCC = g.lookPath("nvcc")
	if tk.NVCC == "" && g.exists("/usr/local/cuda/bin/nvcc") {
		tk.NVCC = "/usr/local/cuda/bin/nvcc"
	}
	if tk.NVCC == "" {
		return tk
	}
	real, _, _ := g.realpath(tk.NVCC)
	home := path.Dir(path.Dir(real))
	if b, err := g.readSmall(path.Join(home, "version.json"), 1<<20); err == nil {
		var vj struct {
			CUDA struct {
				Version string `json:"version"`
			} `json:"cuda"`
		}
		if json.Unmarshal([]byte(b), &vj) == nil && vj.CUDA.Version != "" {
			tk.Version, tk.VersionFrom = vj.CUDA.Version, path.Join(home, "version.json")
			return tk
		}
	}
	if b, err := g.readSmall(path.Join(home, "version.txt"), 4096); err == nil {
		if f := strings.Fields(b); len(f) >= 3 && f[0] == "CUDA" {
			tk.Version, tk.VersionFrom = f[2], path.Join(home, "version.txt")
			return tk
		}
	}
	if g.opts.Quick || !g.live() {
		return tk
	}
	res := run.Run(ctx, run.Cmd{Path: tk.NVCC, Args: []string{"--version"}, Timeout: 3 * time.Second, MaxOutput: 64 << 10})
	if m := nvccRelease.FindStringSubmatch(string(res.Stdout)); m != nil {
		tk.Version, tk.VersionFrom = m[2], "nvcc --version"
	}
	return tk
}

// xlaInfo lists the CUDA data folders XLA tries for ptxas and libdevice
// (cuda_root_path.cc, knowledge.md 3.4), relative to TensorFlow's folder.
func (g *gatherer) xlaInfo(py *Python, tfDir string) XLAInfo {
	x := XLAInfo{Flags: g.getenv("XLA_FLAGS")}
	k := knowledge.XLA()
	for _, f := range strings.Fields(x.Flags) {
		if v, ok := strings.CutPrefix(f, k.Flag+"="); ok {
			x.DataDirFlag = v
		}
	}
	x.PtxasOnPath = g.lookPath("ptxas")
	add := func(dir, from string) {
		dir = path.Clean(dir)
		for _, c := range x.Candidates {
			if c.Dir == dir {
				return
			}
		}
		x.Candidates = append(x.Candidates, XLACandidate{Dir: dir, From: from,
			Libdevice: g.exists(path.Join(dir, k.Libdevice)), Ptxas: g.exists(path.Join(dir, k.Ptxas))})
	}
	if x.DataDirFlag != "" && path.IsAbs(x.DataDirFlag) {
		add(x.DataDirFlag, "xla_flags")
	}
	for _, r := range k.Roots {
		add(r, "default")
	}
	if tfDir != "" {
		for _, rel := range k.TFRelative {
			add(path.Join(tfDir, rel), "tf_relative")
		}
		if py.Kind == "conda" {
			for _, rel := range k.CondaRelatv {
				add(path.Join(tfDir, rel), "conda")
			}
		}
	}
	return x
}
