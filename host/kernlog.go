package host

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/disk"
	"golang.org/x/sys/unix"
)

// kernelLogFiles are read under --root (and on machines where the ring
// buffer is closed to this user, as a fallback).
var kernelLogFiles = []string{"/var/log/kern.log", "/var/log/dmesg", "/var/log/messages"}

// collectKernelLog reads the kernel ring buffer (syslog(2) READ_ALL, which
// needs CAP_SYSLOG where kernel.dmesg_restrict is 1) and keeps the lines that
// concern NVIDIA.
func collectKernelLog(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	var kl KernelLog
	text := ""
	if g.live() {
		buf := make([]byte, 1<<20)
		n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
		if err == nil {
			text = string(buf[:n])
			kl.Readable, kl.Source = true, "kernel ring buffer"
		} else {
			kl.Error = "kernel ring buffer: " + err.Error()
			if errors.Is(err, unix.EPERM) {
				kl.Error += " (kernel.dmesg_restrict is set; run doctor with sudo to read Xid errors)"
			}
		}
	}
	if text == "" {
		for _, f := range kernelLogFiles {
			if t, err := g.readFile(f); err == nil {
				text = t
				kl.Readable, kl.Source, kl.Error = true, f, ""
				break
			}
		}
	}
	if kl.Readable {
		kl.Lines, kl.Xids = ParseKernelLog(text)
	} else if kl.Error == "" {
		kl.Error = "no kernel log found"
	}
	return func(s *Snapshot) { s.KernelLog = kl }, nil
}

var (
	kernelLineRE = regexp.MustCompile(`(?i)NVRM|nvidia|nouveau|module verification failed|Lockdown|Loading of unsigned module|Required key not available|Xid`)
	// "NVRM: Xid (PCI:0000:01:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
	xidRE = regexp.MustCompile(`NVRM: Xid \((?:PCI:)?([0-9A-Fa-f:.]+)\): (\d+),\s*(.*)`)
	// Leading "<6>[  123.456789] " or "[  123.456789] " prefixes.
	kernelPrefixRE = regexp.MustCompile(`^(<\d+>)?(\[\s*[0-9.]+\]\s*)?`)
)

// MaxKernelLines bounds the kernel log lines kept in a snapshot.
const MaxKernelLines = 200

// ParseKernelLog keeps the NVIDIA-related lines of a kernel log (newest
// MaxKernelLines) and extracts every Xid event.
func ParseKernelLog(text string) ([]string, []XidEvent) {
	var lines []string
	var xids []XidEvent
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(kernelPrefixRE.ReplaceAllString(strings.TrimRight(raw, "\r"), ""))
		if line == "" || !kernelLineRE.MatchString(line) {
			continue
		}
		if len(line) > 500 {
			line = line[:500]
		}
		lines = append(lines, line)
		if m := xidRE.FindStringSubmatch(line); m != nil {
			code, err := strconv.Atoi(m[2])
			if err == nil {
				xids = append(xids, XidEvent{PCI: m[1], Code: code, Text: strings.TrimSpace(m[3])})
			}
		}
	}
	if len(lines) > MaxKernelLines {
		lines = lines[len(lines)-MaxKernelLines:]
	}
	if len(xids) > MaxKernelLines {
		xids = xids[len(xids)-MaxKernelLines:]
	}
	return lines, xids
}

// collectDisks reads free space where pip, conda and TensorFlow write: /,
// /tmp and the home folder.
func collectDisks(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	paths := []string{"/", "/tmp"}
	if h := g.getenv("HOME"); h != "" && h != "/" {
		paths = append(paths, h)
	}
	var disks []Disk
	seen := map[string]bool{}
	for _, p := range paths {
		p = filepath.Clean(p)
		if seen[p] {
			continue
		}
		seen[p] = true
		d := Disk{Path: p}
		u, err := disk.UsageWithContext(ctx, g.path(p))
		if err != nil {
			d.Error = err.Error()
		} else {
			d.TotalBytes, d.FreeBytes = u.Total, u.Free
			d.FSType = u.Fstype
		}
		disks = append(disks, d)
	}
	return func(s *Snapshot) { s.Disks = disks }, nil
}
