package watch

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChildren(t *testing.T) {
	for in, want := range map[string][]int{
		"":               nil,
		"12 34 ":         {12, 34},
		"12\n":           {12},
		"x 5 -3 0 7":     {5, 7},
		"99999999999999": nil,
	} {
		if got := parseChildren([]byte(in)); !cmp.Equal(want, got) {
			t.Errorf("parseChildren(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParseCPUMax(t *testing.T) {
	tests := []struct {
		in    string
		cores float64
		ok    bool
	}{
		{"max 100000\n", 0, false},
		{"200000 100000\n", 2, true},
		{"50000 100000", 0.5, true},
		{"150000", 1.5, true},
		{"", 0, false},
		{"0 100000", 0, false},
		{"-1 100000", 0, false},
		{"100 0", 0, false},
		{"abc 100000", 0, false},
		{"1 2 3", 0, false},
		{"NaN 100000", 0, false},
	}
	for _, tt := range tests {
		c, ok := parseCPUMax(tt.in)
		if c != tt.cores || ok != tt.ok {
			t.Errorf("parseCPUMax(%q) = %v, %v; want %v, %v", tt.in, c, ok, tt.cores, tt.ok)
		}
	}
}

func TestParseCgroupV2Path(t *testing.T) {
	tests := []struct {
		in   string
		path string
		ok   bool
	}{
		{"0::/user.slice/user-1000.slice/session-2.scope\n", "/user.slice/user-1000.slice/session-2.scope", true},
		{"12:cpu,cpuacct:/docker/abc\n0::/docker/abc\n", "/docker/abc", true},
		{"12:cpu,cpuacct:/docker/abc\n", "", false},
		{"0::/../../etc\n", "", false},
		{"0::relative\n", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		p, ok := parseCgroupV2Path(tt.in)
		if p != tt.path || ok != tt.ok {
			t.Errorf("parseCgroupV2Path(%q) = %q, %v; want %q, %v", tt.in, p, ok, tt.path, tt.ok)
		}
	}
}

// This machine's own cgroup and affinity give a sane core count.
func TestCPUsAvailable(t *testing.T) {
	n, src := cpusAvailable(os.Getpid())
	if n <= 0 || src == "" {
		t.Errorf("cpusAvailable = %v, %q", n, src)
	}
}

func FuzzParseChildren(f *testing.F) {
	f.Add([]byte("12 34 "))
	f.Add([]byte(""))
	f.Add([]byte("1\x002 -4"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, pid := range parseChildren(b) {
			if pid <= 0 {
				t.Fatalf("parseChildren(%q) gave PID %d", b, pid)
			}
		}
	})
}

func FuzzParseCPUMax(f *testing.F) {
	for _, s := range []string{"max 100000\n", "200000 100000\n", "1e400 1", "5 1e-400", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := parseCPUMax(s)
		if ok && (c <= 0 || math.IsInf(c, 0) || math.IsNaN(c)) {
			t.Fatalf("parseCPUMax(%q) = %v", s, c)
		}
		if !ok && c != 0 {
			t.Fatalf("parseCPUMax(%q) = %v with ok false", s, c)
		}
	})
}

func FuzzParseCgroupV2Path(f *testing.F) {
	for _, s := range []string{"0::/a/b\n", "1:name=systemd:/x\n0::/\n", "0::/../x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := parseCgroupV2Path(s)
		if ok && (!strings.HasPrefix(p, "/") || strings.Contains(p, "..")) {
			t.Fatalf("parseCgroupV2Path(%q) = %q", s, p)
		}
	})
}
