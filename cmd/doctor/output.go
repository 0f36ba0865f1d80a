package main

import (
	"bytes"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/internal/atomicfile"
	"github.com/tfdoctor/doctor/internal/iostreams"
)

// outputFlag is -o/--output, taken by every command that prints a report
// (in every format) and by doctor snapshot.
func outputFlag() cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"},
		Usage: "write the report to `FILE` instead of standard output, atomically (a temporary file in the same folder, renamed over FILE; mode 0644 for a new file), so node_exporter's textfile collector never reads half a file"}
}

// writeOutput runs write on standard output, or, when path names a file,
// on a buffer that then replaces the file atomically: a reader sees the
// old report or the new one, never half of one, and a failed run leaves
// the old file in place. The path was checked before any work
// (checkOutputFile).
func writeOutput(ios *iostreams.IOStreams, path string, write func(w io.Writer) error) error {
	if path == "" || path == "-" {
		return write(ios.Out)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
		return internalErr("writing %s: %v", path, err)
	}
	return nil
}
