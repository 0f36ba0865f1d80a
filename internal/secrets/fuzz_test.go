package secrets

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScrub: whatever surrounds it, a credential planted in captured text
// does not survive Scrub, Scrub is idempotent (a report scrubbed twice is
// the report scrubbed once), and valid UTF-8 stays valid.
func FuzzScrub(f *testing.F) {
	for _, s := range []struct{ before, value, after string }{
		{"python train.py", "abc123def456", "--epochs 3"},
		{"I tensorflow/core/common_runtime/direct_session.cc:123]", "hunter2hunter2", "Created session"},
		{`{"user": "x",`, "s3cr3tvalue", "}"},
		{"git clone", "Zq9xT4mK2pL8", "https://github.com/x/y"},
		{"", "aaaaaaaa", ""},
		{"export CUDA_VISIBLE_DEVICES=-1", "0123456789", "\r\n> "},
	} {
		f.Add(s.before, s.value, s.after)
	}
	f.Fuzz(func(t *testing.T, before, value, after string) {
		once := Scrub(before + value + after)
		if Scrub(once) != once {
			t.Fatalf("not idempotent on %q: %q then %q", before+value+after, once, Scrub(once))
		}
		if utf8.ValidString(before+value+after) && !utf8.ValidString(once) {
			t.Fatalf("valid UTF-8 in, invalid out: %q", once)
		}
		// A value of the shape people use for passwords and tokens,
		// planted where the scrubber must see it.
		if len(value) < 8 || strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
			return
		}
		if strings.Contains(before, value) || strings.Contains(after, value) || strings.Contains(Placeholder, value) {
			return
		}
		for _, planted := range []string{
			"HF_TOKEN=" + value,
			"--api-key " + value,
			"--wandb-key=" + value,
			`"password": "` + value + `"`,
			"https://user:" + value + "@pypi.example.com/simple",
			"Authorization: Bearer " + value,
			"ghp_" + strings.Repeat(value, 3),
			"hf_" + strings.Repeat(value, 3),
		} {
			text := before + " " + planted + " " + after
			if out := Scrub(text); strings.Contains(out, value) {
				t.Fatalf("the secret %q survives in %q\nscrubbed: %q", value, text, out)
			}
		}
	})
}
