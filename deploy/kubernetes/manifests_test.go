package kubernetes

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// documents splits a multi-document YAML file.
func documents(t *testing.T, file string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// decodeStrict decodes every document of file into its k8s.io/api type;
// an unknown field, a wrong type or an unknown kind fails the test.
func decodeStrict(t *testing.T, file string) []any {
	t.Helper()
	var objs []any
	for i, d := range documents(t, file) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(d, &head); err != nil {
			t.Fatalf("%s document %d: %v", file, i, err)
		}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "v1 Namespace":
			obj = &corev1.Namespace{}
		case "v1 ConfigMap":
			obj = &corev1.ConfigMap{}
		case "apps/v1 DaemonSet":
			obj = &appsv1.DaemonSet{}
		default:
			t.Fatalf("%s document %d: unexpected %s %s", file, i, head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict(d, obj); err != nil {
			t.Fatalf("%s document %d (%s): %v", file, i, head.Kind, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// TestDaemonSet: the DaemonSet decodes strictly and keeps its promises:
// it starts without the NVIDIA runtime, sees the host's processes, mounts
// the host read-only, runs doctor --quick, has no privilege and has limits.
func TestDaemonSet(t *testing.T) {
	var ds *appsv1.DaemonSet
	for _, o := range decodeStrict(t, "doctor-daemonset.yaml") {
		if d, ok := o.(*appsv1.DaemonSet); ok {
			ds = d
		}
	}
	if ds == nil {
		t.Fatal("no DaemonSet")
	}
	spec := ds.Spec.Template.Spec
	if !spec.HostPID {
		t.Error("hostPID must be true: doctor sees which processes hold the GPU")
	}
	if spec.RuntimeClassName != nil {
		t.Errorf("runtimeClassName %q: the pod must start without the NVIDIA runtime", *spec.RuntimeClassName)
	}
	if spec.HostNetwork || spec.HostIPC {
		t.Error("no host network or IPC")
	}
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	for name := range c.Resources.Requests {
		if strings.Contains(string(name), "nvidia.com") {
			t.Errorf("requests %s: a broken node has no GPU to hand out", name)
		}
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Limits[r]; !ok || q.Cmp(resource.MustParse("0")) <= 0 {
			t.Errorf("no %s limit", r)
		}
	}
	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Add) > 0 || len(sc.Capabilities.Drop) == 0 {
		t.Errorf("securityContext %+v: no privilege, no escalation, every capability dropped", sc)
	}
	cmd := strings.Join(append(c.Command, c.Args...), " ")
	for _, want := range []string{"--quick", "--root /host", "--format prometheus", "-o /textfile/"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the command lacks %q: %s", want, cmd)
		}
	}
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath == nil {
			t.Errorf("volume %s is not a hostPath", v.Name)
			continue
		}
		hostPaths[v.Name] = v.HostPath.Path
	}
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounted[hostPaths[m.Name]] = true
		if m.Name != "textfile" && !m.ReadOnly {
			t.Errorf("%s (%s) is mounted writable", m.Name, hostPaths[m.Name])
		}
		if m.Name == "textfile" && m.ReadOnly {
			t.Error("the textfile folder must be writable")
		}
		if strings.HasPrefix(m.MountPath, "/host/") && m.MountPath != filepath.Join("/host", hostPaths[m.Name]) {
			t.Errorf("%s is mounted at %s, not at /host%s (doctor --root /host reads it there)", m.Name, m.MountPath, hostPaths[m.Name])
		}
	}
	for _, p := range []string{"/proc", "/sys", "/dev", "/var/log", "/usr/lib/x86_64-linux-gnu", "/usr/local/bin/doctor"} {
		if !mounted[p] {
			t.Errorf("the host's %s is not mounted", p)
		}
	}
}

// pluginConfig mirrors node-problem-detector's custom plugin monitor
// configuration (pkg/custompluginmonitor/types, as documented in its
// README): decoding with unknown fields refused catches a misspelt key.
type pluginConfig struct {
	Plugin       string `json:"plugin"`
	PluginConfig struct {
		InvokeInterval  *string `json:"invoke_interval"`
		Timeout         *string `json:"timeout"`
		MaxOutputLength *int    `json:"max_output_length"`
		Concurrency     *int    `json:"concurrency"`
		MessageChange   *bool   `json:"enable_message_change_based_condition_update"`
		SkipInitial     *bool   `json:"skip_initial_status"`
	} `json:"pluginConfig"`
	Source     string `json:"source"`
	Metrics    *bool  `json:"metricsReporting"`
	Conditions []struct {
		Type    string `json:"type"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"conditions"`
	Rules []struct {
		Type      string   `json:"type"`
		Condition string   `json:"condition"`
		Reason    string   `json:"reason"`
		Path      string   `json:"path"`
		Args      []string `json:"args"`
		Timeout   *string  `json:"timeout"`
	} `json:"rules"`
}

func npdConfigMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	objs := decodeStrict(t, "npd-doctor-plugin.yaml")
	if len(objs) != 1 {
		t.Fatalf("%d documents", len(objs))
	}
	return objs[0].(*corev1.ConfigMap)
}

func TestNPDPluginConfig(t *testing.T) {
	cm := npdConfigMap(t)
	var pc pluginConfig
	dec := json.NewDecoder(strings.NewReader(cm.Data["doctor-plugin.json"]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pc); err != nil {
		t.Fatalf("doctor-plugin.json: %v", err)
	}
	if pc.Plugin != "custom" || pc.Source == "" || len(pc.Rules) != 1 {
		t.Fatalf("config %+v", pc)
	}
	global, err := time.ParseDuration(*pc.PluginConfig.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.ParseDuration(*pc.PluginConfig.InvokeInterval); err != nil {
		t.Fatal(err)
	}
	r := pc.Rules[0]
	if rt, err := time.ParseDuration(*r.Timeout); err != nil || rt > global {
		t.Errorf("rule timeout %s: more than the global %s (%v)", *r.Timeout, global, err)
	}
	// doctor's own --timeout (60s) fits in the rule's.
	if rt, _ := time.ParseDuration(*r.Timeout); rt <= 60*time.Second {
		t.Errorf("rule timeout %s leaves doctor's 60 s no room", rt)
	}
	if r.Type != "permanent" || len(pc.Conditions) != 1 || pc.Conditions[0].Type != r.Condition {
		t.Errorf("a permanent rule needs its default condition: %+v", pc)
	}
	if r.Path != "/bin/sh" || len(r.Args) != 1 || cm.Data[strings.TrimPrefix(r.Args[0], "/custom-config/")] == "" {
		t.Errorf("the rule runs %s %v, which the ConfigMap does not hold", r.Path, r.Args)
	}
}

// buildDoctor builds doctor from this checkout.
func buildDoctor(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "doctor")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/doctor")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestNPDPlugin runs the plugin script from the ConfigMap with doctor on
// recorded snapshots: 0 for a healthy machine, 1 with the root cause for
// a broken one, 2 when doctor could not check or could not run.
func TestNPDPlugin(t *testing.T) {
	cm := npdConfigMap(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "doctor-plugin.sh")
	if err := os.WriteFile(script, []byte(cm.Data["doctor-plugin.sh"]), 0o644); err != nil {
		t.Fatal(err)
	}
	doctor := buildDoctor(t)
	scenario := func(name string) string {
		return filepath.Join("..", "..", "testdata", "scenarios", name, "snapshot.json")
	}
	// A machine whose collectors timed out: nothing could be judged.
	var snap map[string]any
	b, _ := os.ReadFile(scenario("healthy-linux"))
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	collectors := snap["collectors"].(map[string]any)
	for _, c := range []string{"nvml", "modules", "pci", "devices"} {
		collectors[c] = map[string]any{"duration_ms": 5000, "timed_out": true, "error": "timed out after 5s", "state": "unknown"}
	}
	delete(snap, "facts")
	timedOut := filepath.Join(dir, "timed-out.json")
	b, _ = json.Marshal(snap)
	os.WriteFile(timedOut, b, 0o644)

	for _, c := range []struct {
		name, doctor, args string
		code               int
		msg                string
	}{
		{"healthy", doctor, "--from " + scenario("healthy-linux"), 0, "no error"},
		{"no driver", doctor, "--from " + scenario("no-driver"), 1, "doctor: driver_missing (kernel.nvidia)"},
		{"hidden GPU", doctor, "--from " + scenario("cuda-visible-devices-minus-1"), 1, "cuda_visible_devices_hides_gpu"},
		{"warning only", doctor, "--from " + scenario("gpu-memory-other-process"), 0, "no error"},
		{"could not check", doctor, "--from " + timedOut, 2, "could not check"},
		{"unreadable snapshot", doctor, "--from " + filepath.Join(dir, "missing.json"), 2, "could not run (exit 2)"},
		{"no doctor", filepath.Join(dir, "no-doctor"), "--quick", 2, "could not run"},
	} {
		cmd := exec.Command("/bin/sh", script)
		cmd.Env = append(os.Environ(), "DOCTOR="+c.doctor, "DOCTOR_ARGS="+c.args)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := strings.TrimSpace(string(out))
		if code != c.code || !strings.Contains(msg, c.msg) || strings.Contains(msg, "\n") || len(msg) > 80 {
			t.Errorf("%s: exit %d, message %q; want %d and %q on one line of at most 80 bytes", c.name, code, msg, c.code, c.msg)
		}
	}
}
