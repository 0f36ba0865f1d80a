package testenv

import "testing"

func TestStrict(t *testing.T) {
	for _, c := range []struct {
		ci, integ string
		want      bool
	}{
		{"", "", false}, {"true", "", true}, {"1", "", true}, {"false", "", false},
		{"", "1", true}, {"", "0", false}, {"false", "yes", true},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv("DOCTOR_INTEGRATION", c.integ)
		if got := Strict(); got != c.want {
			t.Errorf("CI=%q DOCTOR_INTEGRATION=%q: %v, want %v", c.ci, c.integ, got, c.want)
		}
	}
}

// fakeTB records how Missing ended the test.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skip(...any)           { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func TestMissing(t *testing.T) {
	t.Setenv("DOCTOR_INTEGRATION", "")
	t.Setenv("CI", "")
	f := &fakeTB{}
	Missing(f, "python3 not installed")
	if !f.skipped || f.failed {
		t.Errorf("outside CI: %+v", f)
	}
	t.Setenv("CI", "true")
	f = &fakeTB{}
	Missing(f, "python3 not installed")
	if !f.failed {
		t.Errorf("in CI a missing tool must fail the test: %+v", f)
	}
}
