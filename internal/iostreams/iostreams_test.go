package iostreams

import "testing"

func TestColorFromEnv(t *testing.T) {
	cases := []struct {
		env  map[string]string
		tty  bool
		want bool
	}{
		{nil, true, true},
		{nil, false, false},
		{map[string]string{"NO_COLOR": "1"}, true, false},
		{map[string]string{"NO_COLOR": ""}, true, true},
		{map[string]string{"CLICOLOR": "0"}, true, false},
		{map[string]string{"CLICOLOR_FORCE": "1"}, false, true},
		{map[string]string{"CLICOLOR_FORCE": "0"}, false, false},
		{map[string]string{"NO_COLOR": "x", "CLICOLOR_FORCE": "1"}, true, false},
		{map[string]string{"TERM": "dumb"}, true, false},
	}
	for _, c := range cases {
		get := func(k string) string { return c.env[k] }
		if got := ColorFromEnv(get, c.tty); got != c.want {
			t.Errorf("env %v tty %v: colour %v, want %v", c.env, c.tty, got, c.want)
		}
	}
}
