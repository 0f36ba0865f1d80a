package knowledge

import (
	"strings"
	"testing"
)

// Issue 12, item 13: every Xid of NVIDIA's catalog (codes 1 to 172 of the
// revision xid.json pins) has a name, a severity and an operator action,
// source-marked.
func TestXidCatalogComplete(t *testing.T) {
	codes, src, rev := XidCatalog()
	if !strings.Contains(src, "docs.nvidia.com/deploy/xid-errors") || rev == "" {
		t.Errorf("source %q revision %q", src, rev)
	}
	sev := map[string]bool{"error": true, "warning": true, "info": true}
	act := map[string]bool{"none": true, "restart_app": true, "restart_vm": true, "reset_gpu": true, "reboot": true, "drain_rma": true,
		"contact_support": true, "follow_other": true, "as_reported": true, "update_driver": true, "unspecified": true}
	seen := map[int]bool{}
	for _, x := range codes {
		if seen[x.Code] {
			t.Errorf("Xid %d twice", x.Code)
		}
		seen[x.Code] = true
		if x.Name == "" || x.Mnemonic == "" || x.Text == "" || !sev[x.Severity] || !act[x.Action] || x.Mark != MarkV || x.Kind == "" {
			t.Errorf("Xid %d incomplete: %+v", x.Code, x)
		}
	}
	for c := 1; c <= 172; c++ {
		if !seen[c] {
			t.Errorf("Xid %d missing", c)
		}
	}
	// The codes doctor explain called "unknown Xid", and a few anchors.
	for _, c := range []struct {
		code          int
		severity, act string
	}{
		{68, "warning", "restart_app"}, {69, "warning", "restart_app"}, {109, "error", "reset_gpu"}, {121, "info", "none"},
		{140, "error", "reset_gpu"}, {143, "error", "reset_gpu"}, {154, "warning", "as_reported"},
		{79, "error", "reboot"}, {48, "error", "reset_gpu"}, {13, "warning", "restart_app"}, {63, "info", "none"},
		{54, "error", "drain_rma"}, {95, "error", "reset_gpu"}, {94, "warning", "restart_app"}, {151, "error", "restart_vm"},
	} {
		x := LookupXid(c.code)
		if x.Kind == "unknown" || x.Severity != c.severity || x.Action != c.act {
			t.Errorf("Xid %d: %s %s (%s), want %s %s", c.code, x.Severity, x.Action, x.Kind, c.severity, c.act)
		}
	}
	if x := LookupXid(9999); x.Kind != "unknown" || x.Mark != MarkU || x.Text == "" {
		t.Errorf("unknown code: %+v", x)
	}
}

// Xid 154 carries the driver's own recovery action.
func TestXid154Action(t *testing.T) {
	for msg, want := range map[string][2]string{
		"GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)": {"Node Reboot Required", "reboot"},
		"GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)":   {"GPU Reset Required", "reset_gpu"},
		"recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)":       {"None", "none"},
		"GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)":            {"Drain P2P", "drain_p2p"},
		"GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)":      {"Drain and Reset", "reset_gpu"},
	} {
		act, op, _, ok := Xid154Action(msg)
		if !ok || act != want[0] || op != want[1] {
			t.Errorf("%q: %q %q %v", msg, act, op, ok)
		}
	}
	if _, _, _, ok := Xid154Action("GPU recovery action changed from 0x0 (None) to 0x9 (Make Coffee)"); ok {
		t.Errorf("a value outside the catalog was accepted")
	}
}
