package verify

import (
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/testenv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hashValue leaves out murmur3's last xor-shift because it cannot change the
// top 8 bits; check that claim, and that every value is exact in bfloat16.
func TestHashValue(t *testing.T) {
	full := func(seed, idx uint32) float64 {
		x := idx*0x9E3779B1 + seed
		x ^= x >> 16
		x *= 0x85EBCA6B
		x ^= x >> 13
		x *= 0xC2B2AE35
		x ^= x >> 16
		return float64(int32(x>>24)-128) / 128
	}
	seen := map[float64]bool{}
	for i := uint32(0); i < 1<<16; i++ {
		for _, seed := range []uint32{seedA, seedB, 0} {
			v := hashValue(seed, i*977)
			if v != full(seed, i*977) {
				t.Fatalf("idx %d seed %x: %v vs %v", i, seed, v, full(seed, i*977))
			}
			if v < -1 || v >= 1 {
				t.Fatalf("out of range: %v", v)
			}
			bits := math.Float32bits(float32(v))
			if bf16ToFloat(uint16(bits>>16)) != v {
				t.Fatalf("%v is not exact in bfloat16", v)
			}
			seen[v] = true
		}
	}
	if len(seen) != 256 {
		t.Errorf("want all 256 values, got %d", len(seen))
	}
}

func TestSampleEntries(t *testing.T) {
	es := sampleEntries(100, 50, 64)
	if len(es) != 64 || es[0] != (entry{0, 0}) || es[1] != (entry{99, 49}) {
		t.Fatalf("%v", es[:4])
	}
	seen := map[entry]bool{}
	for _, e := range es {
		if seen[e] || e.i < 0 || e.i >= 100 || e.j < 0 || e.j >= 50 {
			t.Fatalf("bad or repeated entry %v", e)
		}
		seen[e] = true
	}
	if got := sampleEntries(2, 2, 64); len(got) != 4 {
		t.Errorf("a 2×2 matrix has 4 entries, got %v", got)
	}
}

func TestReferenceAndError(t *testing.T) {
	// A 1×k row times a k×1 column, by hand.
	c, scale := reference(1, 3, entry{0, 0})
	var want, ws float64
	for l := 0; l < 3; l++ {
		a, b := hashValue(seedA, uint32(l)), hashValue(seedB, uint32(l))
		want += a * b
		ws += math.Abs(a * b)
	}
	if c != want || scale != ws {
		t.Errorf("reference %v %v, want %v %v", c, scale, want, ws)
	}
	if relError(1.5, 1, 0.5) != 1 || !math.IsInf(relError(math.NaN(), 1, 1), 1) || relError(2, 1, 0) != 1 {
		t.Error("relError")
	}
}

func TestStatsAndTFLOPS(t *testing.T) {
	if m, lo, hi := stats([]float64{3, 1, 2}); m != 2 || lo != 1 || hi != 3 {
		t.Errorf("%v %v %v", m, lo, hi)
	}
	if m, _, _ := stats([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("%v", m)
	}
	if got := tflops(8192, 8192, 8192, 1.1); math.Abs(got-999.5) > 0.1 {
		t.Errorf("%v", got)
	}
	if tflops(1, 1, 1, 0) != 0 {
		t.Error("zero time")
	}
	for x, want := range map[float64]string{771.4: "771", 52.34: "52.3", 8.123: "8.12"} {
		if got := host.FormatTFLOPS(x); got != want {
			t.Errorf("host.FormatTFLOPS(%v) = %q", x, got)
		}
	}
}

func TestExpectedTFLOPS(t *testing.T) {
	cases := []struct {
		name, dtype string
		want        float64
		model       string
	}{
		{"NVIDIA H200", "bf16", 989, "H200 SXM"},
		{"NVIDIA H200", "tf32", 494, "H200 SXM"},
		{"NVIDIA H200", "fp32", 67, "H200 SXM"},
		{"NVIDIA H200 NVL", "bf16", 835, "H200 NVL"},
		{"NVIDIA GH200 480GB", "bf16", 989, "GH200"},
		{"NVIDIA H100 80GB HBM3", "bf16", 989, "H100 SXM"},
		{"NVIDIA H100 PCIe", "tf32", 378, "H100 PCIe"},
		{"NVIDIA A100-SXM4-80GB", "bf16", 312, "A100"},
		{"NVIDIA A100 80GB PCIe", "fp32", 19.5, "A100"},
		{"NVIDIA A10", "bf16", 125, "A10"},
		{"NVIDIA A10G", "bf16", 0, ""},
		{"NVIDIA L40S", "bf16", 362, "L40S"},
		{"NVIDIA L40", "bf16", 181, "L40"},
		{"NVIDIA L4", "bf16", 121, "L4"},
		{"Tesla T4", "fp32", 8.1, "T4"},
		{"Tesla T4", "bf16", 0, "T4"},
		{"Tesla V100-SXM2-16GB", "fp32", 15.7, "V100 SXM2"},
		{"NVIDIA GeForce RTX 4090", "bf16", 165.2, "GeForce RTX 4090"},
		{"NVIDIA GeForce RTX 3090 Ti", "fp32", 40, "GeForce RTX 3090 Ti"},
		{"Fake GPU", "bf16", 0, ""},
	}
	for _, c := range cases {
		got, model := expectedTFLOPS(c.name, c.dtype)
		if got != c.want || model != c.model {
			t.Errorf("%s %s: %v %q, want %v %q", c.name, c.dtype, got, model, c.want, c.model)
		}
	}
}

func TestCauseOfCUresult(t *testing.T) {
	plain, hidden, wsl := env{}, env{CVDSet: true, CUDAVisibleDevices: "-1"}, env{WSL: true}
	cases := []struct {
		api  string
		code int
		e    env
		want string
	}{
		{"cuInit", 100, plain, "driver_missing"},
		{"cuInit", 100, hidden, "cuda_visible_devices_hides_gpu"},
		{"cuDeviceGet", 101, hidden, "cuda_visible_devices_hides_gpu"},
		{"cuInit", 999, plain, "cuinit_unknown_error"},
		{"cuLaunchKernel", 999, plain, "gpu_compute_failed"},
		{"cuInit", 35, plain, "driver_too_old_for_cuda"},
		{"cuModuleLoadDataEx", 222, plain, "driver_too_old_for_cuda"},
		{"cuInit", 803, plain, "driver_library_mismatch"},
		{"cuInit", 804, plain, "driver_too_old_for_cuda"},
		{"cuInit", 34, plain, "ld_library_path_pollution"},
		{"cuMemAlloc", 2, plain, "gpu_out_of_memory_other_process"},
		{"cuDevicePrimaryCtxRetain", 46, plain, "compute_mode_prohibited"},
		{"cuCtxSynchronize", 214, plain, "gpu_ecc_errors"},
		{"cuModuleLoadDataEx", 209, plain, "unsupported_compute_capability"},
		{"cuModuleLoadDataEx", 221, plain, "driver_missing"},
		{"cuInit", 304, plain, "device_node_permission"},
		{"cuInit", 3, plain, "cuinit_unknown_error"},
		{"cuCtxSynchronize", 700, plain, "gpu_compute_failed"},
		{"cuInit", 100, wsl, "driver_missing"},
	}
	for _, c := range cases {
		if got := causeOfCUresult(c.api, c.code, c.e); got != c.want {
			t.Errorf("%s %d %+v: %s, want %s", c.api, c.code, c.e, got, c.want)
		}
	}
	if causeOfLoadFailure(wsl) != "wsl_libcuda_not_found" || causeOfLoadFailure(plain) != "driver_missing" {
		t.Error("load failure causes")
	}
	if cuResultName(803) != "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" || cuResultName(12345) != "CUDA_ERROR_12345" || cuResultCode("CUDA_ERROR_NO_DEVICE") != 100 || cuResultCode("nope") != -1 {
		t.Error("names")
	}
}

func TestCauseOfCublasStatus(t *testing.T) {
	cases := []struct {
		code, lib, drv int
		want           string
	}{
		{1, 13, 12040, "driver_too_old_for_cuda"},
		{1, 12, 12040, "gpu_compute_failed"},
		{3, 12, 12040, "gpu_out_of_memory_other_process"},
		{8, 12, 12040, "unsupported_compute_capability"},
		{14, 12, 12040, "gpu_compute_failed"},
	}
	for _, c := range cases {
		if got := causeOfCublasStatus(c.code, c.lib, c.drv); got != c.want {
			t.Errorf("%+v: %s", c, got)
		}
	}
}

func TestResolvePython(t *testing.T) {
	py := needPython(t)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		testenv.Missing(t, "python3 -m venv: %v\n%s", err, out)
	}
	conda := filepath.Join(dir, "conda")
	if err := os.MkdirAll(filepath.Join(conda, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(conda, "bin", "python")); err != nil {
		t.Fatal(err)
	}
	pathDir := filepath.Dir(py)
	cases := []struct {
		explicit string
		env      []string
		want     string
		how      string
		err      bool
	}{
		{"", []string{"VIRTUAL_ENV=" + venv, "PATH=" + pathDir}, filepath.Join(venv, "bin", "python3"), "VIRTUAL_ENV", false},
		{"", []string{"CONDA_PREFIX=" + conda, "VIRTUAL_ENV=" + venv, "PATH=" + pathDir}, filepath.Join(conda, "bin", "python"), "CONDA_PREFIX", false},
		// Both active, the venv first on PATH (a venv made from conda's
		// Python): the venv, as the snapshot's python collector picks.
		{"", []string{"CONDA_PREFIX=" + conda, "VIRTUAL_ENV=" + venv, "PATH=" + filepath.Join(venv, "bin") + ":" + filepath.Join(conda, "bin") + ":" + pathDir},
			filepath.Join(venv, "bin", "python3"), "VIRTUAL_ENV", false},
		{"", []string{"PATH=" + pathDir}, filepath.Join(pathDir, "python3"), "PATH", false},
		{"", []string{"VIRTUAL_ENV=/nonexistent", "PATH=" + pathDir}, filepath.Join(pathDir, "python3"), "PATH", false},
		{py, nil, py, "--python", false},
		{"python3", []string{"PATH=" + pathDir}, filepath.Join(pathDir, "python3"), "--python", false},
		{"/nonexistent/python", nil, "", "--python", true},
		{"", []string{"PATH=/nonexistent"}, "", "PATH", true},
	}
	for _, c := range cases {
		o := Options{Python: c.explicit, Environ: c.env}.withDefaults()
		got, how, err := o.Python, o.pythonFrom, o.pythonErr
		if (err != nil) != c.err || got != c.want || how != c.how {
			t.Errorf("%q %v: %q %q %v, want %q %q", c.explicit, c.env, got, how, err, c.want, c.how)
		}
	}
}

func TestCublasCandidates(t *testing.T) {
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	home := filepath.Join(dir, "home")
	files := []string{
		filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "cublas", "lib", "libcublas.so.12"),
		filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "cublas", "lib", "libcublas.so.12.4.5.8"),
		filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "cu13", "lib", "libcublas.so.13"),
		filepath.Join(home, ".local", "lib", "python3.10", "site-packages", "nvidia", "cublas", "lib", "libcublas.so.11"),
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := cublasCandidates("/opt/tf/libcublas.so.12", filepath.Join(venv, "bin", "python"), []string{"HOME=" + home})
	want := []string{"/opt/tf/libcublas.so.12", files[2], files[0], files[3], "libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := cublasCandidates("", "", nil); len(got) != 3 {
		t.Errorf("with nothing known: %v", got)
	}
}

func BenchmarkReference(b *testing.B) {
	es := sampleEntries(8192, 8192, 128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range es {
			reference(8192, 8192, e)
		}
	}
}
