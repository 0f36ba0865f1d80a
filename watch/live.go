package watch

import (
	"fmt"
	"io"
	"strings"
)

// Live shows the samples as they come: on a terminal, one line per GPU and
// one for the job, redrawn in place; otherwise one plain line per sample,
// for logs.
type Live struct {
	w     io.Writer
	tty   bool
	drawn int // lines drawn last time on a terminal
}

// NewLive writes to w (standard error); tty says whether w is a terminal.
func NewLive(w io.Writer, tty bool) *Live { return &Live{w: w, tty: tty} }

// Update shows one sample.
func (l *Live) Update(s *Series, smp Sample) {
	if !l.tty {
		fmt.Fprintln(l.w, PlainLine(s, smp))
		return
	}
	lines := TerminalLines(s, smp)
	var b strings.Builder
	if l.drawn > 0 {
		fmt.Fprintf(&b, "\033[%dA", l.drawn) // back to the first line
	}
	for _, line := range lines {
		b.WriteString("\r\033[K" + line + "\n")
	}
	l.drawn = len(lines)
	_, _ = io.WriteString(l.w, b.String())
}

// PlainLine is one sample on one line.
func PlainLine(s *Series, smp Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "watch %5.1fs", smp.Elapsed)
	if s.GPUError != "" {
		b.WriteString(" | GPU unreadable")
	}
	if smp.GPUError != "" {
		fmt.Fprintf(&b, " | gpu error: %s", smp.GPUError)
	}
	for _, g := range smp.GPUs {
		fmt.Fprintf(&b, " | gpu%d util %s mem %s sm %s %s", g.Index, optPct(g.Util), memText(s, g), optUnit(g.SMClockMHz, "MHz"), optW(g.PowerW))
		if on := jobOn(s, &smp, g.Index); s.PID > 0 && on {
			b.WriteString(" job")
		}
	}
	b.WriteString(" | " + jobText(smp))
	fmt.Fprintf(&b, " | sys cpu %.0f%% iowait %.0f%%", smp.System.CPUPercent, smp.System.IOWaitPercent)
	return b.String()
}

// TerminalLines is one sample as the lines of the live view.
func TerminalLines(s *Series, smp Sample) []string {
	var out []string
	if s.GPUError != "" {
		out = append(out, "GPU unreadable: "+s.GPUError)
	}
	if smp.GPUError != "" {
		out = append(out, "GPU error: "+smp.GPUError)
	}
	for _, g := range smp.GPUs {
		line := fmt.Sprintf("GPU %d  util %4s  mem %s  SM %s  %s  %s", g.Index, optPct(g.Util), memText(s, g), optUnit(g.SMClockMHz, "MHz"), optW(g.PowerW), optUnit(g.TempC, "°C"))
		if n := len(g.Procs); n > 0 {
			line += fmt.Sprintf("  %d proc", n)
		}
		if s.PID > 0 && jobOn(s, &smp, g.Index) {
			line += "  ← job"
		}
		out = append(out, line)
	}
	who := "GPU procs"
	if s.PID > 0 {
		who = fmt.Sprintf("PID %d", s.PID)
	}
	out = append(out, fmt.Sprintf("%s  %s  · system cpu %.0f%% iowait %.0f%%  · %.1f/%s s",
		who, jobText(smp), smp.System.CPUPercent, smp.System.IOWaitPercent, smp.Elapsed, fmtFloat(s.Duration)))
	return out
}

func jobText(smp Sample) string {
	j := smp.Job
	t := fmt.Sprintf("job cpu %.0f%% (thread %.0f%%) %d proc %d thr read %.1f MB/s", j.CPUPercent, j.BusiestThreadPercent, len(j.PIDs), j.Threads, j.ReadBps/1e6)
	if j.IOWaitPercent != nil {
		t += fmt.Sprintf(" iowait %.0f%%", *j.IOWaitPercent)
	}
	return t
}

func memText(s *Series, g GPUSample) string {
	if g.MemUsedMiB == nil {
		return "-"
	}
	total := uint64(0)
	for _, info := range s.Inventory.GPUs {
		if info.Index == g.Index {
			total = info.MemoryTotalMiB
		}
	}
	if total == 0 {
		return fmt.Sprintf("%.1f GiB", float64(*g.MemUsedMiB)/1024)
	}
	return fmt.Sprintf("%.1f/%.1f GiB", float64(*g.MemUsedMiB)/1024, float64(total)/1024)
}

func optPct(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%d%%", *v)
}

func optUnit(v *int, unit string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%d %s", *v, unit)
}

func optW(v *float64) string {
	if v == nil {
		return "- W"
	}
	return fmt.Sprintf("%.0f W", *v)
}
