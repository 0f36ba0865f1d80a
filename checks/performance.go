package checks

import (
	"fmt"
	"strings"
)

// serious throttle reasons: the clocks are held down by heat, power delivery
// or a hardware signal, not by the GPU being idle or by a configured cap.
var seriousThrottle = map[string]string{
	"hw_slowdown":             "hardware slowdown (temperature or power brake signal)",
	"hw_thermal_slowdown":     "the GPU is too hot",
	"hw_power_brake_slowdown": "the power supply asserted the power brake",
	"sw_thermal_slowdown":     "the driver lowers clocks to cool the GPU",
}

// Throttle reports clocks held down by thermal or power problems.
var Throttle = &Check{
	ID:       "perf.throttle",
	Link:     LinkPerformance,
	Title:    "Clock throttling",
	Causes:   []string{"gpu_throttled"},
	Requires: []string{"nvml", "driver.nvml"},
	Doc: `NVML's clock event reasons say why the GPU runs below its top clock.
"GPU idle" and the software power cap are normal; hardware slowdown,
thermal slowdown and power brake mean cooling or power delivery problems
that make training several times slower.`,
	Run: func(p *Pass) {
		s := p.Snap
		if !s.NVML.Available {
			p.Skip("NVML not available")
			return
		}
		seen := false
		for _, g := range s.NVML.GPUs {
			if g.ThrottleMask == nil {
				continue
			}
			seen = true
			var why []string
			for _, r := range g.ThrottleReasons {
				if d, ok := seriousThrottle[r]; ok {
					why = append(why, d)
				}
			}
			if len(why) == 0 {
				continue
			}
			ev := Ev{"gpu": g.Index, "reasons": g.ThrottleReasons, "temperature_c": g.TemperatureC}
			p.Warn("gpu_throttled", fmt.Sprintf("GPU %d is throttled: %s", g.Index, strings.Join(why, "; ")),
				"The GPU runs below its rated clocks; work takes longer.", ev,
				Fix{ID: FixCheckCooling, Title: "Check cooling and power", Risk: RiskSafe, Manual: true,
					Steps: []string{"nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER", "Check fans, airflow and the power cables; clean dust filters"}}).ID = fmt.Sprintf("%s/gpu%d", p.check.ID, g.Index)
		}
		if !seen {
			p.Skip("the driver does not report clock event reasons")
			return
		}
		if len(p.findings) == 0 {
			p.OK("no thermal or power throttling")
		}
	},
}
