package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/internal/testenv"
)

// examine runs the python collector on a tree with an environment.
func examineTree(t *testing.T, root string, environ []string, python string) (*Python, *Libraries) {
	t.Helper()
	g := newGatherer(Options{Root: root, Environ: environ, Python: python, Quick: true})
	py, libs, err := g.examinePython(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return py, libs
}

// TestRealVenv examines a venv made by `python3 -m venv`, with TensorFlow,
// its wheels and its metadata written the way pip writes them, on the live
// file system.
func TestRealVenv(t *testing.T) {
	needTestGCC(t)
	py3, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 not found")
	}
	out, err := exec.Command(py3, "-c", "import sys;print('%d.%d.%d'%sys.version_info[:3])").Output()
	if err != nil {
		testenv.Missing(t, "python3 does not run")
	}
	want := strings.TrimSpace(string(out))
	dir := t.TempDir()
	venv := filepath.Join(dir, "tf venv") // a space, to exercise quoting
	if out, err := exec.Command(py3, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		testenv.Missing(t, "python3 -m venv: %v: %s", err, out)
	}
	site := filepath.Join(venv, "lib", "python"+majorMinor(want), "site-packages")
	tr := &pyTree{t: t, root: "/"}
	tr.installWheels(site, cuda12Wheels(9, "9.3.0.75"))
	tr.tensorflow(site, "tensorflow", "2.18.0", buildInfoFor("12.5.1", "9", true, "['sm_60','sm_90','compute_90']"), allWheelDirs)

	environ := []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	pyinfo, libs := examineTree(t, "/", environ, filepath.Join(venv, "bin", "python"))
	if !pyinfo.Found || pyinfo.Kind != "venv" || pyinfo.Version != want || pyinfo.VersionFrom != "pyvenv.cfg" || pyinfo.Prefix != venv {
		t.Fatalf("examined %+v, want venv %s with Python %s from pyvenv.cfg", pyinfo, venv, want)
	}
	if len(pyinfo.SitePaths) == 0 || pyinfo.SitePaths[0].Path != site {
		t.Errorf("site paths %+v, want %s first", pyinfo.SitePaths, site)
	}
	tf := pyinfo.TensorFlow
	if tf == nil || tf.Version != "2.18.0" || tf.Dist != "tensorflow" || !tf.Importable || tf.BuildInfo == nil || tf.BuildInfo.CUDAVersion != "12.5.1" || len(tf.Objects) != 2 {
		t.Fatalf("TensorFlow %+v", tf)
	}
	if !tf.Objects[0].HasRunPath || !strings.HasPrefix(tf.Objects[0].RunPath[0], "$ORIGIN/../nvidia/") {
		t.Errorf("framework object %+v", tf.Objects[0])
	}
	// The gather records the installed version and what resolves; what
	// that version needs (CUDA, sonames) is judged by checks.TFLibraries.
	if libs.TFVersion != "2.18.0" || libs.TFVersionFrom != "installed" || libs.CUDA != "" || len(libs.Needed) != 0 {
		t.Errorf("libraries for %s from %s, CUDA %q, %d judged needs", libs.TFVersion, libs.TFVersionFrom, libs.CUDA, len(libs.Needed))
	}
	found := map[string]Library{}
	for _, l := range libs.Resolved {
		found[l.Soname] = l
	}
	for _, so := range []string{"libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11", "libcusolver.so.11", "libcusparse.so.12", "libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9"} {
		l := found[so]
		if !l.Found || l.Via != "runpath" || !strings.HasPrefix(l.Path, site+"/nvidia/") {
			t.Errorf("%s: %+v", so, l)
		}
	}
	if l := found["libcudnn.so.9"]; l.Version != "9.3.0.75" || l.Package != "nvidia-cudnn-cu12 9.3.0.75" || l.CUDAMajor != 12 {
		t.Errorf("cudnn version %q package %q CUDA %d", l.Version, l.Package, l.CUDAMajor)
	}
	if l := found["libcusolver.so.11"]; l.CUDAMajor != 12 || !strings.HasPrefix(l.CUDAMajorFrom, "needed libcublas.so.12") || len(l.MissingDeps) != 0 {
		t.Errorf("cusolver: CUDA %d from %q, missing %v", l.CUDAMajor, l.CUDAMajorFrom, l.MissingDeps)
	}
	var names []string
	for _, d := range pyinfo.Distributions {
		names = append(names, d.Key)
		if d.Key == "tensorflow" && d.Installer != "pip" {
			t.Errorf("INSTALLER not read: %+v", d)
		}
	}
	if !contains(names, "nvidia-cudnn-cu12") || !contains(names, "tensorflow") {
		t.Errorf("distributions %v", names)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestResolutionAgreesWithLoader builds a program whose RUNPATH plays
// TensorFlow's, runs it with LD_LIBRARY_PATH set, has it dlopen each
// soname and report the file the loader mapped, and compares with the
// resolver.
func TestResolutionAgreesWithLoader(t *testing.T) {
	needTestGCC(t)
	dir := t.TempDir()
	runA, runB, ldDir, off := filepath.Join(dir, "wheels", "a"), filepath.Join(dir, "wheels", "b"), filepath.Join(dir, "ld"), filepath.Join(dir, "off")
	// libcublas.so.1: only in the RUNPATH; libcudart.so.2: in
	// LD_LIBRARY_PATH and the RUNPATH (LD_LIBRARY_PATH wins);
	// libcufft.so.3: second RUNPATH folder; libcurand.so.4: only off the
	// path; libcusolver.so.5: a text file first (the loader gives up with
	// "invalid ELF header"), a real one after it.
	buildTestSO(t, runA, testSOSpec{Name: "libcublas.so.1"})
	buildTestSO(t, runA, testSOSpec{Name: "libcudart.so.2"})
	buildTestSO(t, ldDir, testSOSpec{Name: "libcudart.so.2"})
	buildTestSO(t, runB, testSOSpec{Name: "libcufft.so.3"})
	buildTestSO(t, off, testSOSpec{Name: "libcurand.so.4"})
	os.MkdirAll(ldDir, 0o755)
	os.WriteFile(filepath.Join(ldDir, "libcusolver.so.5"), []byte("INPUT(-lc)\n"), 0o644)
	buildTestSO(t, runB, testSOSpec{Name: "libcusolver.so.5"})

	src := filepath.Join(dir, "dlopener.c")
	os.WriteFile(src, []byte(`#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    void *h = dlopen(argv[i], RTLD_NOW);
    if (!h) { printf("%s -\n", argv[i]); continue; }
    FILE *m = fopen("/proc/self/maps", "r");
    char line[4096], found[4096] = "?";
    while (fgets(line, sizeof line, m)) {
      char *p = strchr(line, '/');
      if (p && strstr(p, argv[i])) { p[strcspn(p, "\n")] = 0; strcpy(found, p); }
    }
    fclose(m);
    printf("%s %s\n", argv[i], found);
  }
  return 0;
}
`), 0o644)
	exe := filepath.Join(dir, "wheels", "dlopener")
	if out, err := exec.Command(gccPath, "-o", exe, src, "-ldl", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/a:$ORIGIN/b").CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot build the dlopen test program: %v: %s", err, out)
	}
	sonames := []string{"libcublas.so.1", "libcudart.so.2", "libcufft.so.3", "libcurand.so.4", "libcusolver.so.5"}
	cmd := exec.Command(exe, sonames...)
	cmd.Env = []string{"LD_LIBRARY_PATH=" + ldDir}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dlopener: %v", err)
	}
	loader := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			loader[f[0]] = f[1]
		}
	}

	g := newGatherer(Options{Environ: []string{"LD_LIBRARY_PATH=" + ldDir}})
	r := newLibResolver(g)
	r.index([]string{off})
	caller := readELFObject(exe, exe)
	r.setCaller(caller, g)
	sp := r.searchPath([]*ELFObject{caller})
	for _, so := range sonames {
		lib := r.resolve(libName(so), so, []*ELFObject{caller}, sp)
		got := "-"
		if lib.Found {
			got = lib.RealPath
		}
		if got != loader[so] {
			t.Errorf("%s: resolver %s (via %s), loader mapped %s", so, got, lib.Via, loader[so])
		}
		switch so {
		case "libcudart.so.2":
			if lib.Via != "ld_library_path" || len(lib.Shadowed) != 1 || lib.Shadowed[0].Via != "runpath" {
				t.Errorf("libtwo: via %s, shadowed %+v", lib.Via, lib.Shadowed)
			}
		case "libcurand.so.4":
			if len(lib.OffPath) != 1 {
				t.Errorf("libfour off-path copies: %+v", lib.OffPath)
			}
		case "libcusolver.so.5":
			if lib.Found || len(lib.Rejected) != 1 || !strings.Contains(lib.Rejected[0].Reason, "invalid ELF header") || len(lib.Shadowed) != 1 {
				t.Errorf("a text file first ends the search: %+v", lib)
			}
		}
	}
}

