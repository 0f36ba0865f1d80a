package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

// logWriterEnv makes the test binary a log writer: it prints that many
// bytes of harmless training output, then one decisive line, and exits 0
// (a broken pipe kills it with SIGPIPE instead).
const logWriterEnv = "DOCTOR_TEST_LOG_WRITER_BYTES"

func TestHelperLogWriter(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(logWriterEnv))
	if err != nil {
		t.Skip("a helper process, run by TestExplainReadsAWriterToTheEnd")
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	line := "1563/1563 [==============================] - 12s 8ms/step - loss: 0.6931 - accuracy: 0.7512\n"
	for written := 0; written < n; written += len(line) {
		w.WriteString(line)
	}
	w.WriteString("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n")
	if err := w.Flush(); err != nil {
		os.Exit(4)
	}
	os.Exit(0)
}

// TestExplainReadsAWriterToTheEnd: `train.py 2>&1 | doctor explain` reads
// a 40 MB log to its end: the writer is never cut off by a broken pipe and
// the decisive line at the very end is found.
func TestExplainReadsAWriterToTheEnd(t *testing.T) {
	const size = 40 << 20
	writer := exec.Command(os.Args[0], "-test.run=^TestHelperLogWriter$")
	writer.Env = append(os.Environ(), logWriterEnv+"="+strconv.Itoa(size))
	pipe, err := writer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := iostreams.Test()
	ios.In = pipe
	code := Main(context.Background(), []string{"doctor", "explain", "--format", "json", "-"}, ios)
	pipe.(*os.File).Close() // what the shell's pipe does when doctor exits
	if err := writer.Wait(); err != nil {
		t.Errorf("the writer did not end cleanly (a broken pipe?): %v", err)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1; stderr %s", code, errOut)
	}
	var rep struct {
		RootCause *struct{ Cause string } `json:"root_cause"`
		Input     *struct {
			Bytes int64 `json:"bytes"`
			Lines int   `json:"lines"`
		} `json:"input"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.RootCause == nil || rep.RootCause.Cause != "secure_boot_unsigned_module" {
		t.Errorf("the last line was not found: root cause %+v", rep.RootCause)
	}
	if rep.Input == nil || rep.Input.Bytes < size || rep.Input.Lines < size/100 {
		t.Errorf("the report does not say how much was read: %+v", rep.Input)
	}
}
