package host

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tfdoctor/doctor/internal/run"
)

// SMITimeout bounds one nvidia-smi run: it can block inside the driver.
var SMITimeout = 3 * time.Second

// collectNvidiaSMI runs `nvidia-smi -L` once, only to see that it works and to
// keep its error text; every GPU fact comes from NVML.
func collectNvidiaSMI(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	c := Command{Args: []string{"-L"}}
	path, err := run.LookPath("nvidia-smi", g.getenv("PATH"))
	if g.opts.NvidiaSMI != "" {
		path, err = run.LookPath(g.opts.NvidiaSMI, g.getenv("PATH"))
	}
	if err != nil && g.opts.NvidiaSMI == "" {
		// Root on WSL2 does not have /usr/lib/wsl/lib on PATH.
		for _, p := range []string{"/usr/lib/wsl/lib/nvidia-smi", "/usr/bin/nvidia-smi"} {
			if isExec(p) {
				path, err = p, nil
				break
			}
		}
	}
	if err != nil {
		c.Error = "nvidia-smi not found on PATH"
		return func(s *Snapshot) { s.NvidiaSMI = c }, nil
	}
	c.Path, c.Found = path, true
	timeout := SMITimeout
	cut := false
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl) - 50*time.Millisecond
		cut = true
	}
	res := run.Run(ctx, run.Cmd{Path: path, Args: c.Args, Timeout: timeout, MaxOutput: 64 << 10})
	c.ExitCode = res.ExitCode
	c.DurationMS = float64(res.Duration.Microseconds()) / 1000
	c.TimedOut = res.TimedOut || errors.Is(res.Err, context.DeadlineExceeded)
	if res.Err != nil && !c.TimedOut {
		c.Error = res.Err.Error()
	}
	if c.TimedOut {
		c.Error = "nvidia-smi did not answer within " + timeout.Round(time.Millisecond).String() + " and was killed"
	}
	c.Output = headLines(string(res.Stdout)+string(res.Stderr), 8)
	if c.TimedOut && cut {
		// Stopped by the run's --timeout before its own deadline: that
		// proves nothing about the driver.
		c.Error = "nvidia-smi was stopped after " + timeout.Round(time.Millisecond).String() + ": the run's --timeout left no more time"
		return func(s *Snapshot) { s.NvidiaSMI = c }, errors.New(c.Error)
	}
	return func(s *Snapshot) { s.NvidiaSMI = c }, nil
}

func headLines(text string, n int) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r ")
		if line == "" {
			continue
		}
		if len(line) > 300 {
			line = line[:300] + "…"
		}
		out = append(out, line)
		if len(out) == n {
			break
		}
	}
	return out
}
