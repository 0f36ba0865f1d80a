package main

import (
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/fleet"
	"github.com/tfdoctor/doctor/internal/iostreams"
)

const fleetHelp = `Reads the JSON reports of many machines (doctor --format json, one file per
machine; files, or folders searched for *.json at any depth) and says how many
machines are broken, grouped by root cause with their hosts; what differs
between healthy and broken machines (driver, CUDA, TensorFlow, Python, GPU
model); and which files could not be read (named, never fatal). A host with
several reports counts once, with its newest. Redacted reports (--redact) name
no host: each counts as a machine, named <host>.

   doctor --quick --format json -o /srv/doctor-reports/$(hostname).json   # on each node
   doctor fleet /srv/doctor-reports
   doctor fleet --format json reports/ > fleet.json                  # doctor.fleet/v1

EXIT CODES:
   0  no machine is broken (warnings may remain)
   1  at least one machine is broken (an error-severity finding)
   2  bad usage, or not one readable report among the PATHs
`

// fleetOptions are the options of doctor fleet.
type fleetOptions struct {
	Paths   []string
	Format  string
	Verbose bool
	Output  string
}

var fleetFormats = []string{"text", "json", "markdown"}

func fleetCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:        "fleet",
		Usage:       "summarise many machines' JSON reports: broken machines by root cause, what differs, unreadable files",
		ArgsUsage:   "PATH...",
		Description: fleetHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "output format: text, json (doctor.fleet/v1) or markdown"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list every host of a group (else the first 10)"},
			outputFlag(),
		},
		Action: func(c *cli.Context) error {
			o := fleetOptions{
				Paths:   c.Args().Slice(),
				Format:  strings.ToLower(fromLineage(c, "format").String("format")),
				Verbose: fromLineage(c, "verbose").Bool("verbose"),
				Output:  fromLineage(c, "output").String("output"),
			}
			if o.Format == "md" {
				o.Format = "markdown"
			}
			ok := false
			for _, f := range fleetFormats {
				ok = ok || f == o.Format
			}
			if !ok {
				return usageErr("fleet: unknown --format %q: use one of %s", o.Format, strings.Join(fleetFormats, ", "))
			}
			if len(o.Paths) == 0 {
				return usageErr("fleet needs at least one PATH: a report file or a folder of them")
			}
			if err := checkOutputFile(o.Output); err != nil {
				return err
			}
			return runFleet(o, ios)
		},
	}
}

func runFleet(o fleetOptions, ios *iostreams.IOStreams) error {
	s := fleet.Read(o.Paths)
	to := fleet.TextOptions{MaxHosts: 10}
	if o.Verbose {
		to.MaxHosts = 0
	}
	err := writeOutput(ios, o.Output, func(w io.Writer) error {
		switch o.Format {
		case "json":
			return fleet.JSON(w, s)
		case "markdown":
			return fleet.Markdown(w, s, to)
		}
		return fleet.Text(w, s, to)
	})
	if err != nil {
		return internalErr("writing the fleet summary: %v", err)
	}
	if s.Machines.Total == 0 {
		return usageErr("no readable doctor report in %s (unreadable: %d)", strings.Join(o.Paths, ", "), len(s.Unreadable))
	}
	return exitCode(s.ExitCode())
}
