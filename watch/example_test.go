package watch_test

import (
	"fmt"

	"github.com/tfdoctor/doctor/watch"
)

// Analyze judges recorded samples without touching the machine: here ten
// seconds of a GPU at 10% while the job's one busy thread is pegged.
func ExampleAnalyze() {
	s := &watch.Series{PID: 4242, Interval: 1, CPUs: 16, HostCPUs: 16,
		Inventory: watch.Inventory{GPUs: []watch.GPUInfo{{Index: 0, Name: "NVIDIA H200", ComputeCapability: "9.0", MemoryTotalMiB: 143771}}}}
	for i := 1; i <= 10; i++ {
		util := 10
		s.Samples = append(s.Samples, watch.Sample{
			Elapsed: float64(i),
			GPUs:    []watch.GPUSample{{Index: 0, Util: &util, ProcsKnown: true, Procs: []watch.GPUProc{{PID: 4242}}}},
			Job:     watch.JobSample{Alive: true, PIDs: []int{4242}, Threads: 12, CPUPercent: 101, BusiestThreadPercent: 99},
		})
	}
	for _, f := range watch.Analyze(s) {
		fmt.Printf("%s %s %s\n", f.Severity, f.Cause, f.ID)
		for _, fx := range f.Fixes {
			fmt.Println("  advice:", fx.ID)
		}
	}
	// Output:
	// warning data_pipeline_bottleneck watch.input_pipeline
	//   advice: tf-data-parallel-map
	//   advice: tf-data-prefetch
	//   advice: tf-data-cache
	// info healthy watch.summary
}
