package watch

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/google/go-cmp/cmp"

	"github.com/tfdoctor/doctor/host"
)

// h200 is a go-nvml mock device answering like an H200 under load.
func h200() *mock.Device {
	return &mock.Device{
		GetNameFunc:                  func() (string, nvml.Return) { return "NVIDIA H200", nvml.SUCCESS },
		GetUUIDFunc:                  func() (string, nvml.Return) { return "GPU-11111111-2222-3333-4444-555555555555", nvml.SUCCESS },
		GetMinorNumberFunc:           func() (int, nvml.Return) { return 0, nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 143771 << 20, Used: 2048 << 20}, nvml.SUCCESS
		},
		GetMaxClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			return map[nvml.ClockType]uint32{nvml.CLOCK_SM: 1980, nvml.CLOCK_MEM: 3201}[c], nvml.SUCCESS
		},
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			return map[nvml.ClockType]uint32{nvml.CLOCK_SM: 1755, nvml.CLOCK_MEM: 3201}[c], nvml.SUCCESS
		},
		GetEnforcedPowerLimitFunc:        func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS },
		GetUtilizationRatesFunc:          func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 97, Memory: 40}, nvml.SUCCESS },
		GetPowerUsageFunc:                func() (uint32, nvml.Return) { return 512345, nvml.SUCCESS },
		GetTemperatureFunc:               func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 48, nvml.SUCCESS },
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) { return nvml.ClocksEventReasonSwPowerCap, nvml.SUCCESS },
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: 300, UsedGpuMemory: 1 << 30}, {Pid: 200, UsedGpuMemory: ^uint64(0)}}, nvml.SUCCESS
		},
		GetProcessUtilizationFunc: func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			return []nvml.ProcessUtilizationSample{
				{Pid: 300, TimeStamp: 1_000_000_002, SmUtil: 90, MemUtil: 30},
				{Pid: 300, TimeStamp: 1_000_000_001, SmUtil: 80, MemUtil: 20},
			}, nvml.SUCCESS
		},
	}
}

func server(devs ...nvml.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "580.159.03", nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i >= len(devs) || devs[i] == nil {
				return nil, nvml.ERROR_GPU_IS_LOST
			}
			return devs[i], nvml.SUCCESS
		},
	}
}

func openFake(t *testing.T, lib nvml.Interface) (*nvmlGPUs, Inventory) {
	t.Helper()
	g := NVMLFrom(lib).(*nvmlGPUs)
	g.now = func() time.Time { return time.UnixMicro(1_000_000_000) }
	inv, err := g.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g, inv
}

func TestNVMLAdapter(t *testing.T) {
	g, inv := openFake(t, server(h200()))
	wantInv := Inventory{Driver: "580.159.03", GPUs: []GPUInfo{{Index: 0, Name: "NVIDIA H200", UUID: "GPU-11111111-2222-3333-4444-555555555555",
		Minor: 0, ComputeCapability: "9.0", MemoryTotalMiB: 143771, MaxSMClockMHz: 1980, MaxMemClockMHz: 3201, PowerLimitW: 700}}}
	if d := cmp.Diff(wantInv, inv); d != "" {
		t.Errorf("inventory (-want +got):\n%s", d)
	}
	got, err := g.Sample()
	if err != nil {
		t.Fatal(err)
	}
	ev := uint64(nvml.ClocksEventReasonSwPowerCap)
	want := []GPUSample{{Index: 0, Util: ip(97), MemUtil: ip(40), MemUsedMiB: up(2048), SMClockMHz: ip(1755), MemClockMHz: ip(3201),
		PowerW: fp(512.345), TempC: ip(48), ClockEvents: &ev, ProcsKnown: true, ProcUtilKnown: true,
		Procs: []GPUProc{{PID: 200, UsedMiB: 0, SMUtil: ip(0), MemUtil: ip(0)}, {PID: 300, UsedMiB: 1024, SMUtil: ip(85), MemUtil: ip(25)}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sample (-want +got):\n%s", d)
	}
	if g.devs[0].lastSeen != 1_000_000_002 {
		t.Errorf("lastSeen = %d, want the newest sample's timestamp", g.devs[0].lastSeen)
	}
}

// NOT_FOUND means no process ran a kernel since the last sample: the
// query works and every share is zero.
func TestNVMLProcessUtilizationNotFound(t *testing.T) {
	d := h200()
	d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, nvml.ERROR_NOT_FOUND }
	g, _ := openFake(t, server(d))
	got, _ := g.Sample()
	if !got[0].ProcUtilKnown || *got[0].Procs[1].SMUtil != 0 {
		t.Errorf("sample = %+v, want per-process utilisation known and zero", got[0])
	}
}

// A query the driver does not support is left nil, named, and not asked
// again: a sample stays cheap on drivers that lack it.
func TestNVMLUnsupportedAskedOnce(t *testing.T) {
	d := h200()
	d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	g, _ := openFake(t, server(d))
	for i := 0; i < 3; i++ {
		got, err := g.Sample()
		if err != nil {
			t.Fatal(err)
		}
		s := got[0]
		if s.Util != nil || s.ProcsKnown || s.ProcUtilKnown || len(s.Errors) > 0 {
			t.Errorf("sample %d = %+v", i, s)
		}
		if d := cmp.Diff([]string{"processes", "utilization"}, s.Unsupported); d != "" {
			t.Errorf("unsupported (-want +got):\n%s", d)
		}
	}
	if n := len(d.GetUtilizationRatesCalls()); n != 1 {
		t.Errorf("GetUtilizationRates called %d times, want once", n)
	}
	if n := len(d.GetProcessUtilizationCalls()); n != 0 {
		t.Errorf("GetProcessUtilization called %d times without a process list", n)
	}
}

// Other failures are reported per sample and asked again.
func TestNVMLQueryError(t *testing.T) {
	d := h200()
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_GPU_IS_LOST }
	g, _ := openFake(t, server(d))
	for i := 0; i < 2; i++ {
		got, _ := g.Sample()
		if got[0].PowerW != nil || len(got[0].Errors) != 1 || !strings.HasPrefix(got[0].Errors[0], "power: ERROR_GPU_IS_LOST") {
			t.Errorf("errors = %q", got[0].Errors)
		}
	}
}