func TestSelectPython(t *testing.T) {
	tr := newPyTree(t)
	tr.exe("/usr/bin/python3", "")
	tr.exe("/home/u/venv/bin/python3", "")
	tr.exe("/opt/conda/envs/tf/bin/python", "")
	tr.exe("/home/u/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n")
	for _, c := range []struct {
		name    string
		env     []string
		python  string
		want    string
		source  string
		wantErr bool
	}{
		{"PATH", []string{"PATH=/usr/bin"}, "", "/usr/bin/python3", "PATH", false},
		{"venv", []string{"PATH=/usr/bin", "VIRTUAL_ENV=/home/u/venv"}, "", "/home/u/venv/bin/python3", "VIRTUAL_ENV", false},
		{"conda before venv", []string{"PATH=/usr/bin", "VIRTUAL_ENV=/home/u/venv", "CONDA_PREFIX=/opt/conda/envs/tf"}, "", "/opt/conda/envs/tf/bin/python", "CONDA_PREFIX", false},
		{"venv first on PATH", []string{"PATH=/home/u/venv/bin:/opt/conda/envs/tf/bin", "VIRTUAL_ENV=/home/u/venv", "CONDA_PREFIX=/opt/conda/envs/tf"}, "", "/home/u/venv/bin/python3", "VIRTUAL_ENV", false},
		{"flag wins", []string{"VIRTUAL_ENV=/home/u/venv"}, "/usr/bin/python3", "/usr/bin/python3", "--python", false},
		{"flag folder", nil, "/home/u/venv", "/home/u/venv/bin/python3", "--python", false},
		{"flag name", []string{"PATH=/home/u/venv/bin"}, "python3", "/home/u/venv/bin/python3", "--python", false},
		{"flag missing", nil, "/nope/python", "", "--python", true},
		{"nothing", []string{"PATH=/nothing"}, "", "", "PATH", true},
	} {
		g := newGatherer(Options{Root: tr.root, Environ: c.env, Python: c.python})
		exe, source, err := g.selectPython()
		if (err != nil) != c.wantErr || !c.wantErr && (exe != c.want || source != c.source) {
			t.Errorf("%s: %q %q %v, want %q %q", c.name, exe, source, err, c.want, c.source)
		}
	}
}

