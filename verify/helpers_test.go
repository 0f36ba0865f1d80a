package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/testenv"
)

// TestRungChildHelper is not a test: the ladder's tests run the test binary
// itself as the rung child (the helper-process pattern), and this is where
// that child starts.
func TestRungChildHelper(t *testing.T) {
	if os.Getenv("DOCTOR_VERIFY_CHILD") != "1" {
		t.Skip("runs only as the rung child of another test")
	}
	os.Exit(ChildMain(os.Stdin, os.Stdout))
}

// fakes builds the fake libcuda.so.1 and libcublas.so.12/.13 (testdata) with
// gcc into a fresh folder.
func fakes(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testenv.Missing(t, "gcc is needed to build the fake CUDA libraries")
	}
	dir := t.TempDir()
	build := func(out, src string, flags ...string) {
		args := append([]string{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, out), filepath.Join("testdata", src)}, flags...)
		if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", src, err, b)
		}
	}
	build("libcuda.so.1", "fakecuda.c")
	build("libcublas.so.12", "fakecublas.c", "-DFAKE_MAJOR=12")
	build("libcublas.so.13", "fakecublas.c", "-DFAKE_MAJOR=13")
	return dir
}

// baseEnv is this process's environment without the variables the tests
// set themselves.
func baseEnv() []string {
	// The fake frameworks are imported from testdata: no bytecode there.
	out := []string{"PYTHONDONTWRITEBYTECODE=1"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CUDA_VISIBLE_DEVICES" || strings.HasPrefix(k, "FAKECUDA_") || strings.HasPrefix(k, "FAKECUBLAS_") || k == "DOCTOR_VERIFY_CHILD" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// fakeOptions runs the driver and library rungs against the fakes in dir,
// small and quick, with extra environment variables.
func fakeOptions(dir string, env ...string) Options {
	return Options{
		Size: 48, Runs: 3, Samples: 32,
		Framework:    "none",
		LibCUDA:      filepath.Join(dir, "libcuda.so.1"),
		LibCublas:    filepath.Join(dir, "libcublas.so.12"),
		Environ:      append(append(baseEnv(), "DOCTOR_VERIFY_CHILD=1"), env...),
		ChildCommand: []string{os.Args[0], "-test.run=^TestRungChildHelper$"},
		// Generous: under -race the fakes are slow; hangs are tested
		// with short deadlines of their own.
		DriverTimeout: 60 * time.Second, LibrariesTimeout: 60 * time.Second, FrameworkTimeout: 60 * time.Second,
	}
}

func runLadder(t *testing.T, o Options) *host.Verification {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v := Run(ctx, o)
	if v == nil {
		t.Fatal("Run returned nil")
	}
	return v
}

func rung(t *testing.T, v *host.Verification, name string) host.Rung {
	t.Helper()
	r := v.Rung(name)
	if r == nil {
		t.Fatalf("no %s rung in %+v", name, v.Rungs)
	}
	return *r
}