func TestNVMLOpenErrors(t *testing.T) {
	lib := server()
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	if _, err := NVMLFrom(lib).Open(); err == nil || !strings.Contains(err.Error(), "libnvidia-ml.so.1 could not be loaded") {
		t.Errorf("Open = %v", err)
	}
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	if _, err := NVMLFrom(lib).Open(); err == nil || !strings.Contains(err.Error(), "ERROR_DRIVER_NOT_LOADED") {
		t.Errorf("Open = %v", err)
	}
	// A library without a symbol panics inside go-nvml: an error here.
	lib = server()
	lib.DeviceGetCountFunc = nil
	if _, err := NVMLFrom(lib).Open(); err == nil || !strings.Contains(err.Error(), "NVML call failed") {
		t.Errorf("Open = %v", err)
	}
	// A lost GPU among others is skipped.
	g, inv := openFake(t, server(nil, h200()))
	if len(inv.GPUs) != 1 || inv.GPUs[0].Index != 1 {
		t.Errorf("inventory = %+v", inv)
	}
	if s, _ := g.Sample(); len(s) != 1 || s[0].Index != 1 {
		t.Errorf("sample = %+v", s)
	}
}

func TestNVMLSampleBeforeOpen(t *testing.T) {
	if _, err := NVMLFrom(server()).Sample(); err == nil {
		t.Error("Sample before Open did not fail")
	}
}

// doctor watch and the diagnosis talk to NVML through one boundary
// (host.OpenNVML) with one session lock: a diagnosis that reads the GPUs
// while a watch samples does not shut NVML down under the watch; the last
// session to close does, once; a failed Open leaves no session open.
func TestOneNVMLBoundary(t *testing.T) {
	var mu sync.Mutex
	inits, shutdowns := 0, 0
	lib := server(h200())
	lib.InitFunc = func() nvml.Return { mu.Lock(); inits++; mu.Unlock(); return nvml.SUCCESS }
	lib.ShutdownFunc = func() nvml.Return { mu.Lock(); shutdowns++; mu.Unlock(); return nvml.SUCCESS }
	lib.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 13000, nvml.SUCCESS }
	lib.SystemGetNVMLVersionFunc = func() (string, nvml.Return) { return "13.580.159.03", nvml.SUCCESS }
	counts := func() (int, int) { mu.Lock(); defer mu.Unlock(); return inits, shutdowns }

	w := NVMLFrom(lib)
	if _, err := w.Open(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ { // diagnoses overlapping the watch and each other
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n, err := host.NVMLSourceFrom(lib).Read(context.Background()); err != nil || !n.Available {
				t.Errorf("diagnosis during the watch: %+v %v", n, err)
			}
		}()
	}
	wg.Wait()
	if i, s := counts(); i != 1 || s != 0 {
		t.Fatalf("during the watch: %d inits, %d shutdowns; want 1, 0", i, s)
	}
	if got, err := w.Sample(); err != nil || len(got) != 1 || got[0].Util == nil {
		t.Fatalf("the watch's session was shut down under it: %+v %v", got, err)
	}
	w.Close()
	w.Close()
	if i, s := counts(); i != 1 || s != 1 {
		t.Errorf("after the watch: %d inits, %d shutdowns; want 1, 1", i, s)
	}

	// A failed Open (a symbol missing after Init) closes its session.
	lib.DeviceGetCountFunc = nil
	if _, err := NVMLFrom(lib).Open(); err == nil {
		t.Fatal("Open without DeviceGetCount succeeded")
	}
	if i, s := counts(); i != 2 || s != 2 {
		t.Errorf("after a failed Open: %d inits, %d shutdowns; want 2, 2", i, s)
	}
}
