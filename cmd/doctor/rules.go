package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/knowledge"
)

// ruleDoc is one entry of `doctor rules`.
type ruleDoc struct {
	Kind   string   `json:"kind"` // check, signature
	ID     string   `json:"id"`
	Link   string   `json:"link,omitempty"`
	Title  string   `json:"title"`
	Causes []string `json:"causes"`
	Doc    string   `json:"doc"`
}

func rulesCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "list every check and log signature with its ID, cause and documentation",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "text or json"},
			// Display flags, taken by every command (addDisplayFlags).
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "taken by every command; rules always prints each entry's documentation in full, so it changes nothing here"},
			&cli.BoolFlag{Name: "no-color", Usage: "taken by every command; rules prints no colour, so it changes nothing here"},
		},
		Action: func(c *cli.Context) error {
			var docs []ruleDoc
			for _, ch := range checks.All {
				docs = append(docs, ruleDoc{Kind: "check", ID: ch.ID, Link: string(ch.Link), Title: ch.Title, Causes: ch.Causes, Doc: ch.Doc})
			}
			// explain's log signatures and reasoning, and watch's verdicts.
			docs = append(docs, explainRules()...)
			docs = append(docs, watchRules()...)
			switch c.String("format") {
			case "json":
				enc := json.NewEncoder(ios.Out)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false) // commands in docs stay pasteable (2>&1)
				return enc.Encode(struct {
					Rules  []ruleDoc         `json:"rules"`
					Causes []knowledge.Cause `json:"causes"`
				}{docs, knowledge.Causes})
			case "text":
			default:
				return usageErr("rules: unknown --format %q (text or json)", c.String("format"))
			}
			var b strings.Builder
			for _, d := range docs {
				fmt.Fprintf(&b, "%s  (%s", d.ID, d.Kind)
				if d.Link != "" {
					fmt.Fprintf(&b, ", link %s", d.Link)
				}
				fmt.Fprintf(&b, ")\n  %s\n  causes: %s\n", d.Title, strings.Join(d.Causes, ", "))
				for _, line := range strings.Split(strings.TrimSpace(d.Doc), "\n") {
					fmt.Fprintf(&b, "    %s\n", strings.TrimSpace(line))
				}
				b.WriteString("\n")
			}
			b.WriteString("CAUSE LABELS\n")
			for _, cz := range knowledge.Causes {
				fmt.Fprintf(&b, "  %-40s %s\n", cz.Label, cz.Doc)
			}
			_, err := fmt.Fprint(ios.Out, b.String())
			return err
		},
	}
}
