package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tfdoctor/doctor/internal/engines"
)

// promtoolCheck runs `promtool check metrics` on an exposition.
func promtoolCheck(t *testing.T, promtool, name string, b []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(b)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics (%s): %v\n%s\n--- input:\n%s", name, err, out, b)
	}
}

// TestPromtoolEveryOutput: every Prometheus exposition doctor can write
// (a live --quick run on this machine, every recorded machine, a log
// through explain, doctor watch) passes `promtool check metrics`.
func TestPromtoolEveryOutput(t *testing.T) {
	promtool := engines.Require(t, "prometheus", "promtool")
	dir := t.TempDir()

	live := filepath.Join(dir, "live.prom")
	code, _, errOut := runDoctor(t, "", "--quick", "--format", "prometheus", "-o", live)
	if code != exitOK && code != exitFindings {
		t.Fatalf("doctor --quick --format prometheus -o: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(live)
	if err != nil || !bytes.Contains(b, []byte("doctor_last_run_timestamp_seconds ")) {
		t.Fatalf("live exposition: %v\n%s", err, b)
	}
	promtoolCheck(t, promtool, "live --quick", b)

	snaps, _ := filepath.Glob("../../testdata/*/*/snapshot.json")
	if len(snaps) < 20 {
		t.Fatalf("only %d recorded snapshots found", len(snaps))
	}
	for _, s := range snaps {
		_, out, errOut := runDoctor(t, "", "--from", s, "--format", "prometheus")
		if out == "" {
			t.Errorf("%s: no exposition: %s", s, errOut)
			continue
		}
		promtoolCheck(t, promtool, s, []byte(out))
	}

	_, out, _ := runDoctor(t, "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n", "explain", "--format", "prometheus")
	promtoolCheck(t, promtool, "explain", []byte(out))

	pid := sleeper(t)
	gpus := withGPUs(oneGPU{busyPID: pid})
	_, out, _ = runCLIWith(gpus, "watch", "--pid", strconv.Itoa(pid), "--duration", "400ms", "--interval", "200ms", "-q", "--format", "prometheus")
	promtoolCheck(t, promtool, "watch", []byte(out))
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestNodeExporterScrapesDoctor: doctor --quick --format prometheus -o
// writes into a textfile-collector folder, a real node_exporter on
// 127.0.0.1 serves doctor's series, and Prometheus's parser reads them
// back. The exporter is stopped at the end; the whole test is bounded.
func TestNodeExporterScrapesDoctor(t *testing.T) {
	exporter := engines.Require(t, "prometheus-node-exporter", "prometheus-node-exporter", "node_exporter")
	dir := t.TempDir()
	code, _, errOut := runDoctor(t, "", "--quick", "--format", "prometheus", "-o", filepath.Join(dir, "doctor.prom"))
	if code != exitOK && code != exitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// The exporter's log goes to a file (no copying goroutine to race with).
	logs, err := os.Create(filepath.Join(t.TempDir(), "node_exporter.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	logText := func() string { b, _ := os.ReadFile(logs.Name()); return string(b) }
	cmd := exec.CommandContext(ctx, exporter,
		"--web.listen-address="+addr,
		"--collector.disable-defaults",
		"--collector.textfile",
		"--collector.textfile.directory="+dir)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", exporter, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	url := "http://" + addr + "/metrics"
	client := &http.Client{Timeout: 5 * time.Second}
	var body []byte
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("node_exporter exited: %v\n%s", err, logText())
		default:
		}
		resp, err := client.Get(url)
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node_exporter did not answer on %s within 20 s: %v\n%s", url, err, logText())
		}
		time.Sleep(100 * time.Millisecond)
	}

	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	if e := mfs["node_textfile_scrape_error"]; e == nil || e.GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Errorf("node_exporter could not read doctor's file: %v\n%s", e, logText())
	}
	for _, name := range []string{"doctor_status", "doctor_last_run_timestamp_seconds", "doctor_build_info", "doctor_collector_duration_seconds"} {
		if mfs[name] == nil {
			var have []string
			for n := range mfs {
				if strings.HasPrefix(n, "doctor_") {
					have = append(have, n)
				}
			}
			t.Errorf("%s not served by node_exporter (doctor series served: %v)", name, have)
		}
	}
	if ts := mfs["doctor_last_run_timestamp_seconds"]; ts != nil {
		v := ts.GetMetric()[0].GetGauge().GetValue()
		if age := float64(time.Now().UnixMilli())/1000 - v; age < -1 || age > 300 {
			t.Errorf("doctor_last_run_timestamp_seconds %v is %v s old", v, age)
		}
	}
}
