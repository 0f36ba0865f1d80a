package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/internal/atomicfile"
	"github.com/tfdoctor/doctor/report"
)

func snapshotCommand(f *Factory) *cli.Command {
	ios := f.IOStreams
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "write the machine snapshot (JSON) that doctor's checks read",
		ArgsUsage: " ",
		Description: `The snapshot holds every fact the checks read. Save it on the machine with the
problem and evaluate it anywhere with 'doctor --from FILE'. It keeps the user
and host names unless --redact (which also hides GPU UUIDs, serial numbers,
home folders, IP and MAC addresses); credentials are never written (only the
environment variables doctor reads are collected, URL passwords and tokens
are removed, other users' processes show only their program's name).`,
		Flags: commonFlags(), // -o FILE among them
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("snapshot takes no arguments (use -o FILE)")
			}
			o, err := diagnoseOptionsFrom(c)
			if err != nil {
				return err
			}
			if o.From != "" {
				return usageErr("snapshot reads this machine; --from does not apply")
			}
			// The snapshot is JSON (doctor.snapshot/v1) and nothing else.
			if c.IsSet("format") && o.Format != "json" {
				return usageErr("snapshot writes JSON only (doctor.snapshot/v1); --format %s does not apply (for a %s report: doctor --format %s)", o.Format, o.Format, o.Format)
			}
			out := c.String("output")
			if err := checkOutputFile(out); err != nil {
				return err
			}
			s, _, err := loadSnapshot(c.Context, o, f, nil)
			if err != nil {
				return err
			}
			// Credentials never leave; identities too with --redact.
			if o.Redact {
				s = report.RedactSnapshot(s, identityOf(s))
			} else {
				s = report.ScrubSnapshot(s)
			}
			var buf bytes.Buffer
			if err := s.WriteJSON(&buf); err != nil {
				return internalErr("encoding the snapshot: %v", err)
			}
			if out == "" || out == "-" {
				_, err := ios.Out.Write(buf.Bytes())
				return err
			}
			if err := atomicfile.Write(out, buf.Bytes(), 0o644); err != nil {
				return internalErr("writing %s: %v", out, err)
			}
			return nil
		},
	}
}

// checkOutputFile refuses, before any work, an output path that cannot be
// written: a folder, or a file in a folder that does not exist. ("" and "-"
// are standard output.)
func checkOutputFile(out string) error {
	if out == "" || out == "-" {
		return nil
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usageErr("cannot write %s: it is a folder (give a file name, e.g. %s)", out, filepath.Join(out, "snapshot.json"))
	}
	if strings.HasSuffix(out, "/") {
		return usageErr("cannot write %s: a file name cannot end in /", out)
	}
	dir := filepath.Dir(out)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageErr("cannot write %s: folder %s does not exist", out, dir)
	}
	// The file is written as a temporary file in the same folder and
	// renamed: that folder must take a new file (not /proc, not a
	// read-only mount, not someone else's folder).
	probe, err := os.CreateTemp(dir, ".doctor-probe-*")
	if err != nil {
		return usageErr("cannot write %s: folder %s does not take new files (%v)", out, dir, errors.Unwrap(err))
	}
	name := probe.Name()
	probe.Close()
	os.Remove(name)
	return nil
}
