package checks

import (
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// TestRegistryValid fails the build, not a user, on a bad check: unique IDs,
// docs, links, and cause labels from the contract.
func TestRegistryValid(t *testing.T) {
	if err := Validate(All); err != nil {
		t.Fatal(err)
	}
}

func TestValidateCatchesMistakes(t *testing.T) {
	bad := []*Check{
		{ID: "a", Link: LinkDriver, Title: "A", Doc: "d", Causes: []string{"driver_missing"}, Run: func(*Pass) {}},
		{ID: "a", Link: LinkDriver, Title: "dup", Doc: "d", Causes: []string{"driver_missing"}, Run: func(*Pass) {}},
		{ID: "b c", Link: "nowhere", Title: "", Doc: "", Causes: []string{"not_a_label"}},
		nil,
	}
	err := Validate(bad)
	if err == nil {
		t.Fatal("Validate accepted a bad registry")
	}
	for _, want := range []string{"duplicate ID", "bad ID", "unknown link", "unknown cause label", "needs Title, Doc and Run", "is nil"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

// TestChecksOnEmptySnapshot runs every check on an empty snapshot (what a
// truncated or foreign snapshot looks like): no panic, and every finding
// carries a known cause and a link of the chain.
func TestChecksOnEmptySnapshot(t *testing.T) {
	for _, c := range All {
		for _, f := range Run(c, &host.Snapshot{}) {
			if !knowledge.IsCause(f.Cause) {
				t.Errorf("%s: finding %s has unknown cause %q", c.ID, f.ID, f.Cause)
			}
			if f.Link.Order() == len(Links) {
				t.Errorf("%s: finding %s has unknown link %q", c.ID, f.ID, f.Link)
			}
			if f.Failing() && !contains(c.Causes, f.Cause) {
				t.Errorf("%s: reports cause %q it does not declare", c.ID, f.Cause)
			}
		}
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

func TestParseVisibleDevices(t *testing.T) {
	gpus := []host.GPU{{Index: 0, UUID: "GPU-aaaa1111-0000-0000-0000-000000000000"}, {Index: 1, UUID: "GPU-bbbb2222-0000-0000-0000-000000000000"}}
	cases := []struct {
		val     string
		set     bool
		visible int
		invalid string
	}{
		{"", false, 2, ""},
		{"", true, 0, `""`},
		{"-1", true, 0, "-1"},
		{"0", true, 1, ""},
		{"1,0", true, 2, ""},
		{"0,5,1", true, 1, "5"},
		{"2", true, 0, "2"},
		{"GPU-bbbb", true, 1, ""},
		{"GPU-", true, 0, "GPU-"}, // ambiguous prefix
		{"0,0", true, 1, "0"},
		{"none", true, 0, "none"},
		{" 1 ", true, 1, ""},
	}
	for _, c := range cases {
		v := ParseVisibleDevices(c.val, c.set, gpus)
		if len(v.Visible) != c.visible || v.Invalid != c.invalid {
			t.Errorf("%q (set=%v): visible %v invalid %q, want %d visible, invalid %q", c.val, c.set, v.Visible, v.Invalid, c.visible, c.invalid)
		}
	}
	// Unknown GPUs (no NVML): only what can never match is judged.
	if v := ParseVisibleDevices("3", true, nil); len(v.Visible) != 1 {
		t.Errorf("index 3 with unknown GPUs: %+v", v)
	}
	if v := ParseVisibleDevices("-1", true, nil); len(v.Visible) != 0 {
		t.Errorf("-1 with unknown GPUs: %+v", v)
	}
}

func FuzzParseVisibleDevices(f *testing.F) {
	f.Add("0,1,GPU-abc", true)
	f.Add("-1", true)
	gpus := []host.GPU{{Index: 0, UUID: "GPU-aaaa"}}
	f.Fuzz(func(t *testing.T, s string, set bool) {
		v := ParseVisibleDevices(s, set, gpus)
		if len(v.Visible) > len(gpus) && set {
			t.Fatalf("%q: %d visible of %d GPUs", s, len(v.Visible), len(gpus))
		}
	})
}

func TestParseCC(t *testing.T) {
	for in, want := range map[string]string{"sm_86": "8.6", "compute_90": "9.0", "sm_100": "10.0", "sm_120": "12.0", "compute_120": "12.0", "sm_90a": "9.0", "sm_100a": "10.0", "8.6": "8.6", "86": "8.6", "12.0": "12.0", "sm_": "", "x": ""} {
		if got := parseCC(in).String(); got != want {
			t.Errorf("parseCC(%q) = %q, want %q", in, got, want)
		}
	}
}
