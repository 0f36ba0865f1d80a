package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// The one rule for flag positions: a flag a command accepts may be written
// anywhere on its command line — before or after the command's name, before
// or after its positional arguments — and means the same as in the
// canonical form
//
//	doctor [COMMAND...] [FLAGS...] [ARGS...]
//
// urfave/cli v2 parses only that canonical form (it stops at the first
// positional argument, and a flag before a subcommand's name belongs to the
// parent), so normalizeArgs rewrites argv into it before urfave sees it:
//
//   - A flag keeps its value: "--python /x", "-o FILE", "--pid -5" move as a
//     pair (the flag's definition says whether it takes one).
//   - "--" ends the flags; what follows is positional, in its order.
//   - "-" alone is positional (standard input for explain and --from's value).
//   - A flag written before a subcommand's name moves after it when the
//     subcommand accepts it. Every command takes the display flags
//     (--no-color, -v/--verbose: addDisplayFlags), so an alias such as
//     alias doctor='doctor --no-color' works with every command.
//   - A flag the command does not take, wherever it is written, is a usage
//     error that names the commands that do take it (a flag silently
//     ignored is worse than a refusal); a flag no command takes is left to
//     urfave ("flag provided but not defined").
//   - --version anywhere prints the version; --help/-h anywhere prints the
//     help of the command it names (its arguments and other flags aside).

// flagSpec is what the normaliser needs to know about a flag.
type flagSpec struct {
	takesValue bool
}

func flagIndex(flags []cli.Flag) map[string]flagSpec {
	idx := map[string]flagSpec{
		"help": {}, "h": {}, // added to every command by urfave
	}
	for _, f := range flags {
		tv := false
		if v, ok := f.(interface{ TakesValue() bool }); ok {
			tv = v.TakesValue()
		}
		for _, n := range f.Names() {
			idx[n] = flagSpec{takesValue: tv}
		}
	}
	return idx
}

// allFlags indexes every flag of cmds and their subcommands: how a flag
// unknown where it is written is parsed, so that "doctor --size 64 verify"
// moves --size and its value together.
func allFlags(cmds []*cli.Command, into map[string]flagSpec) {
	for _, c := range cmds {
		for n, s := range flagIndex(c.Flags) {
			if _, ok := into[n]; !ok {
				into[n] = s
			}
		}
		allFlags(c.Subcommands, into)
	}
}

// flagName returns the name of a flag argument ("--format=json" → "format")
// and whether its value is attached; ok is false for a positional argument.
func flagName(a string) (name string, attached bool, ok bool) {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return "", false, false
	}
	s := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	if s == "" || s[0] == '-' || s[0] == '=' {
		return "", false, false
	}
	name, _, attached = strings.Cut(s, "=")
	return name, attached, true
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// whyNot says why a command refuses a flag that its neighbours take, where
// the list of the commands that take it is not explanation enough; keyed
// "command flag".
var whyNot = map[string]string{
	"verify quick": "--quick skips the ladder, and the ladder is all verify runs",
	"verify root":  "verify runs real GPU work on this machine; a recorded tree has no GPU",
}

// flagTakers names the commands that take the flag name, in the order of
// doctor --help, doctor itself first; hidden commands are left out.
func flagTakers(app *cli.App, name string) []string {
	var out []string
	if _, ok := flagIndex(app.Flags)[name]; ok {
		out = append(out, "doctor")
	}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			if _, ok := flagIndex(c.Flags)[name]; ok {
				out = append(out, prefix+c.Name)
			}
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("doctor ", app.Commands)
	return out
}

// notTaken is the usage error for flag (as typed, without its value),
// written on the command line of doctor path... that does not take it.
func notTaken(app *cli.App, path []string, flag, name string) error {
	where := strings.TrimSpace("doctor " + strings.Join(path, " "))
	msg := flag + " does not apply to " + where
	if len(path) > 0 {
		if why, ok := whyNot[path[len(path)-1]+" "+name]; ok {
			msg += " (" + why + ")"
		}
	}
	return usageErr("%s; it is taken by %s", msg, strings.Join(flagTakers(app, name), ", "))
}

// normalizeArgs rewrites args (args[0] is the program) into the canonical
// order for app; see the rule above.
func normalizeArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	anyFlags := map[string]flagSpec{}
	for n, s := range flagIndex(app.Flags) {
		anyFlags[n] = s
	}
	allFlags(app.Commands, anyFlags)

	type level struct {
		cmd   *cli.Command // nil: the app itself
		flags [][]string   // each flag with its value
	}
	levels := []*level{{}}
	known := flagIndex(app.Flags)
	cmds := app.Commands
	var pos, tail []string
	dashdash, help := false, false
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			dashdash, tail = true, rest[i+1:]
			break
		}
		name, attached, isFlag := flagName(a)
		if !isFlag {
			if len(pos) == 0 {
				if c := findCommand(cmds, a); c != nil {
					levels = append(levels, &level{cmd: c})
					known, cmds = flagIndex(c.Flags), c.Subcommands
					continue
				}
			}
			pos = append(pos, a)
			continue
		}
		if name == "version" {
			return []string{args[0], "--version"}, nil
		}
		if name == "help" || name == "h" {
			help = true
		}
		spec, ok := known[name]
		if !ok {
			spec = anyFlags[name]
		}
		group := []string{a}
		if spec.takesValue && !attached && i+1 < len(rest) {
			i++
			group = append(group, rest[i])
		}
		cur := levels[len(levels)-1]
		cur.flags = append(cur.flags, group)
	}

	leaf := levels[len(levels)-1]
	var path []string
	for _, l := range levels[1:] {
		path = append(path, l.cmd.Name)
	}
	out := []string{args[0]}
	if help {
		// The command's help, whatever else was typed: urfave would take
		// the first argument for a help topic ("No help topic for tf.log").
		return append(append(out, path...), "--help"), nil
	}
	// A flag the leaf does not take but another command does is refused
	// here, with the commands that take it; one no command takes is left
	// to urfave, which says so.
	for _, l := range levels {
		for _, g := range l.flags {
			name, _, _ := flagName(g[0])
			_, taken := known[name]
			_, somewhere := anyFlags[name]
			if !taken && somewhere {
				flag, _, _ := strings.Cut(g[0], "=")
				return nil, notTaken(app, path, flag, name)
			}
		}
	}
	var moved [][]string
	for _, l := range levels[:len(levels)-1] {
		moved = append(moved, l.flags...)
		if l.cmd != nil {
			out = append(out, l.cmd.Name)
		}
	}
	if leaf.cmd != nil {
		out = append(out, leaf.cmd.Name)
	}
	for _, g := range append(moved, leaf.flags...) {
		out = append(out, g...)
	}
	if dashdash {
		out = append(out, "--")
	}
	out = append(out, pos...)
	return append(out, tail...), nil
}
