package rules_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	goldenpkg "github.com/tfdoctor/doctor/internal/golden"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

// scenario.json: how to record a fake machine. The tree/ folder beside it is
// the machine's files (read with --root); NVML cannot exist there, so its
// answer is given as data; nvidia-smi is a real script beside it.
type scenario struct {
	Description string            `json:"description"`
	Env         map[string]string `json:"env"`
	NVML        host.NVML         `json:"nvml"`
	NvidiaSMI   string            `json:"nvidia_smi"`
	UID         *int              `json:"uid"`
	GIDs        []int             `json:"gids"`
	Disks       []host.Disk       `json:"disks"`
	// Collect names collectors to run beyond the lower links' (these
	// trees hold no Python unless they say so).
	Collect []string `json:"collect"`
	// DevMode is the permission of the tree's /dev entries (default
	// 0666). Git keeps no permission bits but the executable one, so the
	// test sets them before it reads the tree.
	DevMode string `json:"dev_mode"`
}

// fakeGPU answers with canned NVML data: the one part of a scenario that
// cannot be real without a GPU.
type fakeGPU struct{ n host.NVML }

func (f fakeGPU) Read(ctx context.Context) (host.NVML, error) { return f.n, nil }

// want is the expected outcome of a scenario, kept beside its snapshot.
type want struct {
	Status    string   `json:"status"`
	RootCause string   `json:"root_cause"`
	Findings  []string `json:"findings"` // "severity id cause [blocked_by=id]" for every non-ok finding
	// Causes are the independent causes, root cause first: "id cause".
	Causes []string `json:"causes"`
}

func TestMain(m *testing.M) {
	flag.Parse()
	host.SMITimeout = 2500 * time.Millisecond // generous: CI machines are loaded
	os.Exit(m.Run())
}

func scenarioDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../testdata/scenarios/*")
	if err != nil || len(dirs) < 12 {
		t.Fatalf("want at least 12 scenarios, found %d (%v)", len(dirs), err)
	}
	return dirs
}

// recordScenario gathers a scenario's tree the way `doctor --root` does.
func recordScenario(t *testing.T, dir string) *host.Snapshot {
	t.Helper()
	var sc scenario
	b, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("scenario.json: %v", err)
	}
	var environ []string
	for k, v := range sc.Env {
		environ = append(environ, k+"="+v)
	}
	// The examined user owns nothing in the tree, whoever checked it out:
	// permissions are decided by the "other" bits alone.
	uid := 424242
	if sc.UID != nil {
		uid = *sc.UID
	}
	gids := sc.GIDs
	if gids == nil {
		gids = []int{424242}
	}
	setDevModes(t, filepath.Join(dir, "tree", "dev"), sc.DevMode)
	opts := host.Options{
		Root: filepath.Join(dir, "tree"), Environ: environ, GPU: fakeGPU{sc.NVML}, UID: &uid, GIDs: gids,
		Version: "test", SelfPID: 1, Timeout: 10 * time.Second,
		Skip: skipUnlessAsked(sc.Collect, "python"),
		Now:  func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) },
	}
	if sc.NvidiaSMI != "" {
		abs, _ := filepath.Abs(filepath.Join(dir, sc.NvidiaSMI))
		opts.NvidiaSMI = abs
	}
	s := host.Gather(context.Background(), opts)
	// What varies from run to run or checkout to checkout.
	s.Root = "tree"
	for k, st := range s.Collectors {
		st.DurationMS = 0
		s.Collectors[k] = st
	}
	s.NvidiaSMI.DurationMS = 0
	if s.NvidiaSMI.Path != "" {
		s.NvidiaSMI.Path = filepath.Base(s.NvidiaSMI.Path)
	}
	if s.NvidiaSMI.TimedOut {
		s.NvidiaSMI.Error = "nvidia-smi did not answer in time and was killed"
	}
	// Owners are the checkout's, not the recorded machine's.
	for i := range s.Devices {
		s.Devices[i].UID, s.Devices[i].GID, s.Devices[i].Group = 0, 44, "video"
	}
	s.Disks = sc.Disks
	if s.Disks == nil {
		s.Disks = []host.Disk{{Path: "/", TotalBytes: 250 << 30, FreeBytes: 120 << 30}, {Path: "/tmp", TotalBytes: 250 << 30, FreeBytes: 120 << 30}}
	}
	return s
}

// setDevModes gives every entry of a tree's /dev the scenario's permission.
func setDevModes(t *testing.T, dev, mode string) {
	t.Helper()
	perm := os.FileMode(0o666)
	if mode != "" {
		v, err := strconv.ParseUint(mode, 8, 32)
		if err != nil {
			t.Fatalf("dev_mode %q: %v", mode, err)
		}
		perm = os.FileMode(v)
	}
	ents, err := os.ReadDir(dev)
	if err != nil {
		return // a tree without /dev
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			if err := os.Chmod(filepath.Join(dev, e.Name()), perm); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// skipUnlessAsked leaves out the upper-link collectors a scenario does not
// ask for: the lower-link machines are recorded without a Python
// environment (testdata/upper holds those).
func skipUnlessAsked(asked []string, names ...string) []string {
	var out []string
	for _, n := range names {
		found := false
		for _, a := range asked {
			found = found || a == n
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

func summarize(r *rules.Report) want {
	w := want{Status: r.Status, Findings: []string{}, Causes: []string{}}
	for _, c := range r.Causes {
		w.Causes = append(w.Causes, c.ID+" "+c.Cause)
	}
	if r.RootCause != nil {
		w.RootCause = r.RootCause.ID + " " + r.RootCause.Cause
	}
	for _, f := range r.Findings {
		if f.Severity == "ok" || f.Skipped {
			continue
		}
		line := fmt.Sprintf("%s %s %s", f.Severity, f.ID, f.Cause)
		if f.BlockedBy != nil {
			line += " blocked_by=" + *f.BlockedBy
		}
		w.Findings = append(w.Findings, line)
	}
	return w
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenpkg.Check(t, path, got)
}

func snapshotJSON(t *testing.T, s *host.Snapshot) []byte {
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestScenarioCollectors gathers each fake machine tree and compares the
// snapshot with the recorded one: the file collectors against --root trees.
func TestScenarioCollectors(t *testing.T) {
	for _, dir := range scenarioDirs(t) {
		dir := dir
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			s := recordScenario(t, dir)
			golden(t, filepath.Join(dir, "snapshot.json"), snapshotJSON(t, s))
		})
	}
}

// TestScenarioFindings evaluates each recorded snapshot and compares the
// findings with the expected ones kept beside it.
func TestScenarioFindings(t *testing.T) {
	dirs := scenarioDirs(t)
	for _, more := range []string{"../testdata/upper/*", "../testdata/snapshots/*"} {
		real, _ := filepath.Glob(more)
		dirs = append(dirs, real...)
	}
	for _, dir := range dirs {
		dir := dir
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s, err := host.LoadSnapshot(filepath.Join(dir, "snapshot.json"))
			if err != nil {
				t.Fatal(err)
			}
			r, err := rules.Evaluate(s, rules.Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.MarshalIndent(summarize(r), "", "  ")
			golden(t, filepath.Join(dir, "want.json"), append(b, '\n'))
		})
	}
}

// TestScenarioRootCauses pins the root cause each scenario exists for, so a
// careless -update cannot bless a wrong diagnosis.
func TestScenarioRootCauses(t *testing.T) {
	expect := map[string]string{
		"healthy-linux":                "",
		"healthy-wsl2":                 "",
		"no-driver":                    "driver_missing",
		"no-nvidia-gpu":                "no_nvidia_gpu",
		"nvml-mismatch":                "driver_library_mismatch",
		"nouveau-loaded":               "nouveau_conflict",
		"nouveau-no-driver":            "driver_missing",
		"uvm-missing":                  "uvm_module_missing",
		"cuda-visible-devices-minus-1": "cuda_visible_devices_hides_gpu",
		"wsl-linux-driver-inside":      "wsl_linux_driver_installed_inside_wsl",
		"wsl1":                         "wsl1_no_gpu",
		"gpu-memory-other-process":     "gpu_out_of_memory_other_process",
		"exclusive-process-held":       "compute_mode_prohibited",
		"xid-79":                       "gpu_hardware_xid_error",
		"nvidia-smi-hangs":             "driver_unresponsive",
		"container-no-gpu":             "container_runtime_no_gpu",
		"module-not-built":             "kernel_module_not_built",
		"secure-boot-refuses":          "secure_boot_unsigned_module",
		"device-permission":            "device_node_permission",
		"mig-no-instances":             "mig_misconfigured",
		"ecc-and-pcie":                 "gpu_ecc_errors",
		"throttled-disk-full":          "disk_full",
		// Recorded on the real H200: healthy up to Python, no TensorFlow.
		"../snapshots/h200-live": "tf_not_installed",
	}
	var names []string
	for n := range expect {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("../testdata/scenarios", name, "want.json"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var w want
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		got := ""
		if w.RootCause != "" {
			got = strings.Fields(w.RootCause)[1]
		}
		if got != expect[name] {
			t.Errorf("%s: root cause %q, want %q", name, got, expect[name])
		}
	}
}
