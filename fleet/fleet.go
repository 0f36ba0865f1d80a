// Package fleet summarises many machines' doctor reports (doctor.report/v1
// JSON files, one per machine) into what an operator asks first: how many
// machines are broken, grouped by root cause with their hosts; what differs
// between the healthy and the broken ones (driver, CUDA, TensorFlow,
// Python, GPU model); which files could not be read. The summary is
// doctor.fleet/v1 JSON, text or Markdown.
package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// Schema is the version of the fleet summary's JSON shape.
const Schema = "doctor.fleet/v1"

// ReportSchema is the only report schema read.
const ReportSchema = "doctor.report/v1"

// MaxReportBytes bounds one report file; a larger file is named as
// unreadable (a report is about 20 KB; a ladder run's about 120 KB).
const MaxReportBytes = 16 << 20

// RedactedHost is how a redacted report names its host.
const RedactedHost = "<host>"

// Status values of a machine, as its report says.
const (
	StatusOK      = "ok"
	StatusWarning = "warning"
	StatusError   = "error"
)

// Machine is one machine: the newest readable report of its host.
type Machine struct {
	// Host is the report's summary.hostname; RedactedHost for a redacted
	// report, "" when the report names none (a log read by explain).
	Host        string    `json:"host"`
	File        string    `json:"file"`
	CollectedAt time.Time `json:"collected_at"`
	Status      string    `json:"status"`
	// RootCause is the root cause's label ("" when nothing is wrong);
	// RootCauseID the finding's ID.
	RootCause   string `json:"root_cause"`
	RootCauseID string `json:"root_cause_id,omitempty"`
	// Causes are every independent cause's label, the root cause first.
	Causes []string `json:"causes"`
	// Facts are the facts compared between healthy and broken machines
	// (Facts keys); "" when the report does not say.
	Facts map[string]string `json:"facts"`
}

// Broken reports whether the machine's report has an error-severity
// finding.
func (m *Machine) Broken() bool { return m.Status == StatusError }

// Facts compared between healthy and broken machines, in this order.
var Facts = []string{"driver", "cuda", "tensorflow", "python", "gpu"}

// Counts is how many machines there are, by status.
type Counts struct {
	Total   int `json:"total"`
	Broken  int `json:"broken"`  // status error
	Warning int `json:"warning"` // status warning
	Healthy int `json:"healthy"` // status ok
}

// Group is the machines that share a root cause.
type Group struct {
	Cause string `json:"cause"`
	// Status is the worst status among the group's machines: error for
	// broken machines, warning when the cause is only a warning.
	Status string   `json:"status"`
	Count  int      `json:"count"`
	Hosts  []string `json:"hosts"`
}

// Difference is one fact whose values are not spread alike among healthy
// and broken machines.
type Difference struct {
	Fact   string       `json:"fact"`
	Values []ValueCount `json:"values"`
}

// ValueCount is how many healthy and broken machines have one value of a
// fact ("" is "unknown").
type ValueCount struct {
	Value   string `json:"value"`
	Healthy int    `json:"healthy"`
	Broken  int    `json:"broken"`
}

// Unreadable is a file that is not a readable doctor report, and why.
type Unreadable struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// Summary is the fleet summary (doctor.fleet/v1).
type Summary struct {
	Schema   string `json:"schema"`
	Machines Counts `json:"machines"`
	// ByRootCause groups the machines that have a root cause, broken
	// machines' causes first, then by count.
	ByRootCause []Group `json:"by_root_cause"`
	// Differences are the facts whose values differ between healthy
	// (status ok or warning) and broken machines.
	Differences []Difference `json:"differences"`
	Unreadable  []Unreadable `json:"unreadable"`
	// Reports is how many files were read; Superseded how many older
	// reports of a host that has a newer one were left out; Redacted how
	// many machines' reports were redacted (each counted as a machine of
	// its own, named <host>); NoHost how many name no host at all.
	Reports    int `json:"reports"`
	Superseded int `json:"superseded"`
	Redacted   int `json:"redacted"`
	NoHost     int `json:"no_host"`
	// List is every machine, broken first, then by host.
	List []Machine `json:"list"`
}

// report is the part of a doctor.report/v1 file the summary reads.
type report struct {
	Schema    string `json:"schema"`
	Status    string `json:"status"`
	RootCause *struct {
		ID    string `json:"id"`
		Cause string `json:"cause"`
	} `json:"root_cause"`
	Causes []struct {
		Cause string `json:"cause"`
	} `json:"causes"`
	Summary *struct {
		Driver     string `json:"driver"`
		CUDADriver string `json:"cuda_driver"`
		Python     string `json:"python"`
		TensorFlow string `json:"tensorflow"`
		GPUs       []struct {
			Name string `json:"name"`
		} `json:"gpus"`
		Hostname    string    `json:"hostname"`
		CollectedAt time.Time `json:"collected_at"`
	} `json:"summary"`
}