func TestPyenvShim(t *testing.T) {
	tr := newPyTree(t)
	tr.exe("/home/u/.pyenv/shims/python3", "#!/usr/bin/env bash\nset -e\nexec \"/home/u/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n")
	tr.so("/home/u/.pyenv/versions/3.10.14/bin", testSOSpecNoGCC(t, "python3.10"))
	tr.link("/home/u/.pyenv/versions/3.10.14/bin/python3", "python3.10")
	tr.mkdir("/home/u/.pyenv/versions/3.10.14/lib/python3.10/site-packages")
	tr.file("/home/u/.pyenv/versions/3.10.14/lib/python3.10/os.py", "")
	tr.file("/home/u/.pyenv/version", "3.10.14\n")
	tr.exe("/usr/bin/python3", "")
	env := []string{"HOME=/home/u", "PATH=/home/u/.pyenv/shims:/usr/bin"}
	py, _ := examineTree(t, tr.root, env, "")
	if py.Executable != "/home/u/.pyenv/versions/3.10.14/bin/python3" || py.Version != "3.10" || py.Kind != "pyenv" || !strings.Contains(py.Source, "pyenv shim") {
		t.Errorf("pyenv: %+v", py)
	}
	// PYENV_VERSION=system: the next python3 on PATH.
	py, _ = examineTree(t, tr.root, append(env, "PYENV_VERSION=system"), "")
	if py.Executable != "/usr/bin/python3" {
		t.Errorf("pyenv system: %s", py.Executable)
	}
}

