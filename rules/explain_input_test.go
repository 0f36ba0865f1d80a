package rules

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/tfdoctor/doctor/checks"
)

func utf16LE(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func TestDecodeLog(t *testing.T) {
	const line = "ModuleNotFoundError: No module named 'tensorflow'\n"
	cases := []struct {
		name string
		in   []byte
		want string
		err  error
	}{
		{"plain", []byte(line), line, nil},
		{"utf-8 BOM", append([]byte{0xEF, 0xBB, 0xBF}, line...), line, nil},
		{"utf-16le BOM (PowerShell >)", utf16LE(line, true), line, nil},
		{"utf-16le without BOM", utf16LE(line, false), line, nil},
		{"empty", nil, "", ErrEmptyLog},
		{"whitespace", []byte(" \n\t\r\n"), "", ErrEmptyLog},
		{"NUL bytes", bytes.Repeat([]byte{0, 0, 0, 1, 'a'}, 1000), "", ErrBinaryLog},
		{"invalid UTF-8 majority", bytes.Repeat([]byte{0xff, 0xfe, 0xfd, 'a'}, 1000), "", ErrBinaryLog},
		{"ELF header", append([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), bytes.Repeat([]byte{0, 0x3e, 0, 1, 0, 0, 0}, 100)...), "", ErrBinaryLog},
		{"a few bad bytes in text", []byte("caf\xe9 " + strings.Repeat(line, 20)), "caf\xe9 " + strings.Repeat(line, 20), nil},
		{"colour codes", []byte("\x1b[31mE\x1b[0m " + line), "\x1b[31mE\x1b[0m " + line, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeLog(c.in)
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestExplainInputErrors(t *testing.T) {
	for _, in := range [][]byte{nil, []byte("\n\n"), bytes.Repeat([]byte{0}, 4096)} {
		_, err := Explain(bytes.NewReader(in), ExplainOptions{})
		var ie *InputError
		if !errors.As(err, &ie) || ie.Msg == "" {
			t.Errorf("Explain(%q...) error = %v, want an *InputError", in[:min(len(in), 8)], err)
		}
	}
}

// TestEvidenceLines: findings quote their lines with 1-based numbers, the
// extracted values, and keep counting past the quoted lines.
func TestEvidenceLines(t *testing.T) {
	log := "first line\r\n" + // CRLF paste
		"\x1b[33m2024-01-01 W dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file\x1b[0m\n" +
		"progress 10%\rprogress 100%\rW gpu_device.cc:1] Cannot dlopen some GPU libraries.\n"
	r := ExplainText(log)
	if r.RootCause == nil || r.RootCause.Cause != "libcudnn_missing" || r.RootCause.ID != "cuda.dlopen_failed" {
		t.Fatalf("root cause %+v", r.RootCause)
	}
	var root, generic *checks.Finding
	for i := range r.Findings {
		switch r.Findings[i].ID {
		case "cuda.dlopen_failed":
			root = &r.Findings[i]
		case "tf.cannot_dlopen_gpu_libraries":
			generic = &r.Findings[i]
		}
	}
	if root == nil || generic == nil {
		t.Fatalf("findings %+v", r.Findings)
	}
	lines := root.Evidence["lines"].([]lineRef)
	if len(lines) != 1 || lines[0].Line != 2 || strings.Contains(lines[0].Text, "\x1b") || !strings.Contains(lines[0].Text, "libcudnn.so.8") {
		t.Errorf("root lines %+v", lines)
	}
	vals := root.Evidence["values"].(map[string]any)
	if vals["library"] != "libcudnn.so.8" || vals["lib"] != "cudnn" || vals["lib_version"] != "8" {
		t.Errorf("values %+v", vals)
	}
	if gl := generic.Evidence["lines"].([]lineRef); gl[0].Line != 3 {
		t.Errorf("a carriage-return segment keeps its line number: %+v", gl)
	}
	if generic.BlockedBy == nil || *generic.BlockedBy != root.ID {
		t.Errorf("the generic message is not tied to the named library: %+v", generic.BlockedBy)
	}
	if ex, _ := root.Evidence["explains"].([]string); len(ex) != 1 || ex[0] != generic.ID {
		t.Errorf("root explains %v", root.Evidence["explains"])
	}
	if r.Source != "log" || r.Schema != ReportSchema || r.Status != "error" || r.ExitCode() != 1 {
		t.Errorf("report header %q %q %q", r.Source, r.Schema, r.Status)
	}

	many := strings.Repeat("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n", 50)
	r = ExplainText(many)
	f := r.Findings[0]
	if f.Evidence["occurrences"] != 50 || len(f.Evidence["lines"].([]lineRef)) != maxQuotedLines {
		t.Errorf("occurrences %v, lines %d", f.Evidence["occurrences"], len(f.Evidence["lines"].([]lineRef)))
	}
}

// TestOutcomes: the three ends that are not an error finding.
func TestOutcomes(t *testing.T) {
	benign := ExplainText("E0000 00:00:1736841518.537290 68237 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n")
	if benign.RootCause == nil || benign.RootCause.Cause != "benign_warning_only" || benign.Status != "ok" || benign.ExitCode() != 0 {
		t.Errorf("benign: %+v %s", benign.RootCause, benign.Status)
	}
	var ask any
	for _, f := range benign.Findings {
		if f.ID == "explain.benign_only" {
			ask = f.Evidence["ask_for"]
		}
	}
	// First the failing program's own output (the paste shows no failure),
	// then the device query.
	if a, _ := ask.([]string); len(a) < 2 || a[0] != benignFailingOutput || !strings.Contains(a[1], "TF_CPP_MAX_VLOG_LEVEL=1") {
		t.Errorf("benign-only asks for %v", ask)
	}

	none := ExplainText("hello world\nthis is not a GPU log\n")
	if none.RootCause != nil || none.Status != "ok" || len(none.Findings) != 1 || none.Findings[0].ID != "explain.unrecognised" || none.ExitCode() != 0 {
		t.Errorf("unrecognised: %+v", none)
	}
	if !strings.Contains(none.Findings[0].Detail, "TF_CPP_MAX_VLOG_LEVEL=1") {
		t.Errorf("unrecognised does not ask for the verbose run: %s", none.Findings[0].Detail)
	}

	empty := ExplainText("")
	if empty.RootCause != nil || empty.Findings[0].ID != "explain.unrecognised" {
		t.Errorf("ExplainText(\"\") = %+v", empty)
	}
}

func TestLongLinesAreCapped(t *testing.T) {
	long := strings.Repeat("é", 10000) + " Could not load dynamic library 'libcudart.so.12'"
	r := ExplainText("Could not load dynamic library 'libcudnn.so.9'\n" + long + "\n")
	if r.RootCause == nil || r.RootCause.Cause != "libcudnn_missing" {
		t.Errorf("root %+v", r.RootCause)
	}
	for _, f := range r.Findings {
		if f.Evidence["values"] != nil && strings.Contains(f.Title, "libcudart") {
			t.Errorf("matched beyond the line cap: %s", f.Title)
		}
	}
}
