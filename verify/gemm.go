package verify

import (
	"fmt"
	"math"
	"sort"

	"github.com/tfdoctor/doctor/host"
)

// Seeds of the GEMM inputs A and B (and the driver rung's vector x).
const (
	seedA uint32 = 0x0d0c7012
	seedB uint32 = 0x5eed0b0b
)

// hashValue is the value the doctor_fill_* kernels (kernels.ptx) store at
// index idx: murmur3's 32-bit finaliser of idx*0x9E3779B1+seed, whose top 8
// bits minus 128, over 128, lie in [-1, 1). The finaliser's last
// x ^= x>>16 cannot change the top 8 bits, so kernels.ptx and this function
// both leave it out. Values have at most 8 significant bits: float32, TF32
// and bfloat16 hold them exactly, so the CPU reference uses the very inputs
// the GPU multiplied.
func hashValue(seed, idx uint32) float64 {
	x := idx*0x9E3779B1 + seed
	x ^= x >> 16
	x *= 0x85EBCA6B
	x ^= x >> 13
	x *= 0xC2B2AE35
	return float64(int32(x>>24)-128) / 128
}

// entry is one sampled element (i, j) of C.
type entry struct{ i, j int }

// sampleEntries picks up to n distinct entries of an m×n matrix: the four
// corners, then a deterministic spread over the rest.
func sampleEntries(m, cols, n int) []entry {
	seen := map[entry]bool{}
	var out []entry
	add := func(e entry) {
		if e.i >= 0 && e.j >= 0 && e.i < m && e.j < cols && !seen[e] && len(out) < n {
			seen[e] = true
			out = append(out, e)
		}
	}
	add(entry{0, 0})
	add(entry{m - 1, cols - 1})
	add(entry{0, cols - 1})
	add(entry{m - 1, 0})
	x := uint32(12345)
	for tries := 0; len(out) < n && tries < 16*n; tries++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		i := int(x % uint32(m))
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		add(entry{i, int(x % uint32(cols))})
	}
	return out
}

// reference computes C[i,j] of A·B in float64, with A m×k and B k×n in
// column-major order filled by hashValue, and the sum of |a·b| over the
// dot product, the scale that rounding errors are measured against.
func reference(m, k int, e entry) (c, scale float64) {
	for l := 0; l < k; l++ {
		a := hashValue(seedA, uint32(e.i+l*m))
		b := hashValue(seedB, uint32(l+e.j*k))
		c += a * b
		scale += math.Abs(a * b)
	}
	return c, scale
}

// relError is |got-want| relative to scale (Σ|a·b|); a NaN or infinite
// result is an infinite error.
func relError(got, want, scale float64) float64 {
	if math.IsNaN(got) || math.IsInf(got, 0) {
		return math.Inf(1)
	}
	if scale == 0 {
		scale = 1
	}
	return math.Abs(got-want) / scale
}

// tolerances bound the error of one result entry relative to Σ|a·b|. The
// inputs are exact in every type, so the error is the float32 accumulation
// (about sqrt(k)·2^-24, far below 1e-4 for k up to 32768) plus, for bf16,
// the rounding of the result to bfloat16 (2^-9 relative). A broken GPU,
// library or driver gives errors of order 1.
var tolerances = map[string]float64{
	"fp32": 1e-4,
	"tf32": 1e-3,
	"bf16": 1e-2,
}

// bf16ToFloat widens a bfloat16 bit pattern.
func bf16ToFloat(b uint16) float64 {
	return float64(math.Float32frombits(uint32(b) << 16))
}

// stats returns the median, minimum and maximum of xs.
func stats(xs []float64) (median, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
}

// tflops is 2·m·n·k floating-point operations in ms milliseconds, in
// TFLOP/s.
func tflops(m, n, k int, ms float64) float64 {
	if ms <= 0 {
		return 0
	}
	return 2 * float64(m) * float64(n) * float64(k) / (ms / 1000) / 1e12
}

// figureText is "bf16 771 TFLOP/s (of 989)".
func figureText(f host.Figure) string {
	s := fmt.Sprintf("%s %s TFLOP/s", f.DType, host.FormatTFLOPS(f.TFLOPS))
	if f.ExpectedTFLOPS > 0 {
		s += " (of " + host.FormatTFLOPS(f.ExpectedTFLOPS) + ")"
	}
	return s
}