// testSOSpecNoGCC returns a spec, or a plain file stands in where gcc is
// missing (the interpreter's ELF only matters for RPATH).
func testSOSpecNoGCC(t *testing.T, name string) testSOSpec {
	needTestGCC(t)
	return testSOSpec{Name: name}
}

func TestSitePathsAndStale(t *testing.T) {
	tr := newPyTree(t)
	// A conda env whose Python went from 3.11 to 3.12, and a user site.
	env := "/opt/conda/envs/tf"
	tr.exe(env+"/bin/python3.12", "")
	tr.link(env+"/bin/python", "python3.12")
	tr.file(env+"/conda-meta/python-3.12.2-h996f2a0_0.json", "{}")
	tr.file(env+"/lib/python3.12/os.py", "")
	tr.mkdir(env + "/lib/python3.12/site-packages")
	tr.file(env+"/lib/python3.11/site-packages/tensorflow/__init__.py", "")
	tr.dist(env+"/lib/python3.11/site-packages", "tensorflow", "2.15.0")
	tr.file("/home/u/.local/lib/python3.12/site-packages/tensorflow/__init__.py", "")
	tr.dist("/home/u/.local/lib/python3.12/site-packages", "tensorflow-cpu", "2.16.1")
	environ := []string{"HOME=/home/u", "CONDA_PREFIX=" + env, "PYTHONPATH=/srv/lib"}
	py, _ := examineTree(t, tr.root, environ, "")
	if py.Kind != "conda" || py.Version != "3.12.2" || py.VersionFrom != "conda-meta" || py.EnvName != "tf" {
		t.Fatalf("env %+v", py)
	}
	var got []string
	for _, s := range py.SitePaths {
		got = append(got, s.From+":"+s.Path)
	}
	want := []string{"pythonpath:/srv/lib", "user:/home/u/.local/lib/python3.12/site-packages", "env:" + env + "/lib/python3.12/site-packages"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("site paths %v, want %v", got, want)
	}
	if !reflect.DeepEqual(py.StaleSites, []string{env + "/lib/python3.11/site-packages"}) {
		t.Errorf("stale %v", py.StaleSites)
	}
	// The user site's tensorflow-cpu is what import finds.
	if tf := py.TensorFlow; tf == nil || tf.Dist != "tensorflow-cpu" || !strings.HasPrefix(tf.Package, "/home/u/.local") {
		t.Errorf("TensorFlow %+v", py.TensorFlow)
	}
	stale := 0
	for _, d := range py.Distributions {
		if d.Stale {
			stale++
		}
	}
	if stale != 1 {
		t.Errorf("%d stale distributions", stale)
	}
}

