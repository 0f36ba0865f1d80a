//go:build !cgo

package verify

import "github.com/tfdoctor/doctor/host"

// Without cgo doctor cannot load libcuda or libcublas; the driver and
// library rungs are skipped, never failed.
const noCgo = "doctor was built without cgo (CGO_ENABLED=0): the driver and library rungs need it"

func runDriver(req childRequest, e env) host.Rung {
	return host.Rung{Name: host.RungDriver, Status: host.RungSkip, Summary: noCgo}
}

func runLibraries(req childRequest, e env, gate func()) host.Rung {
	return host.Rung{Name: host.RungLibraries, Status: host.RungSkip, Summary: noCgo}
}
