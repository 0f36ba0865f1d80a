package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// repeatReader yields line n times without holding them all.
type repeatReader struct {
	line []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p, r.line[r.off:])
	r.off += c
	if r.off == len(r.line) {
		r.off = 0
		r.n--
	}
	return c, nil
}

// TestExplainStreamEqualsText: reading a log as a stream, in pieces of any
// size, gives the report the whole text gives, for every test log and for
// every decoding (UTF-8 BOM, UTF-16 with and without BOM).
func TestExplainStreamEqualsText(t *testing.T) {
	paths, _ := filepath.Glob("testdata/explain/logs/*/*.log")
	if len(paths) < 20 {
		t.Fatalf("only %d test logs", len(paths))
	}
	paths = append(paths, "") // the carriage-return case below
	for _, p := range paths {
		data := []byte("first line\r\nprogress 10%\rprogress 100%\rW gpu_device.cc:1] Cannot dlopen some GPU libraries.\r\n\r\n" +
			"\x1b[33mCould not load dynamic library 'libcudnn.so.8'\x1b[0m")
		if p != "" {
			var err error
			if data, err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		want := report(t, ExplainText(string(data)))
		inputs := map[string]io.Reader{
			"whole":        bytes.NewReader(data),
			"bytewise":     iotest.OneByteReader(bytes.NewReader(data)),
			"utf8 BOM":     io.MultiReader(bytes.NewReader([]byte{0xEF, 0xBB, 0xBF}), iotest.HalfReader(bytes.NewReader(data))),
			"utf16le":      iotest.OneByteReader(bytes.NewReader(utf16LE(string(data), true))),
			"utf16 no BOM": bytes.NewReader(utf16LE(string(data), false)),
		}
		for name, in := range inputs {
			r, err := Explain(in, ExplainOptions{})
			if err != nil {
				t.Fatalf("%s %s: %v", p, name, err)
			}
			if r.Input == nil || r.Input.Lines != strings.Count(string(data), "\n")+btoi(!bytes.HasSuffix(data, []byte("\n"))) {
				t.Errorf("%s %s: input %+v", p, name, r.Input)
			}
			r.Input = nil
			if got := report(t, r); got != want {
				t.Errorf("%s read %s differs from the text:\n%s\nwant\n%s", p, name, got, want)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func report(t *testing.T, r *Report) string {
	t.Helper()
	r.TimingsMS = nil
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExplainReadsPast32MiB: a log far longer than any buffer is read to
// its end; the last line decides, the report says how much was read, and
// the memory held does not grow with the log.
func TestExplainReadsPast32MiB(t *testing.T) {
	line := "1563/1563 [==============================] - 12s 8ms/step - loss: 0.6931 - accuracy: 0.7512\n"
	n := (48 << 20) / len(line)
	in := io.MultiReader(
		&repeatReader{line: []byte(line), n: n},
		// A matched line past the per-signature cap, many times.
		&repeatReader{line: []byte("W gpu_device.cc:1] Cannot dlopen some GPU libraries.\n"), n: 5000},
		strings.NewReader("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"))
	mustLibrary() // built once, before the heap is measured
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := Explain(in, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if r.RootCause == nil || r.RootCause.Cause != "secure_boot_unsigned_module" {
		t.Errorf("root cause %+v", r.RootCause)
	}
	if r.Input == nil || r.Input.Lines != n+5001 || r.Input.Bytes < 48<<20 {
		t.Errorf("input %+v", r.Input)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d MiB reading the log", grew>>20)
	}
	for _, f := range r.Findings {
		if f.ID == "tf.cannot_dlopen_gpu_libraries" && f.Evidence["occurrences"] != 5000 {
			t.Errorf("occurrences past the cap: %v", f.Evidence["occurrences"])
		}
	}
}

// TestExplainStreamInputErrors: empty, blank and binary streams, and a
// read error, are errors; a binary tail after a text start is read as text.
func TestExplainStreamInputErrors(t *testing.T) {
	boom := errors.New("boom")
	for name, c := range map[string]struct {
		in   io.Reader
		want error
	}{
		"empty":           {strings.NewReader(""), ErrEmptyLog},
		"blank":           {&repeatReader{line: []byte(" \r\n\t\n"), n: 100000}, ErrEmptyLog},
		"binary":          {bytes.NewReader(bytes.Repeat([]byte{0, 1, 2, 0xff}, 100000)), ErrBinaryLog},
		"fake UTF-16 BOM": {bytes.NewReader(append([]byte{0xFF, 0xFE}, bytes.Repeat([]byte{0x01, 0xD8}, 1000)...)), ErrBinaryLog},
		"read error":      {iotest.ErrReader(boom), boom},
		"late read error": {io.MultiReader(strings.NewReader("nvidia-smi\n"), iotest.ErrReader(boom)), boom},
	} {
		_, err := Explain(c.in, ExplainOptions{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", name, err, c.want)
		}
	}
	tail := io.MultiReader(strings.NewReader(strings.Repeat("nvidia-smi\n", 10000)), bytes.NewReader(bytes.Repeat([]byte{0}, 1<<20)))
	if _, err := Explain(tail, ExplainOptions{}); err != nil {
		t.Errorf("a text log with a binary tail: %v", err)
	}
}

// TestUTF16SurrogatesAcrossReads: a character outside the BMP split over
// reads is decoded whole; a lone surrogate becomes U+FFFD.
func TestUTF16SurrogatesAcrossReads(t *testing.T) {
	in := utf16LE("ok 😀 done\n", true)
	in = append(in, 0x00, 0xD8, 'x', 0) // lone high surrogate, then 'x'
	u, err := decodedLog(iotest.OneByteReader(bytes.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(u)
	if string(got) != "ok 😀 done\n\uFFFDx" {
		t.Errorf("decoded %q", got)
	}
}

// BenchmarkExplainStream1MB and BenchmarkExplainStream50MB measure Explain
// reading a log from a stream (the 1 MiB log of BenchmarkExplain1MB,
// repeated for 50 MiB).
func BenchmarkExplainStream1MB(b *testing.B)  { benchStream(b, 1) }
func BenchmarkExplainStream50MB(b *testing.B) { benchStream(b, 50) }

func benchStream(b *testing.B, mib int) {
	text := []byte(megabyteLog(b))
	mustLibrary()
	b.SetBytes(int64(len(text) * mib))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rs []io.Reader
		for j := 0; j < mib; j++ {
			rs = append(rs, bytes.NewReader(text))
		}
		if _, err := Explain(io.MultiReader(rs...), ExplainOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
