package host

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcessCommandsKeepSecrets: a real process of another user shows
// only its program's name (its arguments hold that user's tokens); one of
// the user running doctor shows its command line without the credentials.
func TestProcessCommandsKeepSecrets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the other user's process is started as nobody")
	}
	start := func(cred *syscall.Credential) *exec.Cmd {
		c := exec.Command("sh", "-c", "sleep 30", "train.py", "--wandb-key=wandbsecret", "https://ghost:urlsecret@example.com/data")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	other := start(&syscall.Credential{Uid: 65534, Gid: 65534})
	mine := start(nil)
	time.Sleep(100 * time.Millisecond) // let exec finish: the command line is the new program's
	g := newGatherer(Options{})
	user, cmd := g.processOwner(context.Background(), other.Process.Pid)
	if user != "nobody" && user != "65534" || cmd != "sh" {
		t.Errorf("another user's process: user %q, command %q; want only the program's name", user, cmd)
	}
	_, cmd = g.processOwner(context.Background(), mine.Process.Pid)
	if !strings.Contains(cmd, "sh -c sleep 30 train.py") || strings.Contains(cmd, "wandbsecret") || strings.Contains(cmd, "urlsecret") {
		t.Errorf("own process: command %q", cmd)
	}
}
