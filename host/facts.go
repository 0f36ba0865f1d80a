package host

import (
	"fmt"
	"sort"
	"sync"
)

// Unknown is not absent. Every fact a check may rest on is in one of three
// states: observed (doctor looked and saw it, or saw how it fails), absent
// (doctor looked and it is not there: evidence of absence), or unknown (the
// collector was skipped, failed, or ran out of time: no evidence either
// way). Only observed and absent facts may support a verdict; a check that
// requires an unknown fact reports "not checked".
const (
	FactObserved = "observed"
	FactAbsent   = "absent"
	FactUnknown  = "unknown"
)

// FactState is the state of one fact and how it is known (or why not).
type FactState struct {
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
}

// Known reports whether the fact is observed or observed absent.
func (f FactState) Known() bool { return f.State == FactObserved || f.State == FactAbsent }

// Facts finer than one collector. Each collector's name is a fact too (the
// collector's whole part of the snapshot).
const (
	// FactLibraries is the resolution of the CUDA libraries (filled by the
	// python collector).
	FactLibraries = "libraries"
	// FactTensorFlow is whether the examined environment has TensorFlow.
	FactTensorFlow = "tensorflow"
	// FactNvidiaModule is whether the nvidia kernel module is loaded.
	FactNvidiaModule = "nvidia-module"
	// FactLadder is the verification ladder as a whole; FactRung* one rung.
	FactLadder        = "ladder"
	FactRungDriver    = "rung-driver"
	FactRungLibraries = "rung-libraries"
	FactRungFramework = "rung-framework"
)

// judgedCollectors are collectors whose failure is itself evidence about the
// driver, judged by the driver checks: NVML or nvidia-smi that hangs on its
// own deadline means a stuck driver. Cut short by the run's --timeout, it
// proves nothing.
var judgedCollectors = map[string]bool{"nvml": true, "nvidia-smi": true}

// FactNames lists every fact a check may require, sorted.
func FactNames() []string {
	out := append(CollectorNames(), FactLibraries, FactTensorFlow, FactNvidiaModule, FactLadder, FactRungDriver, FactRungLibraries, FactRungFramework)
	sort.Strings(out)
	return out
}

// IsFact reports whether name is a fact a check may require.
func IsFact(name string) bool {
	factSetOnce.Do(func() {
		factSet = map[string]bool{}
		for _, f := range FactNames() {
			factSet[f] = true
		}
	})
	return factSet[name]
}

var (
	factSetOnce sync.Once
	factSet     map[string]bool
)

// collectorState is the state of a collector's facts as the gather records
// it in CollectorStatus.State.
func collectorState(name string, st CollectorStatus) FactState {
	switch {
	case st.Skipped != "":
		return FactState{FactUnknown, "skipped: " + st.Skipped}
	case st.Cut && (st.TimedOut || st.Error != ""):
		return FactState{FactUnknown, fmt.Sprintf("cut short by the run's --timeout after %.0f ms", st.DurationMS)}
	case judgedCollectors[name]:
		return FactState{FactObserved, ""}
	case st.TimedOut:
		return FactState{FactUnknown, fmt.Sprintf("timed out after %.0f ms", st.DurationMS)}
	case st.Error != "":
		return FactState{FactUnknown, "failed: " + st.Error}
	}
	return FactState{FactObserved, ""}
}

// Fact returns the state of a fact. Collectors' states are read from what
// the gather recorded (CollectorStatus.State), or derived from how the
// collector ended in snapshots written before that field existed; finer
// facts are derived from the snapshot's data. A name that is not a fact is
// unknown.
func (s *Snapshot) Fact(name string) FactState {
	if idx := collectorIndex(name); idx < len(collectors) {
		st, ok := s.Collectors[name]
		if !ok {
			return FactState{FactUnknown, "its collector did not run"}
		}
		if st.State != "" {
			return FactState{st.State, st.StateWhy}
		}
		return collectorState(name, st)
	}
	switch name {
	case FactLibraries:
		if f := s.Fact("python"); !f.Known() {
			return f
		}
		if s.Libraries == nil {
			return FactState{FactUnknown, "the CUDA libraries were not resolved"}
		}
		return FactState{FactObserved, ""}
	case FactTensorFlow:
		if f := s.Fact("python"); !f.Known() {
			return f
		}
		if s.Python == nil || !s.Python.Found {
			return FactState{FactUnknown, "no Python interpreter was examined"}
		}
		if tf := s.Python.TensorFlow; tf != nil && tf.Dist != "" {
			return FactState{FactObserved, ""}
		}
		if len(s.Python.SitePaths) == 0 && s.Python.Version == "" {
			// Nothing was looked at: the interpreter's version (and so its
			// site-packages) is not known.
			return FactState{FactUnknown, "the environment's site-packages folders are not known (the interpreter's version could not be read)"}
		}
		return FactState{FactAbsent, "no TensorFlow distribution in the examined environment"}
	case FactNvidiaModule:
		if f := s.Fact("modules"); !f.Known() {
			return f
		}
		if s.Modules.Loaded["nvidia"] {
			return FactState{FactObserved, ""}
		}
		return FactState{FactAbsent, "the nvidia module is not in the list of loaded modules"}
	case FactLadder:
		if s.Verification == nil {
			return FactState{FactUnknown, "the ladder did not run: --quick, --root, or a snapshot saved without it"}
		}
		return FactState{FactObserved, ""}
	case FactRungDriver, FactRungLibraries, FactRungFramework:
		if f := s.Fact(FactLadder); !f.Known() {
			return f
		}
		r := s.Verification.Rung(name[len("rung-"):])
		switch {
		case r == nil:
			return FactState{FactUnknown, "this rung was not run"}
		case r.Status == RungSkip:
			return FactState{FactUnknown, "the rung could not run: " + r.Summary}
		}
		return FactState{FactObserved, ""}
	}
	return FactState{FactUnknown, "no such fact: " + name}
}

// RecordFacts writes the state of every fact into Facts, so that a saved
// snapshot says what was observed, observed absent, or unknown. Checks
// read states through Fact, which derives them the same way for snapshots
// written before Facts existed.
func (s *Snapshot) RecordFacts() {
	s.Facts = map[string]FactState{}
	for _, n := range FactNames() {
		s.Facts[n] = s.Fact(n)
	}
}
