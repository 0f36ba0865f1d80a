package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/host"
)

// Values a report must never show (credentials), and values a redacted
// report must not show (identities).
var (
	leakSecrets = []string{"ngcsecret1", "hfsecretvalue2", "urlsecret3", "wandbsecret4", "urlsecret5", "bearersecret6"}
	leakIDs     = []string{
		"user ab", "/home/ab", "(ab)", "gpu-node-7", "91faaf4a", "9cbf", "1654124009079", "1324021234567",
		"10.20.30.40", "00:1b:21:3a:4f:5e", "fe80::1ff:fe23:4567:890a", "(cd,", "(cd)", "/home/cd",
	}
	// Another user's command line shows in no format, redacted or not.
	leakOthers = []string{"train.py", "db.example.com"}
)

// secretSnapshot is the recorded H200 snapshot full of credentials and
// identities: an environment with secrets (as a snapshot of an older
// doctor could hold), another user's GPU process with its full command
// line, nvidia-smi output with a serial number, addresses and a token.
func secretSnapshot(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/snapshots/h200-live/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.ReadSnapshot(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	s.Platform.User, s.Platform.Home, s.Platform.Hostname = "ab", "/home/ab", "gpu-node-7.corp.example"
	s.Env["NVIDIA_NGC_PASS"] = "ngcsecret1"
	s.Env["HF_TOKEN"] = "hfsecretvalue2"
	s.Env["PYTHONPATH"] = "https://ghost:urlsecret3@example.com/lib:/home/ab/lib"
	g := &s.NVML.GPUs[0]
	g.MemoryUsedMiB = 100000
	g.Processes = append(g.Processes, host.GPUProcess{PID: 4242, UsedMiB: 99000, User: "cd",
		Command: "python train.py --wandb-key=wandbsecret4 --data https://u:urlsecret5@db.example.com --out /home/cd/run (cd)"})
	s.NvidiaSMI.ExitCode = 15
	s.NvidiaSMI.Output = []string{
		"Unable to determine the device handle for GPU-91faaf4a-9cbf-8598-1b86-a06954d2532f: Unknown Error",
		"    Serial Number                         : 1324021234567",
		"host gpu-node-7 user ab addr 10.20.30.40 fe80::1ff:fe23:4567:890a ether 00:1b:21:3a:4f:5e",
		"Authorization: Bearer bearersecret6",
	}
	s.NvidiaSMI.Error = "nvidia-smi exited with status 15"
	var out bytes.Buffer
	if err := s.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNoSecretReachesAnyFormat: credentials from the environment, a
// process list or captured output reach no format, redacted or not; with
// redaction (Markdown's default, --redact elsewhere) no identity does
// either: short user names, a GPU UUID even cut short, serial numbers in
// captured text, IP and MAC addresses, the host name. doctor snapshot
// --redact redacts too.
func TestNoSecretReachesAnyFormat(t *testing.T) {
	snap := secretSnapshot(t)
	check := func(t *testing.T, what, out string, ids bool) {
		t.Helper()
		for _, s := range append(leakSecrets, leakOthers...) {
			if strings.Contains(out, s) {
				t.Errorf("%s shows the secret %q", what, s)
			}
		}
		if !ids {
			return
		}
		for _, s := range leakIDs {
			if strings.Contains(out, s) {
				i := strings.Index(out, s)
				t.Errorf("%s shows %q: …%s…", what, s, out[max(0, i-60):min(len(out), i+len(s)+40)])
			}
		}
	}
	// The values do reach the report: unredacted JSON shows the identities.
	_, plain, _ := doctorArgs(t, "--from", snap, "--format", "json", "-v")
	for _, s := range []string{"10.20.30.40", "1324021234567", "(cd, 96.7 GiB, python)"} {
		if !strings.Contains(plain, s) {
			t.Errorf("the unredacted report does not show %q: the test proves nothing for it", s)
		}
	}
	check(t, "json", plain, false)
	for _, f := range []string{"text", "json", "markdown", "prometheus"} {
		_, out, errOut := doctorArgs(t, "--from", snap, "--format", f, "-v")
		check(t, f, out+errOut, f == "markdown")
		_, out, errOut = doctorArgs(t, "--from", snap, "--format", f, "-v", "--redact")
		check(t, f+" --redact", out+errOut, true)
	}
	// The same values pasted into doctor explain.
	log, _ := os.ReadFile(snap)
	for _, f := range []string{"text", "json", "markdown", "prometheus"} {
		out, errOut, _ := runExplainCLI(t, string(log), "explain", "--format", f, "-v", "--redact")
		check(t, "explain "+f+" --redact", out+errOut, true)
	}
}

// TestSnapshotKeepsSecrets: doctor snapshot never writes a credential
// from the environment, and --redact hides the host and user.
func TestSnapshotKeepsSecrets(t *testing.T) {
	t.Setenv("NVIDIA_NGC_PASS", "ngcsecret1")
	t.Setenv("HF_TOKEN", "hfsecretvalue2")
	t.Setenv("PYTHONPATH", "https://ghost:urlsecret3@example.com/lib")
	t.Setenv("CUDA_VISIBLE_DEVICES", "0")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "hostname"), []byte("gpu-node-7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := doctorArgs(t, "snapshot", "--root", root, "--quick")
	if !strings.Contains(out, `"CUDA_VISIBLE_DEVICES": "0"`) || !strings.Contains(out, "https://<redacted>@example.com/lib") {
		t.Errorf("the snapshot lost what doctor needs: %s %s", out, errOut)
	}
	for _, s := range leakSecrets {
		if strings.Contains(out, s) {
			t.Errorf("snapshot shows %q", s)
		}
	}
	if !strings.Contains(out, "gpu-node-7") {
		t.Errorf("the snapshot lost the host name")
	}
	_, red, _ := doctorArgs(t, "snapshot", "--root", root, "--quick", "--redact")
	if strings.Contains(red, "gpu-node-7") || !strings.Contains(red, `"hostname": "<host>"`) {
		t.Errorf("snapshot --redact does not hide the host name: %s", red)
	}
	if _, err := host.ReadSnapshot(strings.NewReader(red)); err != nil {
		t.Errorf("snapshot --redact is not a snapshot any more: %v", err)
	}
	for _, s := range leakSecrets {
		if strings.Contains(red, s) {
			t.Errorf("snapshot --redact shows %q", s)
		}
	}
}

func doctorArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return doctor(t, false, "", args...)
}
