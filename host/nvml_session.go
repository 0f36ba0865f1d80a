package host

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// The one NVML boundary of doctor: every part that talks to the driver
// (the diagnosis through NVMLSource, doctor watch through its sampler)
// opens an NVMLSession here. Sessions on one library share its
// initialisation: the first Open calls nvmlInit, the last Close calls
// nvmlShutdown, both under nvmlMu, so a watch sampling for minutes never
// has NVML shut down under it by a diagnosis that reads the GPUs meanwhile,
// and no Init runs while another Shutdown is half done.

var (
	nvmlMu   sync.Mutex // the session lock
	nvmlRefs = map[nvml.Interface]int{}
	// systemNVML is the process's one handle on libnvidia-ml.so.1.
	systemNVML = sync.OnceValue(func() nvml.Interface { return nvml.New() })
)

// SystemNVML is libnvidia-ml.so.1, loaded at run time (one handle for the
// whole process): on a machine without the driver, opening a session on
// it reports ERROR_LIBRARY_NOT_FOUND.
func SystemNVML() nvml.Interface { return systemNVML() }

// NVMLSession is one use of NVML between open and Close.
type NVMLSession struct {
	lib    nvml.Interface
	closed bool
	alone  bool // not shared (a library value that is not comparable)
}

// OpenNVML starts a session on lib (SystemNVML, or one of go-nvml's mocks
// in tests). A failed nvmlInit is an *NVMLError with Op "nvmlInit"; a
// library that panics inside go-nvml (missing symbols on very old
// drivers) is an error too, never a crash.
func OpenNVML(lib nvml.Interface) (*NVMLSession, error) {
	nvmlMu.Lock()
	defer nvmlMu.Unlock()
	if lib == nil {
		return nil, &NVMLError{Op: "nvmlInit", Code: nvml.ERROR_LIBRARY_NOT_FOUND}
	}
	if !reflect.TypeOf(lib).Comparable() {
		// Cannot be told apart from another library: a session of its own.
		if r, err := guardInit(lib); err != nil || r != nvml.SUCCESS {
			if err == nil {
				err = &NVMLError{Op: "nvmlInit", Code: r}
			}
			return nil, err
		}
		return &NVMLSession{lib: lib, alone: true}, nil
	}
	if nvmlRefs[lib] == 0 {
		r, err := guardInit(lib)
		if err != nil {
			return nil, err
		}
		if r != nvml.SUCCESS {
			return nil, &NVMLError{Op: "nvmlInit", Code: r}
		}
	}
	nvmlRefs[lib]++
	return &NVMLSession{lib: lib}, nil
}

func guardInit(lib nvml.Interface) (r nvml.Return, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("NVML call failed: %v", p)
		}
	}()
	return lib.Init(), nil
}

// Lib is the library to query during the session.
func (s *NVMLSession) Lib() nvml.Interface { return s.lib }

// Close ends the session; the last one open shuts NVML down. A second
// Close does nothing.
func (s *NVMLSession) Close() {
	nvmlMu.Lock()
	defer nvmlMu.Unlock()
	if s == nil || s.closed {
		return
	}
	s.closed = true
	if !s.alone {
		nvmlRefs[s.lib]--
		if nvmlRefs[s.lib] > 0 {
			return
		}
		delete(nvmlRefs, s.lib)
	}
	func() {
		defer func() { _ = recover() }()
		s.lib.Shutdown()
	}()
}
