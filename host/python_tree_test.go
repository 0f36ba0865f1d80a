package host

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// pyTree builds a machine tree for --root tests: files, links, pip-style
// distributions and gcc-built shared objects, all at machine paths under
// root.
type pyTree struct {
	t    testing.TB
	root string
}

func newPyTree(t testing.TB) *pyTree {
	return &pyTree{t: t, root: t.TempDir()}
}

func (tr *pyTree) abs(p string) string { return filepath.Join(tr.root, p) }

func (tr *pyTree) file(p, content string) {
	tr.t.Helper()
	if err := os.MkdirAll(filepath.Dir(tr.abs(p)), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(tr.abs(p), []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *pyTree) exe(p, content string) {
	tr.file(p, content)
	os.Chmod(tr.abs(p), 0o755)
}

func (tr *pyTree) link(p, target string) {
	tr.t.Helper()
	os.MkdirAll(filepath.Dir(tr.abs(p)), 0o755)
	if err := os.Symlink(target, tr.abs(p)); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *pyTree) mkdir(p string) {
	if err := os.MkdirAll(tr.abs(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *pyTree) rm(p string) {
	if err := os.RemoveAll(tr.abs(p)); err != nil {
		tr.t.Fatal(err)
	}
}

// so builds a shared object at machine folder dir; Needs are machine paths.
func (tr *pyTree) so(dir string, s testSOSpec) string {
	tr.t.Helper()
	needs := s.Needs
	s.Needs = nil
	for _, n := range needs {
		s.Needs = append(s.Needs, tr.abs(n))
	}
	buildTestSO(tr.t, tr.abs(dir), s)
	return path.Join(dir, s.Name)
}

// dist writes a distribution the way pip installs a wheel: a
// name-version.dist-info folder with METADATA, INSTALLER, WHEEL and a
// RECORD listing the files (machine paths under site).
func (tr *pyTree) dist(site, name, version string, files ...string) {
	tr.t.Helper()
	norm := strings.ReplaceAll(NormalizeDistName(name), "-", "_")
	di := norm + "-" + version + ".dist-info"
	meta := fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nHome-page: https://example.org\nLicense: Apache 2.0\n  (continued license text)\nRequires-Python: >=3.9\n", name, version, name+" test distribution")
	if name == "tensorflow" {
		meta += "Requires-Dist: absl-py >=1.0.0\nRequires-Dist: nvidia-cudnn-cu12 ==8.9.4.25 ; extra == \"and-cuda\"\n"
	}
	meta += "\n" + name + " long description: TensorFlow is an open source machine learning framework.\n\nName: not-a-header\n"
	tr.file(path.Join(site, di, "METADATA"), meta)
	tr.file(path.Join(site, di, "INSTALLER"), "pip\n")
	tr.file(path.Join(site, di, "WHEEL"), "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.41.2)\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\n")
	var rec []string
	for _, f := range append(files, di+"/METADATA", di+"/INSTALLER", di+"/WHEEL") {
		b, _ := os.ReadFile(tr.abs(path.Join(site, f)))
		sum := sha256.Sum256(b)
		rec = append(rec, fmt.Sprintf("%s,sha256=%s,%d", f, base64.RawURLEncoding.EncodeToString(sum[:]), len(b)))
	}
	rec = append(rec, di+"/RECORD,,")
	sort.Strings(rec)
	tr.file(path.Join(site, di, "RECORD"), strings.Join(rec, "\n")+"\n")
}

// venv lays out what `python -m venv` makes, over a base interpreter at
// basePy (an ELF file, built here).
func (tr *pyTree) venv(prefix, version, basePy string) (site, python string) {
	tr.t.Helper()
	mm := majorMinor(version)
	if !tr.exists(basePy) {
		tr.so(path.Dir(basePy), testSOSpec{Name: path.Base(basePy)})
	}
	tr.file(path.Join(prefix, "pyvenv.cfg"), fmt.Sprintf("home = %s\ninclude-system-site-packages = false\nversion = %s\nexecutable = %s\ncommand = %s -m venv %s\n", path.Dir(basePy), version, basePy, basePy, prefix))
	tr.link(path.Join(prefix, "bin", "python"), basePy)
	tr.link(path.Join(prefix, "bin", "python3"), "python")
	tr.link(path.Join(prefix, "bin", "python"+mm), "python")
	tr.exe(path.Join(prefix, "bin", "activate"), "# This file must be used with \"source bin/activate\"\n")
	tr.link(path.Join(prefix, "lib64"), "lib")
	site = path.Join(prefix, "lib", "python"+mm, "site-packages")
	tr.mkdir(site)
	tr.dist(site, "pip", "23.2.1")
	return site, path.Join(prefix, "bin", "python")
}

func (tr *pyTree) exists(p string) bool {
	_, err := os.Lstat(tr.abs(p))
	return err == nil
}

// wheelLibs are the nvidia-* wheels of tensorflow[and-cuda] for CUDA 12:
// folder under site/nvidia, distribution, version, files.
type wheelLib struct {
	dir, dist, version string
	files              []testSOSpec
}

func cuda12Wheels(cudnnMajor int, cudnnVersion string) []wheelLib {
	cudnn := []testSOSpec{{Name: fmt.Sprintf("libcudnn.so.%d", cudnnMajor), RunPath: []string{"$ORIGIN"}}}
	subs := []string{"cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer", "cudnn_cnn_train", "cudnn_adv_infer", "cudnn_adv_train"}
	if cudnnMajor == 9 {
		subs = []string{"cudnn_graph", "cudnn_engines_precompiled", "cudnn_engines_runtime_compiled", "cudnn_heuristic", "cudnn_ops", "cudnn_cnn", "cudnn_adv"}
	}
	for _, s := range subs {
		cudnn = append(cudnn, testSOSpec{Name: fmt.Sprintf("lib%s.so.%d", s, cudnnMajor)})
	}
	return []wheelLib{
		{"nvjitlink", "nvidia-nvjitlink-cu12", "12.2.140", []testSOSpec{{Name: "libnvJitLink.so.12"}}},
		{"cuda_runtime", "nvidia-cuda-runtime-cu12", "12.2.140", []testSOSpec{{Name: "libcudart.so.12"}}},
		{"cublas", "nvidia-cublas-cu12", "12.2.5.6", []testSOSpec{{Name: "libcublasLt.so.12"}, {Name: "libcublas.so.12", RunPath: []string{"$ORIGIN"}, Needs: []string{"libcublasLt.so.12"}}}},
		{"cufft", "nvidia-cufft-cu12", "11.0.8.103", []testSOSpec{{Name: "libcufft.so.11"}}},
		{"curand", "nvidia-curand-cu12", "10.3.3.141", []testSOSpec{{Name: "libcurand.so.10"}}},
		{"cusparse", "nvidia-cusparse-cu12", "12.1.2.141", []testSOSpec{{Name: "libcusparse.so.12", RunPath: []string{"$ORIGIN/../../nvjitlink/lib", "$ORIGIN"}, Needs: []string{"../../nvjitlink/lib/libnvJitLink.so.12"}}}},
		{"cusolver", "nvidia-cusolver-cu12", "11.5.2.141", []testSOSpec{{Name: "libcusolver.so.11", RunPath: []string{"$ORIGIN/../../nvjitlink/lib", "$ORIGIN/../../cublas/lib", "$ORIGIN"}, Needs: []string{"../../cublas/lib/libcublas.so.12", "../../cublas/lib/libcublasLt.so.12", "../../nvjitlink/lib/libnvJitLink.so.12"}}}},
		{"cudnn", "nvidia-cudnn-cu12", cudnnVersion, cudnn},
		{"nccl", "nvidia-nccl-cu12", "2.16.5", []testSOSpec{{Name: "libnccl.so.2"}}},
		{"cuda_cupti", "nvidia-cuda-cupti-cu12", "12.2.142", []testSOSpec{{Name: "libcupti.so.12"}}},
	}
}

// installWheels installs wheels under site/nvidia/<dir>/lib; skip names
// folders left out.
func (tr *pyTree) installWheels(site string, wheels []wheelLib, skip ...string) {
	tr.t.Helper()
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	for _, w := range wheels {
		if skipped[w.dir] {
			continue
		}
		dir := path.Join(site, "nvidia", w.dir, "lib")
		var files []string
		for _, f := range w.files {
			var needs []string
			for _, n := range f.Needs {
				if strings.Contains(n, "/") {
					needs = append(needs, path.Clean(path.Join(dir, n)))
				} else {
					needs = append(needs, path.Join(dir, n))
				}
			}
			f.Needs = needs
			tr.so(dir, f)
			files = append(files, path.Join("nvidia", w.dir, "lib", f.Name))
		}
		tr.file(path.Join(site, "nvidia", w.dir, "__init__.py"), "")
		tr.dist(site, w.dist, w.version, files...)
	}
}

// tensorflow installs a TensorFlow wheel: the package folder, build_info.py
// and the two shared objects with TensorFlow's RUNPATH to the wheels.
func (tr *pyTree) tensorflow(site, dist, version, buildInfo string, wheelDirs []string) {
	tr.t.Helper()
	pkg := path.Join(site, "tensorflow")
	tr.file(path.Join(pkg, "__init__.py"), "# TensorFlow root package\n")
	tr.file(path.Join(pkg, "python/platform/build_info.py"), buildInfo)
	var fwRP, pwRP []string
	for _, d := range wheelDirs {
		fwRP = append(fwRP, "$ORIGIN/../nvidia/"+d+"/lib", "$ORIGIN/../../nvidia/"+d+"/lib")
		pwRP = append(pwRP, "$ORIGIN/../../nvidia/"+d+"/lib", "$ORIGIN/../nvidia/"+d+"/lib")
	}
	fw := tr.so(pkg, testSOSpec{Name: "libtensorflow_framework.so.2", RunPath: fwRP})
	pw := tr.so(path.Join(pkg, "python"), testSOSpec{Name: "_pywrap_tensorflow_internal.so", Soname: "_pywrap_tensorflow_internal.so", RunPath: append(pwRP, "$ORIGIN/.."), Needs: []string{fw}})
	tr.dist(site, dist, version, "tensorflow/__init__.py", "tensorflow/python/platform/build_info.py", strings.TrimPrefix(fw, site+"/"), strings.TrimPrefix(pw, site+"/"))
}

var allWheelDirs = []string{"cublas", "cuda_cupti", "cuda_nvcc", "cuda_nvrtc", "cuda_runtime", "cudnn", "cufft", "curand", "cusolver", "cusparse", "nccl", "nvjitlink"}

// buildInfoFor writes build_info.py; caps is the Python list literal of
// cuda_compute_capabilities.
func buildInfoFor(cuda, cudnn string, isCUDA bool, caps string) string {
	b := "import collections\n\nbuild_info = collections.OrderedDict()\nbuild_info['cpu_compiler'] = '/usr/lib/llvm-17/bin/clang'\n"
	if isCUDA {
		b += fmt.Sprintf("build_info['cuda_compute_capabilities'] = %s\nbuild_info['cuda_version'] = '%s'\nbuild_info['cudnn_version'] = '%s'\n", caps, cuda, cudnn)
		return b + "build_info['is_cuda_build'] = True\nbuild_info['is_rocm_build'] = False\nbuild_info['is_tensorrt_build'] = True\n"
	}
	return b + "build_info['is_cuda_build'] = False\nbuild_info['is_rocm_build'] = False\nbuild_info['is_tensorrt_build'] = False\n"
}

// machineBase lays out what every scenario machine has: a merged-/usr
// Debian-style library layout with the driver's libcuda.so.1, a loader
// cache and config, and a system Python.
func (tr *pyTree) machineBase() {
	tr.t.Helper()
	tr.link("/lib", "usr/lib")
	tr.link("/lib64", "usr/lib64")
	tr.mkdir("/usr/lib64")
	drv := tr.so("/usr/lib/x86_64-linux-gnu", testSOSpec{Name: "libcuda.so.535.104.05", Soname: "libcuda.so.1"})
	tr.link("/usr/lib/x86_64-linux-gnu/libcuda.so.1", path.Base(drv))
	tr.so("/usr/bin", testSOSpec{Name: "python3.11"})
	tr.link("/usr/bin/python3", "python3.11")
	tr.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
	tr.file("/etc/ld.so.conf.d/x86_64-linux-gnu.conf", "# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n")
	tr.cache([]LDCacheEntry{{Name: "libcuda.so.1", Path: "/lib/x86_64-linux-gnu/libcuda.so.1", Flags: 0x0303}})
}

func (tr *pyTree) cache(entries []LDCacheEntry) {
	tr.file("/etc/ld.so.cache", string(encodeTestLDCache(entries, "new")))
}
