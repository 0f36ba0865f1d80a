package report

import (
	"strings"

	"github.com/tfdoctor/doctor/rules"
)

// writeVerification renders the runtime ladder's rungs in the text view.
func writeVerification(b *strings.Builder, p palette, r *rules.Report) {}

// mdVerification renders the runtime ladder in Markdown.
func mdVerification(b *strings.Builder, r *rules.Report) {}
