package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/verify"
	"github.com/tfdoctor/doctor/watch"
)

// Factory holds every dependency a command needs from the machine doctor
// runs on, as cli/cli's cmdutil.Factory does: the real one is NewFactory;
// tests build one with fakes (a GPU that cannot exist here, a user who is
// not root). No package variable is a test hook.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// GPU is how a live gather and the ladder read NVML.
	GPU func() host.GPUSource
	// WatchGPUs is how doctor watch samples the GPUs.
	WatchGPUs func() watch.GPUs
	// Environ is the environment doctor examines and acts for. After
	// --fix the second examination is given the changed environment
	// explicitly; doctor's own environment is never changed.
	Environ func() []string
	// Now is the clock.
	Now func() time.Time
	// IsRoot reports whether doctor runs as root (fix steps that need
	// root run only then).
	IsRoot func() bool
	// Self is the doctor command printed in lines the user runs (sudo
	// doctor fix ...).
	Self func() string
	// RungChild is the argv that runs one rung of the verification ladder
	// in a child process.
	RungChild func() []string
}

// NewFactory returns the dependencies of a real run on this machine.
func NewFactory(ios *iostreams.IOStreams) *Factory {
	return &Factory{
		IOStreams: ios,
		GPU:       host.NVMLSource,
		WatchGPUs: watch.NVML,
		Environ:   os.Environ,
		Now:       time.Now,
		IsRoot:    func() bool { return os.Geteuid() == 0 },
		Self: func() string {
			// The full path, so the line works under sudo too; but not the
			// throw-away binary of `go run`.
			if p, err := os.Executable(); err == nil && filepath.IsAbs(p) && !strings.Contains(p, "/go-build") {
				return p
			}
			return "doctor"
		},
		RungChild: func() []string {
			exe, err := os.Executable()
			if err != nil {
				exe = os.Args[0]
			}
			return []string{exe, "verify", verify.ChildCommandName}
		},
	}
}