func TestCondaPackages(t *testing.T) {
	tr := newPyTree(t)
	env := "/opt/conda/envs/tf"
	tr.file(env+"/lib/libcudnn.so.8.9.2", "x")
	tr.link(env+"/lib/libcudnn.so.8", "libcudnn.so.8.9.2")
	tr.file(env+"/conda-meta/cudnn-8.9.2.26-cuda12_0.json", `{"name":"cudnn","version":"8.9.2.26","build":"cuda12_0","channel":"conda-forge","files":["lib/libcudnn.so.8","lib/libcudnn.so.8.9.2","lib/libcudnn_ops_infer.so.8","include/cudnn.h"],"depends":["cuda-version >=12.0,<13.0a0","libzlib"]}`)
	tr.file(env+"/conda-meta/numpy-1.26.4-py311h.json", `{"name":"numpy","files":["lib/x"]}`)
	tr.file(env+"/conda-meta/libcublas-12.1.0.26-0.json", `not json`)
	g := newGatherer(Options{Root: tr.root})
	pkgs, owners := g.condaPackages(env)
	if len(pkgs) != 2 {
		t.Fatalf("packages %+v", pkgs)
	}
	c := pkgs[0]
	if c.Name != "cudnn" || c.Files != 4 || c.Missing != 2 || c.CUDAMajor != 12 || c.Channel != "conda-forge" {
		t.Errorf("cudnn %+v", c)
	}
	if owners[env+"/lib/libcudnn.so.8"] != "cudnn 8.9.2.26 (conda)" {
		t.Errorf("owners %v", owners)
	}
	if pkgs[1].Name != "libcublas" || pkgs[1].Files != 0 {
		t.Errorf("unreadable record: %+v", pkgs[1])
	}
	for in, want := range map[string][3]string{
		"python-3.10.13-h955ad1f_0.json":      {"python", "3.10.13", "h955ad1f_0"},
		"cuda-nvcc-12.4.131-0.json":           {"cuda-nvcc", "12.4.131", "0"},
		"tensorflow-base-2.15.0-cuda120.json": {"tensorflow-base", "2.15.0", "cuda120"},
	} {
		n, v, b, ok := splitCondaMetaName(in)
		if !ok || [3]string{n, v, b} != want {
			t.Errorf("splitCondaMetaName(%q) = %q %q %q", in, n, v, b)
		}
	}
	if _, _, _, ok := splitCondaMetaName("history"); ok {
		t.Error("history is not a record")
	}
}

func TestJupyterKernels(t *testing.T) {
	tr := newPyTree(t)
	tr.exe("/home/u/tf/bin/python3", "")
	tr.file("/home/u/tf/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.4\n")
	tr.dist("/home/u/tf/lib/python3.11/site-packages", "tensorflow", "2.16.1")
	tr.file("/home/u/.local/share/jupyter/kernels/tf/kernel.json", `{"argv":["/home/u/tf/bin/python3","-m","ipykernel_launcher","-f","{connection_file}"],"display_name":"TF","language":"python"}`)
	tr.file("/home/u/.local/share/jupyter/kernels/gone/kernel.json", `{"argv":["/home/u/old/bin/python","-m","ipykernel_launcher"],"display_name":"Old","language":"python"}`)
	tr.file("/home/u/.local/share/jupyter/kernels/bad/kernel.json", `{"argv":`)
	tr.file("/home/u/.local/share/jupyter/kernels/julia/kernel.json", `{"argv":["julia"],"language":"julia"}`)
	tr.file("/opt/conda/share/jupyter/kernels/python3/kernel.json", `{"argv":["python","-m","ipykernel_launcher"],"display_name":"Python 3","language":"python"}`)
	tr.exe("/opt/conda/bin/python3", "")
	tr.mkdir("/opt/conda/conda-meta")
	g := newGatherer(Options{Root: tr.root, Environ: []string{"HOME=/home/u"}})
	envs := g.otherEnvs("/home/u/tf")
	ks := g.jupyterKernels("/home/u/tf", envs)
	byName := map[string]JupyterKernel{}
	for _, k := range ks {
		byName[k.Name] = k
	}
	if k := byName["tf"]; !k.Exists || k.EnvPrefix != "/home/u/tf" || !k.Examined || k.TensorFlow != "tensorflow 2.16.1" {
		t.Errorf("tf kernel %+v", k)
	}
	if k := byName["gone"]; k.Exists {
		t.Errorf("gone kernel %+v", k)
	}
	if k := byName["bad"]; k.Error == "" {
		t.Errorf("bad kernel %+v", k)
	}
	if _, ok := byName["julia"]; ok {
		t.Error("non-Python kernels are left out")
	}
	if k := byName["python3"]; k.EnvPrefix != "/opt/conda" || k.Interpreter != "" {
		t.Errorf("native kernel %+v", k)
	}
}

