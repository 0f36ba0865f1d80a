package verify

import (
	"regexp"
	"strings"
)

// peak is a GPU model's datasheet dense peak in TFLOP/s for the products the
// ladder times (bf16 and TF32 on tensor cores with float32 accumulation;
// fp32 on the CUDA cores). 0 means the model has no such path.
type peak struct {
	pattern *regexp.Regexp
	model   string
	bf16    float64
	tf32    float64
	fp32    float64
}

// peaks is matched against the device name in order: more specific names
// first (GH200 before H200, H100 PCIe before H100, L40S before L40 before
// L4). Figures are NVIDIA's datasheets; datasheets quote tensor throughput
// "with sparsity", which is twice the dense figure given here. A measured
// GEMM reaches 60-85% of these; the performance check only flags results
// under half.
var peaks = []peak{
	{re(`GH200`), "GH200", 989, 494, 67},
	{re(`H200 NVL`), "H200 NVL", 835, 418, 60},
	{re(`H200`), "H200 SXM", 989, 494, 67},
	{re(`H100 NVL`), "H100 NVL", 835, 418, 60},
	{re(`H100 PCIe`), "H100 PCIe", 756, 378, 51},
	{re(`H100`), "H100 SXM", 989, 494, 67},
	{re(`A100`), "A100", 312, 156, 19.5},
	{re(`A30\b`), "A30", 165, 82, 10.3},
	{re(`A10\b`), "A10", 125, 62.5, 31.2},
	{re(`L40S`), "L40S", 362, 183, 91.6},
	{re(`L40\b`), "L40", 181, 90.5, 90.5},
	{re(`L4\b`), "L4", 121, 60, 30.3},
	{re(`RTX A6000`), "RTX A6000", 154.8, 77.4, 38.7},
	{re(`RTX 4090`), "GeForce RTX 4090", 165.2, 82.6, 82.6},
	{re(`RTX 3090 Ti`), "GeForce RTX 3090 Ti", 80, 40, 40},
	{re(`RTX 3090`), "GeForce RTX 3090", 71, 35.6, 35.6},
	{re(`V100.*SXM`), "V100 SXM2", 0, 0, 15.7},
	{re(`V100`), "V100 PCIe", 0, 0, 14},
	{re(`\bT4\b`), "T4", 0, 0, 8.1},
}

func re(s string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + s) }

// expectedTFLOPS returns the datasheet dense peak of the named GPU for a
// product type, and the model it matched; 0 and "" when unknown.
func expectedTFLOPS(deviceName, dtype string) (float64, string) {
	name := strings.TrimSpace(deviceName)
	for _, p := range peaks {
		if !p.pattern.MatchString(name) {
			continue
		}
		switch dtype {
		case "bf16":
			return p.bf16, p.model
		case "tf32":
			return p.tf32, p.model
		case "fp32":
			return p.fp32, p.model
		}
		return 0, p.model
	}
	return 0, ""
}
