package checks

import (
	"fmt"
	"sort"
)

// collectorLinks places each collector on the chain, for its incompleteness
// finding. NVML and nvidia-smi are judged by the driver checks, unless the
// run's --timeout cut them short.
var collectorLinks = map[string]Link{
	"platform": LinkPlatform, "pci": LinkHardware, "modules": LinkKernel, "devices": LinkDriver,
	"holders": LinkEnvironment, "env": LinkEnvironment, "nvml": LinkDriver, "nvidia-smi": LinkDriver, "kernel-log": LinkHardware, "disks": LinkEnvironment,
	"python": LinkPython, "libraries": LinkLibraries,
}

// Collectors reports collectors that failed or timed out, so that a gap in
// the evidence is never mistaken for a healthy link.
var Collectors = &Check{
	ID:       "doctor.collectors",
	Link:     LinkPlatform,
	Title:    "Evidence collection",
	Causes:   []string{"check_incomplete"},
	Requires: nil,
	Doc: `Each collector runs under its own deadline. One that failed or ran out of
time leaves its part of the snapshot empty; this check says which, so the
report never passes a link it could not examine.`,
	Run: func(p *Pass) {
		names := make([]string, 0, len(p.Snap.Collectors))
		for n := range p.Snap.Collectors {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			st := p.Snap.Collectors[n]
			if (n == "nvml" || n == "nvidia-smi") && !st.Cut || st.Skipped != "" {
				continue
			}
			if !st.TimedOut && st.Error == "" {
				continue
			}
			what := "failed: " + st.Error
			switch {
			case st.Cut:
				what = fmt.Sprintf("was cut short by --timeout after %.0f ms", st.DurationMS)
			case st.TimedOut:
				what = fmt.Sprintf("timed out after %.0f ms", st.DurationMS)
			}
			f := p.Warn("check_incomplete", fmt.Sprintf("Collector %s %s", n, what), "The checks that read this evidence could not judge their link.", Ev{"collector": n, "status": st})
			f.ID = p.check.ID + "/" + n
			if l, ok := collectorLinks[n]; ok {
				f.Link = l
			}
		}
		if len(p.findings) == 0 {
			p.OK(fmt.Sprintf("%d collectors finished", len(names)))
		}
	},
}
