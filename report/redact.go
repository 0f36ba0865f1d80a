// Package report renders a rules.Report as text (for a terminal), JSON
// (doctor.report/v1), Markdown (for support tickets) and Prometheus text
// format, and redacts personal data from it.
package report

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/tfdoctor/doctor/rules"
)

// Identity is what redaction hides: the user, the home folder, the host.
type Identity struct {
	User     string
	Home     string
	Hostname string
}

var (
	// uuidRE matches a GPU or MIG UUID, whole or cut short ("GPU-91faaf4a-9cbf…"
	// where a title was shortened before redaction).
	uuidRE     = regexp.MustCompile(`(?i)\b(GPU|MIG)-(?:GPU-)?[0-9a-f]{4}[0-9a-f-]*`)
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
		if name != id.User && !commonUser[name] {
			red.addUser(name, "<other user>")
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
	if u := id.User; u != "" && !commonUser[u] {
		r.addUser(u, "<user>")
	}
	if h := id.Hostname; h != "" && !commonUser[h] {
		add(`\b`+regexp.QuoteMeta(h)+`\b`, "<host>")
		if short, _, ok := strings.Cut(h, "."); ok && short != "" {
			add(`\b`+regexp.QuoteMeta(short)+`\b`, "<host>")
		}
	}
	add(uuidRE.String(), "${1}-<redacted>")
	// A serial number inside captured text (nvidia-smi -q: "Serial Number : 1324…").
	add(`(?i)(\bserial(?:[ _]?number)?["']?\s*[:=]\s*["']?)[A-Za-z0-9][A-Za-z0-9-]{3,}`, "${1}<serial>")
	add(macRE, "<mac>")
	return r
}

// A user name is hidden wherever it stands as a word; a name of one or two
// letters ("ab") would hide every such word of the text, so it is hidden
// only where it names a user: after "user", "owner", "by", "uid N", in
// name@host, ~name, (name), name:group and as a whole value.
func (r *redactor) addUser(name, rep string) {
	q := regexp.QuoteMeta(name)
	if len(name) >= 3 {
		r.add(`\b`+q+`\b`, rep)
		return
	}
	r.add(`(?i)(\b(?:user|owner|by|login|uid\s*\d+|USER=|LOGNAME=)\s*[:=(]?\s*)`+q+`\b`, "${1}"+rep)
	r.add(`(^|[^\w.-])`+q+`@`, "${1}"+rep+"@")
	r.add(`~`+q+`\b`, "~"+rep)
	r.add(`\(`+q+`([,)])`, "("+rep+"${1}")
	r.add(`(^|\s)`+q+`:`+q+`\b`, "${1}"+rep+":"+rep)
	r.add(`^`+q+`$`, rep)
}

var (
	macRE  = `(?i)\b[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}\b`
	ipv6RE = regexp.MustCompile(`(?i)(?:\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b|(?:\b[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*\b)?|::(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4}\b)`)
	ipv4RE = regexp.MustCompile(`\b(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}\b`)
	// versionBefore is what precedes a four-part version number, which
	// looks like an IPv4 address: cuDNN 8.9.7.29, ==9.1.0.70.
	versionBefore = regexp.MustCompile(`(?i)(version|ver|v|kernel|linux|release|cudnn|cublas|cufft|curand|cusolver|cusparse|nccl|tensorrt|trt|nvinfer|driver|cuda|tf|tensorflow|torch|jax|nvidia[\w-]*|cu\d+|[=\-_.+])\s*[:=]?\s*$`)
)

// redactIPv4 hides IPv4 addresses, except loopback and the unspecified
// address, and four-part versions.
func redactIPv4(s string) string {
	locs := ipv4RE.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		ip := s[l[0]:l[1]]
		before := s[max(0, l[0]-24):l[0]]
		after := s[l[1]:]
		if strings.HasPrefix(ip, "127.") || ip == "0.0.0.0" || versionBefore.MatchString(before) ||
			len(after) > 1 && (after[0] == '.' && after[1] >= '0' && after[1] <= '9' || after[0] == '-' && unicode.IsLetter(rune(after[1]))) {
			continue
		}
		b.WriteString(s[last:l[0]])
		b.WriteString("<ip>")
		last = l[1]
	}
	b.WriteString(s[last:])
	return b.String()
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
	s = redactIPv4(s)
	// An IPv6 address has a digit somewhere; C++'s ab::cd has none.
	s = ipv6RE.ReplaceAllStringFunc(s, func(m string) string {
		if !strings.ContainsAny(m, "0123456789") || m == "::1" {
			return m
		}
		return "<ip>"
	})
	if r.id.Hostname != "" && s == r.id.Hostname {
		return "<host>"
	}
	return s
}