func TestRealpathUnderRoot(t *testing.T) {
	tr := newPyTree(t)
	tr.file("/usr/bin/python3.12", "")
	tr.link("/usr/bin/python3", "python3.12")
	tr.link("/venv/bin/python", "/usr/bin/python3")
	tr.link("/venv/bin/python3", "python")
	tr.link("/loop/a", "b")
	tr.link("/loop/b", "a")
	tr.link("/lib", "usr/lib")
	tr.file("/usr/lib/x86_64-linux-gnu/libz.so.1", "")
	g := newGatherer(Options{Root: tr.root})
	got, names, err := g.realpath("/venv/bin/python3")
	if err != nil || got != "/usr/bin/python3.12" || !reflect.DeepEqual(names, []string{"python3", "python", "python3", "python3.12"}) {
		t.Errorf("realpath = %q %v %v", got, names, err)
	}
	if got, _, _ := g.realpath("/lib/x86_64-linux-gnu/libz.so.1"); got != "/usr/lib/x86_64-linux-gnu/libz.so.1" {
		t.Errorf("through /lib: %q", got)
	}
	if _, _, err := g.realpath("/loop/a"); err == nil {
		t.Error("a loop must fail")
	}
	if _, _, err := g.realpath("/nope/x"); err == nil {
		t.Error("a missing path must fail")
	}
}

func TestParseMetadata(t *testing.T) {
	m := ParseMetadata(strings.NewReader("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.15.0.post1\nLicense: Apache\n  more license\nRequires-Dist: absl-py>=1.0\nRequires-Dist: nvidia-cudnn-cu12==8.9.4.25; extra == \"and-cuda\"\n\nName: body\n"))
	if m.Name != "tensorflow" || m.Version != "2.15.0.post1" || len(m.RequiresDist) != 2 {
		t.Errorf("%+v", m)
	}
	for in, want := range map[string]string{"TensorFlow_CPU": "tensorflow-cpu", "nvidia.cudnn__cu12": "nvidia-cudnn-cu12", " tf-nightly ": "tf-nightly", "": ""} {
		if got := NormalizeDistName(in); got != want {
			t.Errorf("NormalizeDistName(%q) = %q", in, got)
		}
	}
	for in, want := range map[string][2]string{"nvidia_cudnn_cu12-8.9.4.25.dist-info": {"nvidia_cudnn_cu12", "8.9.4.25"}, "foo-1.0-py3.11.egg-info": {"foo", "1.0"}, "odd.dist-info": {"odd", ""}} {
		n, v := distFromDirName(in)
		if [2]string{n, v} != want {
			t.Errorf("distFromDirName(%q) = %q %q", in, n, v)
		}
	}
}

func FuzzParseMetadata(f *testing.F) {
	f.Add("Metadata-Version: 2.1\nName: x\nVersion: 1\n\nbody")
	f.Add("Name:\n\tcont\nRequires-Dist: a ; extra == 'b'\n")
	f.Add(strings.Repeat("A", 70000))
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseMetadata(strings.NewReader(s))
		if strings.Contains(m.Name, "\n") || strings.Contains(m.Version, "\n") {
			t.Fatalf("header value spans lines: %+v", m)
		}
	})
}

