package rules

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzExplain: any input gives a report or an *InputError, never a panic;
// quoted line numbers lie inside the input; the root cause is one of the
// findings. (Run time is bounded by construction: one pass per line, RE2
// regular expressions on lines capped at maxLineBytes.)
func FuzzExplain(f *testing.F) {
	paths, _ := filepath.Glob("testdata/explain/logs/*/*.log")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range mustLibrary().sigs {
		for _, ex := range s.Examples {
			f.Add([]byte(ex))
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0xFF, 0xFE, 'a', 0})
	f.Add([]byte("\r\r\n\x1b[31m\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Explain(bytes.NewReader(data), ExplainOptions{})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || looksUTF16LE(data) {
			lines = len(data) // decoded UTF-16: count is not comparable
		}
		if r.Schema != ReportSchema || len(r.Findings) == 0 {
			t.Fatalf("empty report for %q", data)
		}
		rootFound := r.RootCause == nil
		for _, fd := range r.Findings {
			if r.RootCause != nil && fd.ID == r.RootCause.ID {
				rootFound = true
			}
			if ls, ok := fd.Evidence["lines"].([]lineRef); ok {
				for _, l := range ls {
					if l.Line < 1 || l.Line > lines {
						t.Fatalf("finding %s quotes line %d of %d", fd.ID, l.Line, lines)
					}
				}
			}
		}
		if !rootFound {
			t.Fatalf("root cause %s is not among the findings", r.RootCause.ID)
		}
		// Read in pieces of one byte, the stream gives what the whole
		// decoded text gives.
		text, err := DecodeLog(data)
		if err != nil {
			t.Fatalf("the stream was read, the text is refused: %v", err)
		}
		r.Input = nil
		whole := explainText(text, "")
		s, err := Explain(iotest.OneByteReader(bytes.NewReader(data)), ExplainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Input = nil
		if a, b := report(t, whole), report(t, s); a != b {
			t.Fatalf("streamed in bytes:\n%s\nwhole:\n%s", b, a)
		}
	})
}

// FuzzParseLibraryName: any file name gives a short name without panics.
func FuzzParseLibraryName(f *testing.F) {
	for _, s := range []string{"libcudnn.so.8", "cudart64_110.dll", "", ".so", "lib", "_.dll", "a/b\\c.so.1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseLibraryName(s)
		parseVer(s)
		bytesOf(s)
	})
}
