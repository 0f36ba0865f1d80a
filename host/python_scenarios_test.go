package host

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/internal/golden"

	"github.com/google/go-cmp/cmp"
)

// The scenarios of issue 3, each a machine tree built here (real ELF files,
// pip-style metadata, a loader cache) and gathered with --root. The
// snapshot is kept in testdata/upper/<name>/snapshot.json; package checks
// evaluates it against expected.json beside it. Rewrite both with
//
//	go test ./host ./checks -run Scenario -update

const upperTestdata = "../testdata/upper"

var caps90 = "['sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']"
var caps80 = "['sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']"

func nvmlH100() NVML {
	return NVML{Available: true, DriverVersion: "535.104.05", CUDADriverVersion: 12020, NVMLVersion: "12.535.104.05",
		GPUs: []GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-0000-0000-0000-000000000001", PCIBusID: "00000000:01:00.0",
			MemoryTotalMiB: 81559, MemoryUsedMiB: 4, ComputeCapability: "9.0", ComputeMode: "Default", ProcessesSupported: true}}}
}

func nvmlH200() NVML {
	return NVML{Available: true, DriverVersion: "580.159.04", CUDADriverVersion: 13000, NVMLVersion: "13.580.159.04",
		GPUs: []GPU{{Index: 0, Name: "NVIDIA H200", UUID: "GPU-00000000-0000-0000-0000-000000000002", PCIBusID: "00000000:00:05.0",
			MemoryTotalMiB: 143771, MemoryUsedMiB: 0, ComputeCapability: "9.0", ComputeMode: "Default", ProcessesSupported: true}}}
}

type upperScenario struct {
	name  string
	about string
	build func(tr *pyTree) (environ []string, python string)
	nvml  func() NVML
}

// venvEnv is the environment of a shell with the venv at prefix activated.
func venvEnv(prefix string) []string {
	return []string{"HOME=/home/user", "USER=user", "VIRTUAL_ENV=" + prefix, "PATH=" + prefix + "/bin:/usr/local/bin:/usr/bin:/bin"}
}

// nvccWheel installs nvidia-cuda-nvcc-cu12 with ptxas and libdevice.
func (tr *pyTree) nvccWheel(site string) {
	tr.exe(path.Join(site, "nvidia/cuda_nvcc/bin/ptxas"), "#!/bin/sh\necho ptxas\n")
	tr.file(path.Join(site, "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc"), "BC\xc0\xde")
	tr.file(path.Join(site, "nvidia/cuda_nvcc/__init__.py"), "")
	tr.dist(site, "nvidia-cuda-nvcc-cu12", "12.2.140", "nvidia/cuda_nvcc/bin/ptxas", "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc")
}