// Files expands paths into the report files to read: a file as given, a
// folder's *.json files at any depth (links to folders are not followed),
// in lexical order. A path that cannot be listed is returned as
// unreadable.
func Files(paths []string) ([]string, []Unreadable) {
	var files []string
	var bad []Unreadable
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			bad = append(bad, Unreadable{File: p, Error: errText(err)})
			continue
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				bad = append(bad, Unreadable{File: path, Error: errText(err)})
				if d != nil && d.IsDir() && path != p {
					return fs.SkipDir
				}
				return nil
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			bad = append(bad, Unreadable{File: p, Error: errText(err)})
		}
	}
	return files, bad
}

// errText is an error without the path the caller already names.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ReadFile reads one report into a machine.
func ReadFile(path string) (Machine, error) {
	var buf []byte
	return readFile(path, &buf)
}

// readFile reads one report, reusing *buf (a worker reads thousands).
func readFile(path string, buf *[]byte) (Machine, error) {
	f, err := os.Open(path)
	if err != nil {
		return Machine{}, errors.New(errText(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Machine{}, errors.New(errText(err))
	}
	if !st.Mode().IsRegular() {
		return Machine{}, errors.New("not a regular file")
	}
	if st.Size() > MaxReportBytes {
		return Machine{}, fmt.Errorf("larger than %d MiB: not a doctor report", MaxReportBytes>>20)
	}
	// Read what Stat promised plus one byte, to see a file that grew.
	want := int(st.Size()) + 1
	if cap(*buf) < want {
		*buf = make([]byte, want+want/4)
	}
	b := (*buf)[:want]
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Machine{}, errors.New(errText(err))
	}
	if n == want {
		return Machine{}, errors.New("changed while being read")
	}
	m, err := Parse(b[:n])
	m.File = path
	return m, err
}

// Parse reads one report.
func Parse(b []byte) (Machine, error) {
	var r report
	if len(bytes.TrimSpace(b)) == 0 {
		return Machine{}, errors.New("empty file")
	}
	err := topLevel(b, func(key string, val []byte) error {
		var dst any
		switch key {
		case "schema":
			dst = &r.Schema
		case "status":
			dst = &r.Status
		case "root_cause":
			dst = &r.RootCause
		case "causes":
			dst = &r.Causes
		case "summary":
			dst = &r.Summary
		default:
			return nil
		}
		if err := json.Unmarshal(val, dst); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return fmt.Errorf("not JSON (in %q: %v)", key, err)
			}
			return fmt.Errorf("not a doctor report (%s: %v)", key, err)
		}
		return nil
	})
	if err != nil {
		return Machine{}, err
	}
	if r.Schema != ReportSchema {
		if r.Schema == "" {
			return Machine{}, fmt.Errorf("not a doctor report (no schema; want %s)", ReportSchema)
		}
		return Machine{}, fmt.Errorf("schema %q, not %s", r.Schema, ReportSchema)
	}
	switch r.Status {
	case StatusOK, StatusWarning, StatusError:
	default:
		return Machine{}, fmt.Errorf("status %q is none of ok, warning, error", r.Status)
	}
	m := Machine{Status: r.Status, Causes: []string{}, Facts: map[string]string{}}
	for _, f := range Facts {
		m.Facts[f] = ""
	}
	if r.RootCause != nil {
		m.RootCause, m.RootCauseID = r.RootCause.Cause, r.RootCause.ID
	}
	for _, c := range r.Causes {
		m.Causes = append(m.Causes, c.Cause)
	}
	if len(m.Causes) == 0 && m.RootCause != "" {
		m.Causes = []string{m.RootCause} // a report from before "causes"
	}
	if s := r.Summary; s != nil {
		m.Host, m.CollectedAt = s.Hostname, s.CollectedAt
		m.Facts["driver"] = s.Driver
		m.Facts["cuda"] = s.CUDADriver
		m.Facts["tensorflow"] = s.TensorFlow
		m.Facts["python"] = s.Python
		var models []string
		for _, g := range s.GPUs {
			models = append(models, g.Name)
		}
		m.Facts["gpu"] = gpuModels(models)
	}
	return m, nil
}

// gpuModels names a machine's GPUs: "NVIDIA H200", "2x NVIDIA H200",
// "NVIDIA A100 + NVIDIA T4"; "" when NVML saw none.
func gpuModels(names []string) string {
	count := map[string]int{}
	var order []string
	for _, n := range names {
		if count[n] == 0 {
			order = append(order, n)
		}
		count[n]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = n
		if count[n] > 1 {
			parts[i] = fmt.Sprintf("%dx %s", count[n], n)
		}
	}
	return strings.Join(parts, " + ")
}

