// Package secrets removes credentials from text doctor captured: URLs with
// a user and password, NAME=value and --flag=value pairs whose name says
// it holds a secret, Authorization headers and tokens of well-known
// formats. doctor's output is pasted into public tickets, so this runs on
// everything collected (environment values, command lines) and on every
// report, whatever its format; redaction of identities (user and host
// names, addresses) comes on top of it, in package report.
package secrets

import (
	"regexp"
	"strings"
)

// Placeholder replaces a removed secret.
const Placeholder = "<redacted>"

// nameRE matches names (of variables, flags, keys) that may hold a
// credential: NVIDIA_NGC_PASS, HF_TOKEN, AWS_SECRET_ACCESS_KEY,
// --wandb-key, db_password.
var nameRE = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASS|PWD|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|SESSION|COOKIE|SIGNATURE|(^|[_.-])KEY($|[_.-]))`)

// Name reports whether a variable or flag name looks like it holds a
// secret.
func Name(name string) bool { return nameRE.MatchString(strings.TrimLeft(name, "-")) }

var (
	// scheme://user:password@ and scheme://token@
	urlCredRE = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@'"<>]+@`)
	// NAME=value, NAME: value, "name": value, --name=value (the name holds
	// a secret word); a colon without a space is a file's line number
	// (direct_session.cc:123), not a value.
	assignRE = regexp.MustCompile(`(?i)((?:^|[\s"'(,;{\[])-{0,2}[\w.-]*(?:token|secret|passw(?:or)?d|pass|pwd|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth|session|cookie|signature|[_.-]key|^key)[\w.-]*(?:["']\s*:\s*|\s*=\s*|:\s+))("[^"]*"|'[^']*'|[^\s"',;}\]]+)`)
	// --name value
	flagRE = regexp.MustCompile(`(?i)((?:^|\s)--?[\w-]*(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth|[_-]key)[\w-]*\s+)([^\s-][^\s]*)`)
	// Authorization: Bearer xyz
	bearerRE = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`)
	// Tokens with a known shape: GitHub, Hugging Face, OpenAI/Anthropic
	// style, Slack, AWS access key IDs, NGC API keys, JWTs.
	tokenRE = regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|nvapi-[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b`)
)

// Scrub returns s with every credential it recognises replaced by
// Placeholder.
func Scrub(s string) string {
	if s == "" {
		return s
	}
	if strings.Contains(s, "://") {
		s = urlCredRE.ReplaceAllString(s, "${1}"+Placeholder+"@")
	}
	s = bearerRE.ReplaceAllString(s, "${1} "+Placeholder)
	if strings.ContainsAny(s, "=:") {
		s = assignRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := assignRE.FindStringSubmatch(m)
			if v := strings.ToLower(sub[2]); v == Placeholder || strings.HasPrefix(v, "//") || v == "bearer" || v == "basic" {
				return m // already scrubbed, or a URL scheme's colon
			}
			return sub[1] + Placeholder
		})
	}
	if strings.Contains(s, "-") {
		s = flagRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := flagRE.FindStringSubmatch(m)
			if sub[2] == Placeholder {
				return m
			}
			return sub[1] + Placeholder
		})
	}
	return tokenRE.ReplaceAllString(s, Placeholder)
}