func upperScenarios() []upperScenario {
	tf215 := func(tr *pyTree, py string, skip ...string) string {
		tr.machineBase()
		base := "/usr/bin/python" + majorMinor(py)
		site, _ := tr.venv("/home/user/tf", py, base)
		tr.installWheels(site, cuda12Wheels(8, "8.9.4.25"), skip...)
		tr.tensorflow(site, "tensorflow", "2.15.0", buildInfoFor("12.2", "8", true, caps90), allWheelDirs)
		return site
	}
	return []upperScenario{
		{
			name:  "tf215-cudnn-missing",
			about: "TF 2.15 from pip in a venv, every nvidia-* wheel but cuDNN; the build lacks SASS for the H100",
			build: func(tr *pyTree) ([]string, string) {
				tr.machineBase()
				site, _ := tr.venv("/home/user/tf", "3.11.7", "/usr/bin/python3.11")
				tr.installWheels(site, cuda12Wheels(8, "8.9.4.25"), "cudnn")
				tr.nvccWheel(site)
				tr.tensorflow(site, "tensorflow", "2.15.0", buildInfoFor("12.2", "8", true, caps80), allWheelDirs)
				return venvEnv("/home/user/tf"), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "tf215-python312",
			about: "TF 2.15 (Python 3.9-3.11) forced into a Python 3.12 venv",
			build: func(tr *pyTree) ([]string, string) {
				tr.so("/usr/bin", testSOSpec{Name: "python3.12"})
				site := tf215(tr, "3.12.1")
				tr.nvccWheel(site)
				return venvEnv("/home/user/tf"), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "tf-plus-tf-cpu",
			about: "tensorflow and tensorflow-cpu 2.16.1 installed into one site-packages",
			build: func(tr *pyTree) ([]string, string) {
				tr.machineBase()
				site, _ := tr.venv("/home/user/tf", "3.11.7", "/usr/bin/python3.11")
				tr.installWheels(site, cuda12Wheels(8, "8.9.7.29"))
				tr.nvccWheel(site)
				tr.tensorflow(site, "tensorflow", "2.16.1", buildInfoFor("12.3", "8", true, caps90), allWheelDirs)
				tr.dist(site, "tensorflow-cpu", "2.16.1", "tensorflow/__init__.py")
				return venvEnv("/home/user/tf"), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "cpu-only-build",
			about: "tensorflow-cpu 2.17.0, built without CUDA",
			build: func(tr *pyTree) ([]string, string) {
				tr.machineBase()
				site, _ := tr.venv("/home/user/tf", "3.11.7", "/usr/bin/python3.11")
				tr.tensorflow(site, "tensorflow-cpu", "2.17.0", buildInfoFor("", "", false, ""), nil)
				return venvEnv("/home/user/tf"), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "ld-library-path-cuda11",
			about: "TF 2.15 with its wheels, LD_LIBRARY_PATH=/usr/local/cuda-11.8/lib64 (CUDA 11.8 with cuDNN 8.6) ahead of them",
			build: func(tr *pyTree) ([]string, string) {
				site := tf215(tr, "3.11.7")
				tr.nvccWheel(site)
				d := "/usr/local/cuda-11.8/lib64"
				lt := tr.so(d, testSOSpec{Name: "libcublasLt.so.11.11.3.6", Soname: "libcublasLt.so.11"})
				tr.link(path.Join(d, "libcublasLt.so.11"), path.Base(lt))
				bl := tr.so(d, testSOSpec{Name: "libcublas.so.11.11.3.6", Soname: "libcublas.so.11", Needs: []string{lt}})
				tr.link(path.Join(d, "libcublas.so.11"), path.Base(bl))
				so := tr.so(d, testSOSpec{Name: "libcusolver.so.11.4.1.48", Soname: "libcusolver.so.11", Needs: []string{bl, lt}})
				tr.link(path.Join(d, "libcusolver.so.11"), path.Base(so))
				ct := tr.so(d, testSOSpec{Name: "libcudart.so.11.8.89", Soname: "libcudart.so.11.0"})
				tr.link(path.Join(d, "libcudart.so.11.0"), path.Base(ct))
				dn := tr.so(d, testSOSpec{Name: "libcudnn.so.8.6.0", Soname: "libcudnn.so.8"})
				tr.link(path.Join(d, "libcudnn.so.8"), path.Base(dn))
				for _, s := range []string{"cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer", "cudnn_cnn_train", "cudnn_adv_infer", "cudnn_adv_train"} {
					f := tr.so(d, testSOSpec{Name: "lib" + s + ".so.8.6.0", Soname: "lib" + s + ".so.8"})
					tr.link(path.Join(d, "lib"+s+".so.8"), path.Base(f))
				}
				return append(venvEnv("/home/user/tf"), "LD_LIBRARY_PATH="+d), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "libdevice-missing",
			about: "TF 2.15 with its library wheels but no nvidia-cuda-nvcc wheel and no CUDA toolkit: XLA has no libdevice",
			build: func(tr *pyTree) ([]string, string) {
				tf215(tr, "3.11.7")
				return venvEnv("/home/user/tf"), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "conda-cudnn-gone",
			about: "conda env with conda-forge cudatoolkit 11.2 and cudnn 8.1.0.77 (TensorFlow's documented recipe; cudnn's files were deleted) and pip TF 2.11",
			build: func(tr *pyTree) ([]string, string) {
				tr.machineBase()
				base := "/home/user/miniconda3"
				tr.mkdir(base + "/conda-meta")
				tr.file(base+"/conda-meta/python-3.11.5-h955ad1f_0.json", `{"name":"python","version":"3.11.5","files":[]}`)
				tr.exe(base+"/bin/conda", "#!/bin/sh\n")
				tr.mkdir(base + "/condabin")
				env := base + "/envs/tf"
				tr.so(env+"/bin", testSOSpec{Name: "python3.10", RPath: []string{"$ORIGIN/../lib"}})
				tr.link(env+"/bin/python", "python3.10")
				tr.link(env+"/bin/python3", "python3.10")
				meta := func(name, version, build string, files []string, depends ...string) {
					b, _ := json.Marshal(map[string]any{"name": name, "version": version, "build": build, "channel": "https://conda.anaconda.org/conda-forge/linux-64", "files": files, "depends": depends})
					tr.file(path.Join(env, "conda-meta", name+"-"+version+"-"+build+".json"), string(b))
				}
				meta("python", "3.10.13", "h955ad1f_0", []string{"bin/python3.10"})
				var tk []string
				for _, s := range []struct{ name, soname string }{{"libcudart.so.11.2.152", "libcudart.so.11.0"}, {"libcublasLt.so.11.4.1.1043", "libcublasLt.so.11"}, {"libcublas.so.11.4.1.1043", "libcublas.so.11"}, {"libcufft.so.10.4.1.152", "libcufft.so.10"}, {"libcurand.so.10.2.3.152", "libcurand.so.10"}, {"libcusolver.so.11.1.0.152", "libcusolver.so.11"}, {"libcusparse.so.11.4.1.1152", "libcusparse.so.11"}} {
					f := tr.so(env+"/lib", testSOSpec{Name: s.name, Soname: s.soname})
					tr.link(env+"/lib/"+s.soname, path.Base(f))
					tk = append(tk, "lib/"+s.name, "lib/"+s.soname)
				}
				tr.file(env+"/nvvm/libdevice/libdevice.10.bc", "BC")
				tk = append(tk, "nvvm/libdevice/libdevice.10.bc")
				meta("cudatoolkit", "11.2.2", "hbe64b41_11", tk, "__glibc >=2.17,<3.0.a0")
				tr.exe(env+"/bin/ptxas", "#!/bin/sh\n")
				meta("cuda-nvcc", "11.2.152", "0", []string{"bin/ptxas"})
				var dnn []string
				for _, s := range []string{"cudnn", "cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer", "cudnn_cnn_train", "cudnn_adv_infer", "cudnn_adv_train"} {
					dnn = append(dnn, "lib/lib"+s+".so.8", "lib/lib"+s+".so.8.1.0")
				}
				dnn = append(dnn, "include/cudnn.h")
				meta("cudnn", "8.1.0.77", "h90431f1_0", dnn, "cudatoolkit >=11.0,<12")
				site := env + "/lib/python3.10/site-packages"
				tr.tensorflow(site, "tensorflow", "2.11.0", buildInfoFor("11.2", "8", true, caps80), nil)
				return []string{"HOME=/home/user", "CONDA_PREFIX=" + env, "CONDA_DEFAULT_ENV=tf", "CONDA_EXE=" + base + "/bin/conda", "PATH=" + env + "/bin:" + base + "/condabin:/usr/bin:/bin"}, ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "jupyter-other-env",
			about: "TF 2.16 in a venv; the Jupyter kernel named after it runs the system Python",
			build: func(tr *pyTree) ([]string, string) {
				tr.machineBase()
				site, _ := tr.venv("/home/user/tf", "3.11.7", "/usr/bin/python3.11")
				tr.installWheels(site, cuda12Wheels(8, "8.9.7.29"))
				tr.nvccWheel(site)
				tr.tensorflow(site, "tensorflow", "2.16.1", buildInfoFor("12.3", "8", true, caps90), allWheelDirs)
				tr.dist(site, "ipykernel", "6.29.0")
				tr.file("/home/user/.local/share/jupyter/kernels/tf/kernel.json", `{
 "argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
 "display_name": "Python (tf)",
 "language": "python",
 "metadata": {"debugger": true}
}`)
				tr.file("/home/user/.local/share/jupyter/kernels/ir/kernel.json", `{"argv": ["R", "--slave"], "display_name": "R", "language": "R"}`)
				return venvEnv("/home/user/tf"), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "tf216-healthy",
			about: "TF 2.16.1 with every wheel it pins: nothing is wrong",
			build: func(tr *pyTree) ([]string, string) {
				tr.machineBase()
				site, _ := tr.venv("/home/user/tf", "3.11.7", "/usr/bin/python3.11")
				tr.installWheels(site, cuda12Wheels(8, "8.9.7.29"))
				tr.nvccWheel(site)
				tr.tensorflow(site, "tensorflow", "2.16.1", buildInfoFor("12.3", "8", true, caps90), allWheelDirs)
				return venvEnv("/home/user/tf"), ""
			},
			nvml: nvmlH100,
		},
		{
			name:  "gpu-machine-cuda13",
			about: "the lab's H200 machine: python3 is a Python 3.12 venv with torch and the CUDA 13 wheels, no TensorFlow, driver 580 (CUDA 13.0), nvcc 13.0",
			build: func(tr *pyTree) ([]string, string) {
				tr.link("/lib", "usr/lib")
				tr.mkdir("/usr/lib64")
				drv := tr.so("/usr/local/nvidia/lib64", testSOSpec{Name: "libcuda.so.580.159.04", Soname: "libcuda.so.1"})
				tr.link("/usr/local/nvidia/lib64/libcuda.so.1", path.Base(drv))
				tr.mkdir("/usr/lib/x86_64-linux-gnu")
				tr.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
				tr.file("/etc/ld.so.conf.d/000_cuda.conf", "/usr/local/cuda/targets/x86_64-linux/lib\n")
				tr.file("/etc/ld.so.conf.d/nvidia.conf", "/usr/local/nvidia/lib64\n")
				tk := "/usr/local/cuda-13.0"
				rt := tr.so(tk+"/targets/x86_64-linux/lib", testSOSpec{Name: "libcudart.so.13.0.48", Soname: "libcudart.so.13"})
				tr.link(tk+"/targets/x86_64-linux/lib/libcudart.so.13", path.Base(rt))
				tr.link(tk+"/lib64", "targets/x86_64-linux/lib")
				tr.exe(tk+"/bin/nvcc", "#!/bin/sh\n")
				tr.file(tk+"/version.json", `{"cuda": {"name": "CUDA SDK", "version": "13.0.48"}, "cuda_nvcc": {"version": "13.0.48"}}`)
				tr.link("/usr/local/cuda", "cuda-13.0")
				tr.cache([]LDCacheEntry{
					{Name: "libcudart.so.13", Path: "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13", Flags: 0x0303},
					{Name: "libcuda.so.1", Path: "/usr/local/nvidia/lib64/libcuda.so.1", Flags: 0x0303},
				})
				tr.so("/usr/bin", testSOSpec{Name: "python3.12"})
				tr.link("/usr/bin/python3", "python3.12")
				site, _ := tr.venv("/opt/torch/.venv", "3.12.3", "/usr/bin/python3.12")
				cu13 := path.Join(site, "nvidia/cu13/lib")
				jl := tr.so(cu13, testSOSpec{Name: "libnvJitLink.so.13"})
				lt := tr.so(cu13, testSOSpec{Name: "libcublasLt.so.13"})
				org := []string{"$ORIGIN"}
				bl := tr.so(cu13, testSOSpec{Name: "libcublas.so.13", RunPath: org, Needs: []string{lt}})
				tr.so(cu13, testSOSpec{Name: "libcudart.so.13"})
				tr.so(cu13, testSOSpec{Name: "libcufft.so.12"})
				tr.so(cu13, testSOSpec{Name: "libcurand.so.10"})
				tr.so(cu13, testSOSpec{Name: "libcusolver.so.12", RunPath: org, Needs: []string{bl, lt, jl}})
				tr.so(cu13, testSOSpec{Name: "libcusparse.so.12", RunPath: org, Needs: []string{jl}})
				tr.so(cu13, testSOSpec{Name: "libnvrtc.so.13"})
				for _, w := range []struct{ dist, ver, file string }{{"nvidia-cuda-runtime", "13.0.96", "libcudart.so.13"}, {"nvidia-cublas", "13.1.0.3", "libcublas.so.13"}, {"nvidia-cufft", "12.0.0.61", "libcufft.so.12"}, {"nvidia-curand", "10.4.0.35", "libcurand.so.10"}, {"nvidia-cusolver", "12.0.4.66", "libcusolver.so.12"}, {"nvidia-cusparse", "12.6.3.3", "libcusparse.so.12"}, {"nvidia-nvjitlink", "13.0.88", "libnvJitLink.so.13"}, {"nvidia-cuda-nvrtc", "13.0.88", "libnvrtc.so.13"}} {
					files := []string{"nvidia/cu13/lib/" + w.file}
					if w.file == "libcublas.so.13" {
						files = append(files, "nvidia/cu13/lib/libcublasLt.so.13")
					}
					tr.dist(site, w.dist, w.ver, files...)
				}
				dnn := []string{"nvidia/cudnn/lib/libcudnn.so.9"}
				tr.so(path.Join(site, "nvidia/cudnn/lib"), testSOSpec{Name: "libcudnn.so.9", RunPath: org})
				for _, s := range []string{"cudnn_graph", "cudnn_engines_precompiled", "cudnn_engines_runtime_compiled", "cudnn_heuristic", "cudnn_ops", "cudnn_cnn", "cudnn_adv"} {
					tr.so(path.Join(site, "nvidia/cudnn/lib"), testSOSpec{Name: "lib" + s + ".so.9"})
					dnn = append(dnn, "nvidia/cudnn/lib/lib"+s+".so.9")
				}
				tr.dist(site, "nvidia-cudnn-cu13", "9.13.0.50", dnn...)
				tr.so(path.Join(site, "nvidia/nccl/lib"), testSOSpec{Name: "libnccl.so.2"})
				tr.dist(site, "nvidia-nccl-cu13", "2.27.7", "nvidia/nccl/lib/libnccl.so.2")
				tr.file(path.Join(site, "torch/__init__.py"), "")
				tr.dist(site, "torch", "2.11.0+cu130", "torch/__init__.py")
				tr.dist(site, "jax", "0.11.2")
				tr.dist(site, "cupy-cuda13x", "13.6.0")
				tr.dist(site, "nvidia-ml-py", "13.580.82")
				return []string{"HOME=/root", "USER=root", "PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LD_LIBRARY_PATH=/usr/local/nvidia/lib64"}, ""
			},
			nvml: nvmlH200,
		},
	}
}

// gatherScenario builds a scenario's tree and gathers it like
// `doctor snapshot --root TREE` would, with the GPU (which cannot exist
// here) filled in as NVML would report it.
func gatherScenario(t *testing.T, sc upperScenario) *Snapshot {
	t.Helper()
	tr := newPyTree(t)
	environ, python := sc.build(tr)
	s := Gather(context.Background(), Options{Root: tr.root, Environ: environ, Python: python, Quick: true, Version: "test",
		Only: []string{"python", "env"}, Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }})
	s.Root = "/"
	for n, st := range s.Collectors {
		st.DurationMS = 0
		s.Collectors[n] = st
	}
	if s.Libraries != nil {
		s.Libraries.TimingsMS = nil
	}
	s.NVML = sc.nvml()
	s.Collectors["nvml"] = CollectorStatus{}
	s.Platform = Platform{OS: "linux", Distro: "Ubuntu 22.04.4 LTS", DistroID: "ubuntu", DistroVersion: "22.04", Kernel: "6.5.0-41-generic", Arch: "x86_64", Hostname: "scenario", User: "user", Home: envValue(environ, "HOME"), SecureBoot: "disabled"}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), tr.root) {
		t.Fatalf("snapshot mentions the temporary root %s", tr.root)
	}
	return s
}

func envValue(environ []string, k string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}

// TestUpperScenarioSnapshots gathers every scenario and compares the
// snapshot with testdata/upper/<name>/snapshot.json (-update rewrites it).
// The ELF facts in a snapshot are those of this architecture, so the
// comparison runs on amd64 only.
func TestUpperScenarioSnapshots(t *testing.T) {
	needTestGCC(t)
	for _, sc := range upperScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			s := gatherScenario(t, sc)
			if st := s.Collectors["python"]; st.Error != "" || st.TimedOut {
				t.Fatalf("python collector: %+v", st)
			}
			var buf bytes.Buffer
			s.WriteJSON(&buf)
			file := filepath.Join(upperTestdata, sc.name, "snapshot.json")
			if golden.Update() {
				os.MkdirAll(filepath.Dir(file), 0o755)
				if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(upperTestdata, sc.name, "README"), []byte(sc.about+"\n"), 0o644)
				return
			}
			if runtime.GOARCH != "amd64" {
				t.Skip("golden snapshots hold amd64 ELF facts")
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			var a, b any
			json.Unmarshal(want, &a)
			json.Unmarshal(buf.Bytes(), &b)
			if d := cmp.Diff(a, b); d != "" {
				t.Errorf("snapshot differs from %s (-want +got; -update rewrites):\n%s", file, d)
			}
		})
	}
}