// Read reads every report under paths, concurrently, and summarises them.
func Read(paths []string) *Summary {
	files, bad := Files(paths)
	machines := make([]Machine, len(files))
	errs := make([]error, len(files))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(files) {
		workers = len(files)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range next {
				machines[i], errs[i] = readFile(files[i], &buf)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	var ok []Machine
	for i := range files {
		if errs[i] != nil {
			bad = append(bad, Unreadable{File: files[i], Error: errs[i].Error()})
			continue
		}
		ok = append(ok, machines[i])
	}
	return Summarize(ok, bad)
}

// Summarize builds the summary of readable reports and unreadable files.
// A host with several reports counts once, with its newest; redacted
// reports and reports without a host name each count as a machine.
func Summarize(reports []Machine, unreadable []Unreadable) *Summary {
	s := &Summary{Schema: Schema, Reports: len(reports), ByRootCause: []Group{}, Differences: []Difference{},
		Unreadable: append([]Unreadable{}, unreadable...), List: []Machine{}}
	newest := map[string]int{}
	for _, m := range reports {
		switch m.Host {
		case RedactedHost:
			s.Redacted++
		case "":
			s.NoHost++
		default:
			if i, seen := newest[m.Host]; seen {
				s.Superseded++
				if !m.CollectedAt.After(s.List[i].CollectedAt) {
					continue
				}
				s.List[i] = m
				continue
			}
			newest[m.Host] = len(s.List)
		}
		s.List = append(s.List, m)
	}
	sort.SliceStable(s.List, func(i, j int) bool {
		a, b := &s.List[i], &s.List[j]
		if a.Broken() != b.Broken() {
			return a.Broken()
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		return a.File < b.File
	})
	groups := map[string]*Group{}
	for i := range s.List {
		m := &s.List[i]
		s.Machines.Total++
		switch m.Status {
		case StatusError:
			s.Machines.Broken++
		case StatusWarning:
			s.Machines.Warning++
		default:
			s.Machines.Healthy++
		}
		if m.RootCause == "" {
			continue
		}
		g := groups[m.RootCause]
		if g == nil {
			g = &Group{Cause: m.RootCause, Status: m.Status, Hosts: []string{}}
			groups[m.RootCause] = g
		}
		if m.Broken() {
			g.Status = StatusError
		}
		g.Count++
		g.Hosts = append(g.Hosts, HostName(m))
	}
	for _, g := range groups {
		sort.Strings(g.Hosts)
		s.ByRootCause = append(s.ByRootCause, *g)
	}
	sort.Slice(s.ByRootCause, func(i, j int) bool {
		a, b := s.ByRootCause[i], s.ByRootCause[j]
		if (a.Status == StatusError) != (b.Status == StatusError) {
			return a.Status == StatusError
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Cause < b.Cause
	})
	s.Differences = differences(s.List)
	sort.Slice(s.Unreadable, func(i, j int) bool { return s.Unreadable[i].File < s.Unreadable[j].File })
	return s
}

// HostName is how a machine is named in the summary: its host, or the
// report's file when the report names no host.
func HostName(m *Machine) string {
	if m.Host == "" {
		return "(no host: " + m.File + ")"
	}
	return m.Host
}

// differences lists, for each fact, its values among healthy and broken
// machines when they are not spread alike: some value is found on one
// side only. Nothing is listed without both healthy and broken machines.
func differences(list []Machine) []Difference {
	out := []Difference{}
	for _, fact := range Facts {
		counts := map[string]*ValueCount{}
		healthy, broken := 0, 0
		for i := range list {
			m := &list[i]
			v := m.Facts[fact]
			c := counts[v]
			if c == nil {
				c = &ValueCount{Value: v}
				counts[v] = c
			}
			if m.Broken() {
				c.Broken++
				broken++
			} else {
				c.Healthy++
				healthy++
			}
		}
		if healthy == 0 || broken == 0 {
			continue
		}
		differs := false
		var values []ValueCount
		for _, c := range counts {
			values = append(values, *c)
			differs = differs || c.Healthy == 0 || c.Broken == 0
		}
		if !differs {
			continue
		}
		sort.Slice(values, func(i, j int) bool {
			a, b := values[i], values[j]
			if a.Broken+a.Healthy != b.Broken+b.Healthy {
				return a.Broken+a.Healthy > b.Broken+b.Healthy
			}
			return a.Value < b.Value
		})
		out = append(out, Difference{Fact: fact, Values: values})
	}
	return out
}

// ExitCode is 0 when every machine is healthy or only warned, 1 when one
// is broken, 2 when no report could be read.
func (s *Summary) ExitCode() int {
	switch {
	case s.Machines.Total == 0:
		return 2
	case s.Machines.Broken > 0:
		return 1
	}
	return 0
}
