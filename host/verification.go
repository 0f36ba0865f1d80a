package host

import "fmt"

// Verification is the result of the runtime ladder (package verify): one
// entry per rung, lowest first. Each rung isolates one layer of the stack, so
// the lowest failing rung says which layer broke, and a passing ladder proves
// the GPU computes correctly from the driver up to the framework.
type Verification struct {
	// Rungs are driver, libraries and framework, in that order.
	Rungs []Rung `json:"rungs"`
	// DurationMS is the wall time of the whole ladder.
	DurationMS float64 `json:"duration_ms"`
	// Conditions is the GPU state read right after the ladder when a figure
	// was far under what the GPU should reach (throttling, other processes,
	// the PCIe link): the evidence for the performance finding. Nil
	// otherwise.
	Conditions *NVML `json:"conditions,omitempty"`
}

// Rung names, lowest first.
const (
	RungDriver    = "driver"
	RungLibraries = "libraries"
	RungFramework = "framework"
)

// RungStatus is how one rung ended.
type RungStatus string

const (
	RungPass RungStatus = "pass"
	RungFail RungStatus = "fail"
	// RungSkip means the rung could not run here (no framework installed,
	// doctor built without cgo); it is not a failure.
	RungSkip RungStatus = "skip"
)

// Rung is the result of one rung of the ladder.
type Rung struct {
	Name   string     `json:"name"`
	Status RungStatus `json:"status"`
	// Cause is the cause label of a failure (or of a skip, when one fits:
	// tf_not_installed). Empty on a pass.
	Cause string `json:"cause,omitempty"`
	// Summary says in one line what was proved, or what broke.
	Summary    string  `json:"summary"`
	DurationMS float64 `json:"duration_ms"`
	// TimedOut is true when the rung's child process ran past its deadline
	// and was killed with its process group.
	TimedOut bool `json:"timed_out,omitempty"`
	// Error is the failure as the failing layer reported it: the CUDA or
	// cuBLAS call and its error name and text, or the Python exception.
	Error string `json:"error,omitempty"`
	// API is the call that failed (cuInit, cublasCreate_v2, import
	// tensorflow, ...).
	API string `json:"api,omitempty"`
	// Code is the error's symbolic name (CUDA_ERROR_NO_DEVICE,
	// CUBLAS_STATUS_NOT_INITIALIZED, ImportError, ...).
	Code string `json:"code,omitempty"`
	// Library is the file the rung loaded: libcuda for the driver rung,
	// libcublas for the libraries rung.
	Library string `json:"library,omitempty"`
	// Framework is the Python framework that the framework rung used
	// (tensorflow, torch, jax, cupy), with its version.
	Framework        string `json:"framework,omitempty"`
	FrameworkVersion string `json:"framework_version,omitempty"`
	// Python is the interpreter the framework rung ran.
	Python string `json:"python,omitempty"`
	// Device is the GPU the rung ran on (CUDA device 0, as the process sees
	// it after CUDA_VISIBLE_DEVICES).
	Device *RungDevice `json:"device,omitempty"`
	// Figures are the timed, checked products.
	Figures []Figure `json:"figures,omitempty"`
	// Facts are further plain facts (driver version, TensorFlow build info,
	// import time, ...).
	Facts map[string]string `json:"facts,omitempty"`
	// PID is the rung's child process, so that checks can tell doctor's own
	// GPU use from other processes'.
	PID int `json:"pid,omitempty"`
	// Stderr is what the rung's child wrote to standard error (the tail of
	// it when long): the framework's own log, for doctor explain's log
	// signatures and for -v.
	Stderr string `json:"stderr,omitempty"`
}

// RungDevice is the GPU as CUDA (or the framework) reports it.
type RungDevice struct {
	Name              string `json:"name"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	MemoryMiB         uint64 `json:"memory_mib,omitempty"`
	Multiprocessors   int    `json:"multiprocessors,omitempty"`
	// PCIBusID is "0000:18:00.0" style, to match the GPU with NVML's list.
	PCIBusID string `json:"pci_bus_id,omitempty"`
	// Count is the number of devices CUDA sees.
	Count int `json:"count,omitempty"`
}

// Figure is one timed and checked matrix product C = A·B with A m×k and B
// k×n.
type Figure struct {
	// DType is fp32, tf32 or bf16 (bf16 inputs with float32 accumulation).
	DType string `json:"dtype"`
	M     int    `json:"m"`
	N     int    `json:"n"`
	K     int    `json:"k"`
	// TFLOPS is 2·m·n·k over the median time, in 10^12 floating-point
	// operations per second.
	TFLOPS float64 `json:"tflops"`
	// ExpectedTFLOPS is the datasheet dense peak of this GPU model for
	// this type; 0 when the model is not in doctor's table.
	ExpectedTFLOPS float64 `json:"expected_tflops,omitempty"`
	MedianMS       float64 `json:"median_ms"`
	MinMS          float64 `json:"min_ms"`
	MaxMS          float64 `json:"max_ms"`
	// Runs is the number of timed samples after warm-up; PerSample the
	// products in each sample (the time per product is the sample's time
	// divided by it).
	Runs      int `json:"runs"`
	PerSample int `json:"per_sample,omitempty"`
	// Timing says how the time was measured: cuda_events, or
	// forced_completion (the framework's result fetched to the host).
	Timing string `json:"timing"`
	// Checked is the number of result entries compared with a float64 CPU
	// reference; MaxError the largest error relative to Σ|a·b| of the
	// entry; Correct whether every one was within Tolerance.
	Checked   int     `json:"checked"`
	MaxError  float64 `json:"max_error"`
	Tolerance float64 `json:"tolerance"`
	Correct   bool    `json:"correct"`
}

// Rung returns the rung with this name, or nil.
func (v *Verification) Rung(name string) *Rung {
	if v == nil {
		return nil
	}
	for i := range v.Rungs {
		if v.Rungs[i].Name == name {
			return &v.Rungs[i]
		}
	}
	return nil
}

// FormatTFLOPS prints a TFLOP/s figure to about three significant figures:
// 771, 52.3, 8.12.
func FormatTFLOPS(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}
