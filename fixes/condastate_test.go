package fixes

import (
	"encoding/json"
	"testing"
)

func TestCondaState(t *testing.T) {
	tests := []struct {
		name, in  string
		val       string
		set       bool
		removed   string
		wantError bool
	}{
		{"conda's own format", `{"env_vars": {"CUDA_VISIBLE_DEVICES": "-1"}}`, "-1", true, `{"env_vars": {}}`, false},
		{"others kept in order", `{"env_vars": {"B": "2", "CUDA_VISIBLE_DEVICES": "-1", "A": "ü"}, "x": [1, 2]}`, "-1", true,
			`{"env_vars": {"B": "2", "A": "ü"}, "x": [1, 2]}`, false},
		{"indented by hand", "{\n  \"env_vars\": {\n    \"CUDA_VISIBLE_DEVICES\": \"-1\"\n  }\n}\n", "-1", true, `{"env_vars": {}}`, false},
		{"unset marker", `{"env_vars": {"CUDA_VISIBLE_DEVICES": "***unset***"}}`, "***unset***", false, `{"env_vars": {}}`, false},
		{"absent", `{"env_vars": {"A": "1"}}`, "", false, `{"env_vars": {"A": "1"}}`, false},
		{"no env_vars", `{}`, "", false, `{}`, false},
		{"broken", `{"env_vars": {`, "", false, "", true},
		{"not an object", `[1]`, "", false, "", true},
		{"trailing data", `{} {}`, "", false, "", true},
	}
	for _, tt := range tests {
		v, set, err := condaStateVar([]byte(tt.in), cvd)
		if (err != nil) != tt.wantError {
			t.Errorf("%s: error %v", tt.name, err)
			continue
		}
		if err != nil {
			continue
		}
		if v != tt.val || set != tt.set {
			t.Errorf("%s: got %q %v, want %q %v", tt.name, v, set, tt.val, tt.set)
		}
		out, err := condaStateRemove([]byte(tt.in), cvd)
		if err != nil || string(out) != tt.removed {
			t.Errorf("%s: remove gave %q, %v; want %q", tt.name, out, err, tt.removed)
		}
	}
}

// FuzzCondaState: whatever the state file holds, no panic; a removal gives
// valid JSON without the variable.
func FuzzCondaState(f *testing.F) {
	for _, s := range []string{`{"env_vars": {"CUDA_VISIBLE_DEVICES": "-1"}}`, `{"env_vars": {"A": "<&>"}, "n": 1e3}`, `{"env_vars": 3}`, `{`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = condaStateVar([]byte(s), cvd)
		out, err := condaStateRemove([]byte(s), cvd)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %q from %q", out, s)
		}
		if _, set, err := condaStateVar(out, cvd); err != nil || set {
			t.Fatalf("still set after removal: %q (%v)", out, err)
		}
	})
}
