package knowledge

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Xid describes one NVIDIA Xid code from NVIDIA's Xid catalog.
type Xid struct {
	Code     int      `json:"code"`
	Mnemonic string   `json:"mnemonic"`
	Name     string   `json:"name"` // the catalog's Description
	Applies  []string `json:"applies"`
	// Immediate and Investigatory are the catalog's resolution buckets.
	Immediate     string `json:"immediate"`
	Investigatory string `json:"investigatory"`
	Since         string `json:"since,omitempty"`
	// Severity is error, warning or info; Action what an operator does:
	// none, restart_app, restart_vm, reset_gpu, reboot, drain_rma,
	// contact_support, follow_other, as_reported (Xid 154), update_driver,
	// unspecified.
	Severity string `json:"severity"`
	Action   string `json:"action"`
	// Kind: application, hardware, monitor, unused, unknown.
	Kind string `json:"kind"`
	// Text says what to do, in a sentence.
	Text string `json:"text"`
	Mark Mark   `json:"v"`
}

// Serious reports whether the Xid needs more than the application's
// restart: a GPU reset, a reboot, the hardware.
func (x Xid) Serious() bool { return x.Severity == "error" }

//go:embed data/xid.json
var xidJSON []byte

type xidFile struct {
	Source   string `json:"source"`
	Revision string `json:"revision"`
	X154     struct {
		Values []string `json:"values"`
	} `json:"xid154"`
	Codes []Xid `json:"codes"`
}

var xidData = mustLoadXids(xidJSON)

func mustLoadXids(b []byte) *xidFile {
	var f xidFile
	if err := json.Unmarshal(b, &f); err != nil {
		panic(fmt.Sprintf("knowledge: data/xid.json: %v", err))
	}
	return &f
}

var xids = func() map[int]Xid {
	m := make(map[int]Xid, len(xidData.Codes))
	for _, x := range xidData.Codes {
		m[x.Code] = x
	}
	return m
}()

// XidCatalog returns every code of the catalog, in code order, and where
// it comes from.
func XidCatalog() (codes []Xid, source, revision string) {
	return append([]Xid(nil), xidData.Codes...), xidData.Source, xidData.Revision
}

// LookupXid returns what is known of an Xid code. Codes outside NVIDIA's
// catalog come back with Kind "unknown".
func LookupXid(code int) Xid {
	if x, ok := xids[code]; ok {
		return x
	}
	return Xid{Code: code, Name: "an Xid outside NVIDIA's catalog", Kind: "unknown", Severity: "warning", Action: "contact_support", Mark: MarkU,
		Text: "Not in NVIDIA's Xid catalog (" + xidData.Source + "): a newer driver's code; look it up in the current catalog."}
}

var recoveryRE = regexp.MustCompile(`(?i)recovery action changed from\s+0x[0-9a-f]+\s*\(([^)]*)\)\s*to\s+0x[0-9a-f]+\s*\(([^)]*)\)`)

// Xid154Action reads the recovery action an Xid 154 message names ("GPU
// recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"):
// the driver's own recommendation for the Xids logged with it. ok is false
// when the text holds none of the catalog's values.
func Xid154Action(message string) (action, operator string, severity string, ok bool) {
	m := recoveryRE.FindStringSubmatch(message)
	if m == nil {
		return "", "", "", false
	}
	to := strings.TrimSpace(m[2])
	for _, v := range xidData.X154.Values {
		if strings.EqualFold(v, to) {
			switch strings.ToLower(v) {
			case "none":
				return v, "none", "info", true
			case "drain p2p":
				return v, "drain_p2p", "warning", true
			case "drain and reset":
				return v, "reset_gpu", "error", true
			case "gpu reset required":
				return v, "reset_gpu", "error", true
			case "node reboot required":
				return v, "reboot", "error", true
			}
		}
	}
	return "", "", "", false
}
