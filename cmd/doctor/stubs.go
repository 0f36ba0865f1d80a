package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

// Commands whose packages are not written yet. Each is replaced by its own
// file (explain.go, verify.go, watch.go, fix.go).

func explainCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{Name: "explain", Usage: "diagnose a pasted log (not available yet)", Action: notYet}
}

func notYet(c *cli.Context) error {
	return internalErr("%s is not implemented yet", c.Command.FullName())
}
