// Package verify runs doctor's verification ladder: real GPU work, one rung
// per layer of the stack, so that a failure says which layer broke and a pass
// proves the stack with honest speed figures.
//
//  1. driver: libcuda.so.1 loaded at run time (no CUDA toolkit, no Python),
//     cuInit, device 0's primary context, a kernel written in PTX that the
//     driver compiles (kernels.ptx), run on 2^20 elements and checked element
//     by element. Every CUresult maps to a cause label (causes.go).
//  2. libraries: GEMMs through the libcublas TensorFlow would load, on data
//     generated on the GPU, in float32 and, from compute capability 8.0, TF32
//     and bfloat16; timed with CUDA events after warm-up (median of the
//     runs), checked against a float64 CPU reference on sampled entries, and
//     set next to the GPU model's datasheet peak (expected.go).
//  3. framework: the examined Python runs probe.py: TensorFlow first (import,
//     build info, list_physical_devices, a matmul placed on /GPU:0, checked,
//     timed with forced completion); without TensorFlow the same through
//     PyTorch, JAX or CuPy. The child's stderr is kept for doctor explain.
//
// Each rung runs in a child process (doctor's hidden __rung command, or the
// Python interpreter) under its own deadline and is killed with its process
// group when it overruns, so a hung driver costs a deadline, never a hang.
// The children start together, so library loading and the framework import
// overlap, but each waits at a gate until the rung below has finished: timed
// GPU work never overlaps.
//
// The TensorFlow branch of probe.py cannot run on doctor's own machines (no
// TensorFlow there): its output parsing is tested with recorded results, and
// the script is compiled by the tests (python3 -m py_compile).
package verify
