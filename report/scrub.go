package report

import (
	"bytes"
	"encoding/json"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/secrets"
	"github.com/tfdoctor/doctor/rules"
)

// Scrub returns a copy of r with every credential removed from every
// string (secrets.Scrub: URL user and password, NAME=value and --flag
// values whose name holds a secret, bearer tokens, tokens of known
// shapes). It runs on every report in every format, redacted or not: a
// pasted log or a captured command may hold one.
func Scrub(r *rules.Report) *rules.Report {
	return viaJSON(r, func(tree any) any { return mapStrings("", tree, func(_, s string) string { return secrets.Scrub(s) }) })
}

// ScrubSnapshot is Scrub for a snapshot (doctor snapshot's output).
func ScrubSnapshot(s *host.Snapshot) *host.Snapshot {
	return viaJSON(s, func(tree any) any { return mapStrings("", tree, func(_, s string) string { return secrets.Scrub(s) }) })
}

// RedactSnapshot returns a copy of s with credentials removed and the
// identities Redact hides (user and host names, home folders, GPU UUIDs,
// serial numbers, IP and MAC addresses) replaced by placeholders: doctor
// snapshot --redact. The copy is still a snapshot doctor --from reads.
func RedactSnapshot(s *host.Snapshot, id Identity) *host.Snapshot {
	return viaJSON(ScrubSnapshot(s), func(tree any) any {
		red := newRedactor(id)
		for name := range collectUsers(tree) {
			if name != id.User && !commonUser[name] {
				red.addUser(name, "<other user>")
			}
		}
		return red.walk("", tree)
	})
}

// viaJSON applies f to v's JSON tree and decodes the result into a new
// value; v itself is returned when the round trip fails.
func viaJSON[T any](v *T, f func(any) any) *T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return v
	}
	if b, err = json.Marshal(f(tree)); err != nil {
		return v
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		return v
	}
	return out
}

// mapStrings applies f to every string value of a JSON tree (with the key
// it stands under).
func mapStrings(key string, v any, f func(key, s string) string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = mapStrings(k, x, f)
		}
	case []any:
		for i := range t {
			t[i] = mapStrings(key, t[i], f)
		}
	case string:
		return f(key, t)
	}
	return v
}
