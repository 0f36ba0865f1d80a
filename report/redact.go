// Package report renders a rules.Report as text (for a terminal), JSON
// (doctor.report/v1), Markdown (for support tickets) and Prometheus text
// format, and redacts personal data from it.
package report

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/rules"
)

// Identity is what redaction hides: the user, the home folder, the host.
type Identity struct {
	User     string
	Home     string
	Hostname string
}

var (
	uuidRE     = regexp.MustCompile(`(?i)\b(GPU|MIG)-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\b`)
	homeDirRE  = regexp.MustCompile(`/home/[^/\s"']+`)
	commonUser = map[string]bool{"root": true, "user": true, "admin": true, "ubuntu": true, "debian": true, "ec2-user": true, "jovyan": true, "nobody": true}
)

// redactKeys are JSON keys whose whole value is identifying.
var redactKeys = map[string]string{
	"hostname": "<host>",
	"serial":   "<serial>",
}

// Redact returns a copy of r with user names, home folders, the host name,
// GPU UUIDs and serial numbers replaced by placeholders. It works on the
// JSON form, so every string in every finding's evidence is covered, and
// fields added later are covered too.
func Redact(r *rules.Report, id Identity) *rules.Report {
	b, err := json.Marshal(r)
	if err != nil {
		return r
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return r
	}
	red := newRedactor(id)
	// First pass: the names in "user" fields, so that other users' names
	// are also hidden where they appear inside titles and details.
	for name := range collectUsers(tree) {
		if name != id.User && !commonUser[name] && len(name) >= 2 {
			red.add(`\b`+regexp.QuoteMeta(name)+`\b`, "<other user>")
		}
	}
	tree = red.walk("", tree)
	b, err = json.Marshal(tree)
	if err != nil {
		return r
	}
	out := &rules.Report{}
	if err := json.Unmarshal(b, out); err != nil {
		return r
	}
	return out
}

type redactor struct {
	id       Identity
	replacer []struct {
		re  *regexp.Regexp
		rep string
	}
}

func (r *redactor) add(pattern, rep string) {
	r.replacer = append(r.replacer, struct {
		re  *regexp.Regexp
		rep string
	}{regexp.MustCompile(pattern), rep})
}

// collectUsers finds the values of every "user" key in a JSON tree.
func collectUsers(v any) map[string]bool {
	out := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				if s, ok := x.(string); ok && strings.EqualFold(k, "user") && s != "" {
					out[s] = true
				}
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

func newRedactor(id Identity) *redactor {
	r := &redactor{id: id}
	add := r.add
	if h := strings.TrimRight(id.Home, "/"); h != "" && h != "/" {
		add(`(^|[^A-Za-z0-9_.-])`+regexp.QuoteMeta(h)+`(/|\b|$)`, "${1}~${2}")
	}
	add(homeDirRE.String(), "/home/<user>")
	if u := id.User; u != "" && !commonUser[u] && len(u) >= 3 {
		add(`\b`+regexp.QuoteMeta(u)+`\b`, "<user>")
	}
	if h := id.Hostname; h != "" && !commonUser[h] {
		add(`\b`+regexp.QuoteMeta(h)+`\b`, "<host>")
		if short, _, ok := strings.Cut(h, "."); ok && short != "" {
			add(`\b`+regexp.QuoteMeta(short)+`\b`, "<host>")
		}
	}
	add(uuidRE.String(), "${1}-<redacted>")
	return r
}

func (r *redactor) walk(key string, v any) any {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t[k] = r.walk(k, t[k])
		}
		return t
	case []any:
		for i := range t {
			t[i] = r.walk(key, t[i])
		}
		return t
	case string:
		return r.str(key, t)
	}
	return v
}

func (r *redactor) str(key, s string) string {
	if s == "" {
		return s
	}
	lk := strings.ToLower(key)
	if rep, ok := redactKeys[lk]; ok {
		return rep
	}
	if lk == "user" {
		if s == r.id.User {
			return "<user>"
		}
		if commonUser[s] {
			return s
		}
		return "<other user>"
	}
	if lk == "uuid" {
		return uuidRE.ReplaceAllString(s, "${1}-<redacted>")
	}
	for _, rp := range r.replacer {
		s = rp.re.ReplaceAllString(s, rp.rep)
	}
	if r.id.Hostname != "" && s == r.id.Hostname {
		return "<host>"
	}
	return s
}
