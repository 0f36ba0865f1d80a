package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// megabyteLog builds a realistic 1 MiB log: a long training run's output
// (progress lines, TensorFlow INFO lines, harmless notices) with the test
// logs' failure lines mixed in, so the keyword filter passes many lines to
// the regular expressions.
func megabyteLog(tb testing.TB) string {
	tb.Helper()
	var parts []string
	paths, _ := filepath.Glob("testdata/explain/logs/*/*.log")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		parts = append(parts, string(b))
	}
	filler := []string{
		"Epoch 3/50\n",
		"1563/1563 [==============================] - 12s 8ms/step - loss: 0.6931 - accuracy: 0.7512 - val_loss: 0.7013 - val_accuracy: 0.7420\n",
		"2024-04-04 12:00:00.000000: I tensorflow/core/common_runtime/executor.cc:1197] [/device:CPU:0] (DEBUG INFO) Executor start aborting (this does not indicate an error and you can ignore this message): INVALID_ARGUMENT: You must feed a value for placeholder tensor 'Placeholder/_0' with dtype int32\n",
		"I0000 00:00:1712000000.000000  4242 service.cc:145] XLA service 0x55d5c0c0 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:\n",
		"W0000 00:00:1712000000.100000  4242 gpu_timer.cc:114] Skipping the delay kernel, measurement accuracy will be reduced\n",
		"  File \"/home/u/.venv/lib/python3.11/site-packages/keras/src/utils/traceback_utils.py\", line 122, in error_handler\n",
		"|   0  NVIDIA GeForce RTX 3090        Off |   00000000:01:00.0  On |                  N/A |\n",
	}
	var b strings.Builder
	i := 0
	for b.Len() < 1<<20 {
		b.WriteString(filler[i%len(filler)])
		if i%200 == 0 {
			b.WriteString(parts[(i/200)%len(parts)])
		}
		i++
	}
	return b.String()
}

// BenchmarkExplain1MB measures explaining a 1 MiB log (target: at most
// 100 ms).
func BenchmarkExplain1MB(b *testing.B) {
	text := megabyteLog(b)
	mustLibrary()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		explainText(text, "bench")
	}
}

// BenchmarkExplain1MBFailureLines is the worst case for the keyword
// filter: every line is a failure message.
func BenchmarkExplain1MBFailureLines(b *testing.B) {
	var sb strings.Builder
	paths, _ := filepath.Glob("testdata/explain/logs/*/*.log")
	for sb.Len() < 1<<20 {
		for _, p := range paths {
			data, _ := os.ReadFile(p)
			sb.Write(data)
		}
	}
	text := sb.String()
	mustLibrary()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		explainText(text, "bench")
	}
}

// BenchmarkLoadLibrary measures what every `doctor explain` pays before
// reading a line: parsing, compiling and checking the signature library
// (the prefilters' analysis and the examples' check among it).
func BenchmarkLoadLibrary(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := parseLibrary(signatureFS); err != nil {
			b.Fatal(err)
		}
	}
}
