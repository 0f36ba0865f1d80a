package knowledge

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// Xid describes one NVIDIA Xid code.
type Xid struct {
	Code   int    `json:"code"`
	Name   string `json:"name"`
	Kind   string `json:"kind"` // application, hardware, firmware, monitor
	Action string `json:"action"`
}

// Serious reports whether the Xid points at the GPU, its firmware or the bus
// rather than at one application.
func (x Xid) Serious() bool { return x.Kind == "hardware" || x.Kind == "firmware" }

//go:embed data/xid.json
var xidJSON []byte

type xidFile struct {
	Source       string `json:"source"`
	Verification string `json:"verification"`
	Codes        []Xid  `json:"codes"`
}

var xids = mustLoadXids(xidJSON)

func mustLoadXids(b []byte) map[int]Xid {
	var f xidFile
	if err := json.Unmarshal(b, &f); err != nil {
		panic(fmt.Sprintf("knowledge: data/xid.json: %v", err))
	}
	m := make(map[int]Xid, len(f.Codes))
	for _, x := range f.Codes {
		m[x.Code] = x
	}
	return m
}

// LookupXid returns what is known of an Xid code. Unknown codes come back
// with Kind "unknown".
func LookupXid(code int) Xid {
	if x, ok := xids[code]; ok {
		return x
	}
	return Xid{Code: code, Name: "unknown Xid", Kind: "unknown", Action: "Look the code up in NVIDIA's Xid catalog: https://docs.nvidia.com/deploy/xid-errors/"}
}
