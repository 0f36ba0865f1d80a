package host

import (
	"strings"
	"testing"
)

// A snapshot is pasted and read by people too: captured commands and text
// keep their characters ("2>&1", "<redacted>"), not JSON's HTML escapes.
func TestWriteJSONNoHTMLEscaping(t *testing.T) {
	s := &Snapshot{Schema: SnapshotSchema, Collectors: map[string]CollectorStatus{"env": {}}, Env: map[string]string{"TF_CMD": "python x.py 2>&1 | grep <gpu>"}}
	var b strings.Builder
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"python x.py 2>&1 | grep <gpu>"`) || strings.Contains(b.String(), `\u00`) {
		t.Errorf("%s", b.String())
	}
	back, err := ReadSnapshot(strings.NewReader(b.String()))
	if err != nil || back.Env["TF_CMD"] != s.Env["TF_CMD"] {
		t.Errorf("round trip: %v %+v", err, back)
	}
}
