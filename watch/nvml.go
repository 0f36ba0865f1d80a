package watch

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/tfdoctor/doctor/host"
)

// NVML returns the GPUs backed by libnvidia-ml.so.1, loaded at run time: on
// a machine without the driver, Open reports ERROR_LIBRARY_NOT_FOUND.
func NVML() GPUs { return &nvmlGPUs{newLib: host.SystemNVML} }

// NVMLFrom adapts any nvml.Interface (go-nvml's mocks in tests).
func NVMLFrom(lib nvml.Interface) GPUs {
	return &nvmlGPUs{newLib: func() nvml.Interface { return lib }}
}

type nvmlGPUs struct {
	newLib func() nvml.Interface
	sess   *host.NVMLSession // the one NVML boundary, with its session lock
	lib    nvml.Interface
	devs   []*nvmlDev
	now    func() time.Time
}

type nvmlDev struct {
	index int
	dev   nvml.Device
	// unsup holds the queries the driver answered NOT_SUPPORTED: they are
	// not asked again, which keeps a sample cheap.
	unsup map[string]bool
	// lastSeen is the newest per-process utilisation sample already
	// counted (NVML timestamps, microseconds).
	lastSeen uint64
}

func notSupported(r nvml.Return) bool {
	return r == nvml.ERROR_NOT_SUPPORTED || r == nvml.ERROR_FUNCTION_NOT_FOUND
}

func (n *nvmlGPUs) Open() (inv Inventory, err error) {
	if n.now == nil {
		n.now = time.Now
	}
	sess, err := host.OpenNVML(n.newLib())
	if err != nil {
		var ne *host.NVMLError
		if errors.As(err, &ne) && ne.Code == nvml.ERROR_LIBRARY_NOT_FOUND {
			return inv, fmt.Errorf("libnvidia-ml.so.1 could not be loaded (NVML %s): no NVIDIA driver, or the loader does not find it", "ERROR_LIBRARY_NOT_FOUND")
		}
		return inv, err
	}
	lib := sess.Lib()
	n.sess, n.lib = sess, lib
	defer func() {
		if err != nil { // the caller does not Close after a failed Open
			n.Close()
		}
	}()
	defer func() {
		// A library missing its symbols (very old drivers) panics inside
		// go-nvml: an error to report, not a crash.
		if p := recover(); p != nil {
			err = fmt.Errorf("NVML call failed: %v", p)
		}
	}()
	if v, r := lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
		inv.Driver = v
	}
	count, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return inv, &host.NVMLError{Op: "nvmlDeviceGetCount", Code: r}
	}
	start := uint64(n.now().UnixMicro())
	for i := 0; i < count; i++ {
		d, r := lib.DeviceGetHandleByIndex(i)
		if r != nvml.SUCCESS {
			continue // reported by doctor's diagnosis; nothing to watch here
		}
		info := GPUInfo{Index: i, Minor: -1}
		if v, r := d.GetName(); r == nvml.SUCCESS {
			info.Name = v
		}
		if v, r := d.GetUUID(); r == nvml.SUCCESS {
			info.UUID = v
		}
		if v, r := d.GetMinorNumber(); r == nvml.SUCCESS {
			info.Minor = v
		}
		if maj, min, r := d.GetCudaComputeCapability(); r == nvml.SUCCESS {
			info.ComputeCapability = fmt.Sprintf("%d.%d", maj, min)
		}
		if m, r := d.GetMemoryInfo(); r == nvml.SUCCESS {
			info.MemoryTotalMiB = m.Total >> 20
		}
		if v, r := d.GetMaxClockInfo(nvml.CLOCK_SM); r == nvml.SUCCESS {
			info.MaxSMClockMHz = int(v)
		}
		if v, r := d.GetMaxClockInfo(nvml.CLOCK_MEM); r == nvml.SUCCESS {
			info.MaxMemClockMHz = int(v)
		}
		if v, r := d.GetEnforcedPowerLimit(); r == nvml.SUCCESS {
			info.PowerLimitW = float64(v) / 1000
		}
		inv.GPUs = append(inv.GPUs, info)
		n.devs = append(n.devs, &nvmlDev{index: i, dev: d, unsup: map[string]bool{}, lastSeen: start})
	}
	return inv, nil
}

func (n *nvmlGPUs) Close() {
	n.sess.Close()
	n.sess, n.lib = nil, nil
}

func (n *nvmlGPUs) Sample() (out []GPUSample, err error) {
	if n.lib == nil {
		return nil, fmt.Errorf("NVML is not open")
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("NVML call failed: %v", p)
		}
	}()
	for _, d := range n.devs {
		out = append(out, d.sample())
	}
	return out, nil
}

