package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

// Commands whose packages are not written yet. Each is replaced by its own
// file (explain.go, verify.go, watch.go, fix.go).

func verifyCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{Name: "verify", Usage: "run only the verification ladder (not available yet)", Action: notYet}
}

func watchCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{Name: "watch", Usage: "sample a running job's GPU and CPU use (not available yet)", Action: notYet}
}

func fixCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{Name: "fix", Usage: "apply chosen fixes (not available yet)", Action: notYet}
}

func runFixFromFlags(c *cli.Context, o diagnoseOptions, ios *iostreams.IOStreams) error {
	return notYet(c)
}

func notYet(c *cli.Context) error {
	return internalErr("%s is not implemented yet", c.Command.FullName())
}
