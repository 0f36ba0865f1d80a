package host

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tfdoctor/doctor/internal/testenv"
)

// testSOSpec describes a tiny shared object built with gcc for a test.
type testSOSpec struct {
	Name    string   // file name, e.g. libcudart.so.12
	Soname  string   // -Wl,-soname (default Name)
	RunPath []string // -Wl,-rpath with --enable-new-dtags (DT_RUNPATH)
	RPath   []string // -Wl,-rpath with --disable-new-dtags (DT_RPATH)
	Needs   []string // paths of other built objects to link against (DT_NEEDED)
}

var gccOnce sync.Once
var gccPath string

func needTestGCC(t testing.TB) {
	t.Helper()
	gccOnce.Do(func() { gccPath, _ = exec.LookPath("gcc") })
	if gccPath == "" {
		testenv.Missing(t, "gcc not found: cannot build test shared objects")
	}
}

// buildSO builds one shared object into dir and returns its path. Objects
// are kept in memory by spec within a test binary run (same spec, same
// bytes), because gcc costs ~30 ms a call.
func buildTestSO(t testing.TB, dir string, s testSOSpec) string {
	t.Helper()
	needTestGCC(t)
	if s.Soname == "" {
		s.Soname = s.Name
	}
	out := filepath.Join(dir, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Needed objects enter the output only as their sonames, which the
	// tests keep equal to the file names' bases.
	var needBases []string
	for _, n := range s.Needs {
		needBases = append(needBases, filepath.Base(n))
	}
	key := strings.Join([]string{s.Name, s.Soname, strings.Join(s.RunPath, ":"), strings.Join(s.RPath, ":"), strings.Join(needBases, ":")}, "|")
	soCacheMu.Lock()
	cached, ok := soCache[key]
	soCacheMu.Unlock()
	if ok {
		if err := os.WriteFile(out, cached, 0o755); err != nil {
			t.Fatal(err)
		}
		return out
	}
	obj := filepath.Join(t.TempDir(), "x.o")
	if err := os.WriteFile(obj, testObject(t), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-shared", "-nostdlib", "-o", out, obj, "-Wl,-soname," + s.Soname}
	if len(s.RunPath) > 0 {
		args = append(args, "-Wl,--enable-new-dtags", "-Wl,-rpath,"+strings.Join(s.RunPath, ":"))
	}
	if len(s.RPath) > 0 {
		args = append(args, "-Wl,--disable-new-dtags", "-Wl,-rpath,"+strings.Join(s.RPath, ":"))
	}
	for _, n := range s.Needs {
		args = append(args, "-Wl,--no-as-needed", n)
	}
	cmd := exec.Command(gccPath, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	if b, err := os.ReadFile(out); err == nil {
		soCacheMu.Lock()
		soCache[key] = b
		soCacheMu.Unlock()
	}
	return out
}

// testObject compiles the one object file every test library is linked
// from (compiling is most of gcc's time; linking alone is quick).
func testObject(t testing.TB) []byte {
	objOnce.Do(func() {
		dir, err := os.MkdirTemp("", "doctor-obj-")
		if err != nil {
			objErr = err
			return
		}
		defer os.RemoveAll(dir)
		src := filepath.Join(dir, "x.c")
		os.WriteFile(src, []byte("int doctor_test_symbol(void){return 1;}\n"), 0o644)
		out, err := exec.Command(gccPath, "-c", "-fPIC", "-o", filepath.Join(dir, "x.o"), src).CombinedOutput()
		if err != nil {
			objErr = fmt.Errorf("gcc -c: %v: %s", err, out)
			return
		}
		objBytes, objErr = os.ReadFile(filepath.Join(dir, "x.o"))
	})
	if objErr != nil {
		t.Fatal(objErr)
	}
	return objBytes
}

var (
	objOnce  sync.Once
	objBytes []byte
	objErr   error
)

var (
	soCacheMu sync.Mutex
	soCache   = map[string][]byte{}
)