// ask records the outcome of one query: true when it answered.
func (d *nvmlDev) ask(s *GPUSample, q string, r nvml.Return) bool {
	switch {
	case r == nvml.SUCCESS:
		return true
	case notSupported(r):
		d.unsup[q] = true
	default:
		s.Errors = append(s.Errors, (&host.NVMLError{Op: q, Code: r}).Error())
	}
	return false
}

func (d *nvmlDev) sample() GPUSample {
	s := GPUSample{Index: d.index}
	dev := d.dev
	if !d.unsup["utilization"] {
		if u, r := dev.GetUtilizationRates(); d.ask(&s, "utilization", r) {
			g, m := int(u.Gpu), int(u.Memory)
			s.Util, s.MemUtil = &g, &m
		}
	}
	if !d.unsup["memory"] {
		if m, r := dev.GetMemoryInfo(); d.ask(&s, "memory", r) {
			v := m.Used >> 20
			s.MemUsedMiB = &v
		}
	}
	if !d.unsup["sm_clock"] {
		if v, r := dev.GetClockInfo(nvml.CLOCK_SM); d.ask(&s, "sm_clock", r) {
			c := int(v)
			s.SMClockMHz = &c
		}
	}
	if !d.unsup["mem_clock"] {
		if v, r := dev.GetClockInfo(nvml.CLOCK_MEM); d.ask(&s, "mem_clock", r) {
			c := int(v)
			s.MemClockMHz = &c
		}
	}
	if !d.unsup["power"] {
		if v, r := dev.GetPowerUsage(); d.ask(&s, "power", r) {
			w := float64(v) / 1000
			s.PowerW = &w
		}
	}
	if !d.unsup["temperature"] {
		if v, r := dev.GetTemperature(nvml.TEMPERATURE_GPU); d.ask(&s, "temperature", r) {
			t := int(v)
			s.TempC = &t
		}
	}
	if !d.unsup["clock_events"] {
		if v, r := dev.GetCurrentClocksEventReasons(); d.ask(&s, "clock_events", r) {
			s.ClockEvents = &v
		}
	}
	if !d.unsup["processes"] {
		if procs, r := dev.GetComputeRunningProcesses(); d.ask(&s, "processes", r) {
			s.ProcsKnown = true
			for _, p := range procs {
				gp := GPUProc{PID: int(p.Pid)}
				// NVML reports "not available" (all ones) in some setups.
				if p.UsedGpuMemory != ^uint64(0) {
					gp.UsedMiB = p.UsedGpuMemory >> 20
				}
				s.Procs = append(s.Procs, gp)
			}
			sort.Slice(s.Procs, func(i, j int) bool { return s.Procs[i].PID < s.Procs[j].PID })
		}
	}
	if s.ProcsKnown && !d.unsup["process_utilization"] {
		d.processUtil(&s)
	}
	for q := range d.unsup {
		s.Unsupported = append(s.Unsupported, q)
	}
	sort.Strings(s.Unsupported)
	return s
}

// processUtil adds each process's SM and memory share since the last
// sample. NVML keeps a ring of recent samples per process; asking with the
// newest timestamp already seen returns only the new ones, and NOT_FOUND
// when there are none (no process ran a kernel: every share is 0).
func (d *nvmlDev) processUtil(s *GPUSample) {
	samples, r := d.dev.GetProcessUtilization(d.lastSeen)
	switch {
	case r == nvml.SUCCESS:
	case r == nvml.ERROR_NOT_FOUND:
		samples = nil
	case r == nvml.ERROR_INSUFFICIENT_SIZE && len(samples) == 0:
		// Samples arrived between go-nvml's sizing call and the read, or
		// there were none: no figure this time, but the query works.
		samples = nil
	default:
		d.ask(s, "process_utilization", r)
		return
	}
	s.ProcUtilKnown = true
	type acc struct{ sm, mem, n int }
	by := map[int]*acc{}
	for _, x := range samples {
		if x.TimeStamp > d.lastSeen {
			d.lastSeen = x.TimeStamp
		}
		a := by[int(x.Pid)]
		if a == nil {
			a = &acc{}
			by[int(x.Pid)] = a
		}
		a.sm += int(x.SmUtil)
		a.mem += int(x.MemUtil)
		a.n++
	}
	for i := range s.Procs {
		sm, mem := 0, 0
		if a := by[s.Procs[i].PID]; a != nil {
			sm, mem = a.sm/a.n, a.mem/a.n
		}
		s.Procs[i].SMUtil, s.Procs[i].MemUtil = &sm, &mem
	}
}