// TestCollectorStopsAtDeadline: an expired context ends the collector.
func TestCollectorStopsAtDeadline(t *testing.T) {
	tr := newPyTree(t)
	tr.exe("/usr/bin/python3", "")
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	g := newGatherer(Options{Root: tr.root, Environ: []string{"PATH=/usr/bin"}})
	if _, _, err := g.examinePython(ctx); err == nil {
		t.Error("no error after the deadline")
	}
}

// TestGatherRegistersPython: the collector is wired into Gather and fills
// both parts of the snapshot.
func TestGatherRegistersPython(t *testing.T) {
	tr := newPyTree(t)
	tr.exe("/usr/bin/python3.11", "")
	tr.link("/usr/bin/python3", "python3.11")
	s := Gather(context.Background(), Options{Root: tr.root, Environ: []string{"PATH=/usr/bin", "HOME=/root"}, Only: []string{"python"}})
	if st := s.Collectors["python"]; st.Error != "" || st.TimedOut {
		t.Fatalf("python collector: %+v", st)
	}
	if s.Python == nil || s.Libraries == nil || s.Python.Version != "3.11" || s.Python.Kind != "system" {
		t.Fatalf("python %+v libraries %v", s.Python, s.Libraries != nil)
	}
	t.Setenv("DOCTOR_SKIP_COLLECTORS", "disks,python")
	s = Gather(context.Background(), Options{Root: tr.root, Environ: []string{"PATH=/usr/bin"}, Only: []string{"python"}})
	if s.Python != nil || s.Collectors["python"].Skipped == "" {
		t.Errorf("DOCTOR_SKIP_COLLECTORS ignored: %+v", s.Collectors["python"])
	}
}

func TestWindowsInterpreter(t *testing.T) {
	tr := newPyTree(t)
	tr.exe("/mnt/c/Python310/python.exe", "MZ")
	tr.file("/mnt/c/Python310/python310.dll", "MZ")
	tr.dist("/mnt/c/Python310/Lib/site-packages", "tensorflow", "2.15.0")
	tr.file("/mnt/c/Python310/Lib/site-packages/tensorflow/__init__.py", "")
	py, _ := examineTree(t, tr.root, nil, "/mnt/c/Python310/python.exe")
	if !py.Windows || py.Version != "3.10" || py.TensorFlow == nil || py.TensorFlow.Version != "2.15.0" {
		t.Errorf("windows: %+v %+v", py, py.TensorFlow)
	}
}

// TestNotInCache: a library in a folder ld.so.conf names, installed after
// the last ldconfig, is found by no one; doctor says so.
func TestNotInCache(t *testing.T) {
	tr := newPyTree(t)
	tr.machineBase()
	tr.file("/etc/ld.so.conf.d/cuda.conf", "/usr/local/cuda/lib64\n")
	tr.so("/usr/local/cuda/lib64", testSOSpec{Name: "libcudart.so.12"})
	site, _ := tr.venv("/home/u/v", "3.11.7", "/usr/bin/python3.11")
	tr.tensorflow(site, "tensorflow", "2.16.1", buildInfoFor("12.3", "8", true, "['sm_90']"), allWheelDirs)
	_, libs := examineTree(t, tr.root, []string{"HOME=/home/u", "VIRTUAL_ENV=/home/u/v"}, "")
	for _, l := range libs.Resolved {
		if l.Soname != "libcudart.so.12" {
			continue
		}
		if l.Found || !reflect.DeepEqual(l.NotInCache, []string{"/usr/local/cuda/lib64/libcudart.so.12"}) || len(l.OffPath) != 1 {
			t.Errorf("libcudart: %+v", l)
		}
		return
	}
	t.Fatal("libcudart.so.12 not among the needs")
}
