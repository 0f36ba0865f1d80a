package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// GPUSource reads driver and device facts. The real one is NVML through
// go-nvml (NVMLSource); tests use go-nvml's mock servers through the same
// adapter, or a fake that returns an error.
type GPUSource interface {
	// Read returns what the driver reports. A driver that cannot be
	// reached is an NVML value with Available false and Error set, not a
	// Go error; a Go error means the read itself failed unexpectedly.
	Read(ctx context.Context) (NVML, error)
}

// NVMLSource returns the GPUSource backed by libnvidia-ml.so.1, loaded at
// run time: on a machine without the driver it reports
// ERROR_LIBRARY_NOT_FOUND.
func NVMLSource() GPUSource { return &nvmlSource{newLib: SystemNVML} }

// NVMLSourceFrom adapts any nvml.Interface (go-nvml's mock servers in tests).
func NVMLSourceFrom(lib nvml.Interface) GPUSource {
	return &nvmlSource{newLib: func() nvml.Interface { return lib }}
}

type nvmlSource struct {
	newLib func() nvml.Interface
}

// NVMLError is an NVML return code turned into a Go error at the boundary.
type NVMLError struct {
	Op   string
	Code nvml.Return
}

func (e *NVMLError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Op, returnName(e.Code), errorStringSafe(e.Code))
}

// returnName is the stable name of an NVML return code, as in nvml.h.
func returnName(r nvml.Return) string {
	s := r.String()
	if s == "" || strings.HasPrefix(s, "Unknown") {
		return fmt.Sprintf("NVML_ERROR_%d", int32(r))
	}
	return s
}

func nvmlErr(op string, r nvml.Return) error {
	if r == nvml.SUCCESS {
		return nil
	}
	return &NVMLError{Op: op, Code: r}
}

// errorStringSafe guards nvml.ErrorString, which calls into the library and
// panics (nil function) when the library was never loaded.
func errorStringSafe(r nvml.Return) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return nvml.ErrorString(r)
}

func (n *nvmlSource) Read(ctx context.Context) (out NVML, err error) {
	sess, err := OpenNVML(n.newLib())
	if err != nil {
		var ne *NVMLError
		switch {
		case errors.As(err, &ne) && ne.Code == nvml.ERROR_LIBRARY_NOT_FOUND:
			return NVML{Error: returnName(ne.Code), ErrorMessage: "libnvidia-ml.so.1 could not be loaded"}, nil
		case errors.As(err, &ne):
			return NVML{Error: returnName(ne.Code), ErrorMessage: errorStringSafe(ne.Code)}, nil
		}
		return NVML{Error: "ERROR_UNKNOWN", ErrorMessage: err.Error()}, nil
	}
	defer sess.Close()
	lib := sess.Lib()
	defer func() {
		// A library missing its symbols (very old drivers) panics inside
		// go-nvml; that is a finding, not a crash.
		if p := recover(); p != nil {
			out = NVML{Error: "ERROR_UNKNOWN", ErrorMessage: fmt.Sprintf("NVML call failed: %v", p)}
			err = nil
		}
	}()
	out.Available = true
	if v, r := lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
		out.DriverVersion = v
	}
	if v, r := lib.SystemGetCudaDriverVersion(); r == nvml.SUCCESS {
		out.CUDADriverVersion = v
	}
	if v, r := lib.SystemGetNVMLVersion(); r == nvml.SUCCESS {
		out.NVMLVersion = v
	}
	count, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return out, nvmlErr("DeviceGetCount", r)
	}
	for i := 0; i < count; i++ {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		dev, r := lib.DeviceGetHandleByIndex(i)
		if r != nvml.SUCCESS {
			out.Unsupported = append(out.Unsupported, fmt.Sprintf("gpu%d:handle:%s", i, returnName(r)))
			continue
		}
		gpu, unsup := readGPU(i, dev)
		out.GPUs = append(out.GPUs, gpu)
		out.Unsupported = append(out.Unsupported, unsup...)
	}
	return out, nil
}

// readGPU reads one device. Queries the driver does not support are listed
// in the second result and leave their field nil. Each query is guarded on
// its own: an old driver (or a mock) that lacks one entry point costs that
// fact only.
func readGPU(i int, d nvml.Device) (GPU, []string) {
	g := GPU{Index: i}
	var unsup []string
	q := func(name string, f func() nvml.Return) bool {
		r := guard(f)
		if r == nvml.SUCCESS {
			return true
		}
		unsup = append(unsup, fmt.Sprintf("gpu%d:%s:%s", i, name, returnName(r)))
		return false
	}
	q("name", func() (r nvml.Return) { g.Name, r = d.GetName(); return })
	q("uuid", func() (r nvml.Return) { g.UUID, r = d.GetUUID(); return })
	// Consumer GPUs have no serial: not worth a note.
	guard(func() (r nvml.Return) { g.Serial, r = d.GetSerial(); return })
	q("pci", func() nvml.Return {
		p, r := d.GetPciInfo()
		if r == nvml.SUCCESS {
			g.PCIBusID = busID(p)
		}
		return r
	})
	q("memory", func() nvml.Return {
		m, r := d.GetMemoryInfo()
		if r == nvml.SUCCESS {
			g.MemoryTotalMiB, g.MemoryUsedMiB = m.Total>>20, m.Used>>20
		}
		return r
	})
	q("compute_capability", func() nvml.Return {
		maj, min, r := d.GetCudaComputeCapability()
		if r == nvml.SUCCESS {
			g.ComputeCapability = fmt.Sprintf("%d.%d", maj, min)
		}
		return r
	})
	q("compute_mode", func() nvml.Return {
		m, r := d.GetComputeMode()
		if r == nvml.SUCCESS {
			g.ComputeMode = computeModeName(m)
		}
		return r
	})
	q("persistence", func() nvml.Return {
		p, r := d.GetPersistenceMode()
		if r == nvml.SUCCESS {
			on := p == nvml.FEATURE_ENABLED
			g.Persistence = &on
		}
		return r
	})
	guard(func() nvml.Return {
		cur, pend, r := d.GetMigMode()
		if r != nvml.SUCCESS {
			return r // most GPUs have no MIG: not worth a note
		}
		m := &MIG{Current: cur == nvml.DEVICE_MIG_ENABLE, Pending: pend == nvml.DEVICE_MIG_ENABLE}
		if m.Current {
			n, r := d.GetMaxMigDeviceCount()
			for j := 0; r == nvml.SUCCESS && j < n; j++ {
				if _, r2 := d.GetMigDeviceHandleByIndex(j); r2 == nvml.SUCCESS {
					m.Devices++
				}
			}
		}
		g.MIG = m
		return r
	})
	guard(func() nvml.Return { g.ECC = readECC(d); return nvml.SUCCESS })
	if g.ECC == nil {
		unsup = append(unsup, fmt.Sprintf("gpu%d:ecc:ERROR_NOT_SUPPORTED", i))
	}
	pcie := &PCIe{}
	okGen := q("pcie_gen", func() (r nvml.Return) { pcie.CurrentGen, r = d.GetCurrPcieLinkGeneration(); return })
	okW := q("pcie_width", func() (r nvml.Return) { pcie.CurrentWidth, r = d.GetCurrPcieLinkWidth(); return })
	guard(func() (r nvml.Return) { pcie.MaxGen, r = d.GetMaxPcieLinkGeneration(); return })
	guard(func() nvml.Return {
		// The link trains no higher than both the GPU and the slot allow.
		v, r := d.GetGpuMaxPcieLinkGeneration()
		if r == nvml.SUCCESS && v > 0 && (pcie.MaxGen == 0 || v < pcie.MaxGen) {
			pcie.MaxGen = v
		}
		return r
	})
	guard(func() (r nvml.Return) { pcie.MaxWidth, r = d.GetMaxPcieLinkWidth(); return })
	if okGen || okW {
		g.PCIe = pcie
	}
	q("clocks_event_reasons", func() nvml.Return {
		mask, r := d.GetCurrentClocksEventReasons()
		if r == nvml.SUCCESS {
			g.ThrottleMask = &mask
			g.ThrottleReasons = ThrottleReasonNames(mask)
		}
		return r
	})
	q("temperature", func() nvml.Return {
		t, r := d.GetTemperature(nvml.TEMPERATURE_GPU)
		if r == nvml.SUCCESS {
			v := int(t)
			g.TemperatureC = &v
		}
		return r
	})
	q("utilization", func() nvml.Return {
		u, r := d.GetUtilizationRates()
		if r == nvml.SUCCESS {
			g.Utilization = &Utilization{GPU: int(u.Gpu), Memory: int(u.Memory)}
		}
		return r
	})
	q("processes", func() nvml.Return {
		procs, r := d.GetComputeRunningProcesses()
		if r != nvml.SUCCESS {
			return r
		}
		g.ProcessesSupported = true
		for _, p := range procs {
			gp := GPUProcess{PID: int(p.Pid)}
			// NVML reports "not available" (all ones) in some setups.
			if p.UsedGpuMemory != ^uint64(0) {
				gp.UsedMiB = p.UsedGpuMemory >> 20
			}
			g.Processes = append(g.Processes, gp)
		}
		return r
	})
	return g, unsup
}

// guard runs one NVML query and turns a panic (an entry point missing from
// the loaded library, or a mock that does not implement it) into
// ERROR_FUNCTION_NOT_FOUND.
func guard(f func() nvml.Return) (r nvml.Return) {
	defer func() {
		if recover() != nil {
			r = nvml.ERROR_FUNCTION_NOT_FOUND
		}
	}()
	return f()
}

func readECC(d nvml.Device) *ECC {
	cur, _, r := d.GetEccMode()
	if r != nvml.SUCCESS {
		return nil
	}
	e := &ECC{Enabled: cur == nvml.FEATURE_ENABLED}
	if v, r := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); r == nvml.SUCCESS {
		e.VolatileUncorrected = v
	}
	if v, r := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC); r == nvml.SUCCESS {
		e.AggregateUncorrected = v
	}
	if p, r := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS); r == nvml.SUCCESS {
		e.RetiredPagesSBE = len(p)
	}
	if p, r := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR); r == nvml.SUCCESS {
		e.RetiredPagesDBE = len(p)
	}
	if s, r := d.GetRetiredPagesPendingStatus(); r == nvml.SUCCESS {
		e.RetirementPending = s == nvml.FEATURE_ENABLED
	}
	if c, u, pending, failure, r := d.GetRemappedRows(); r == nvml.SUCCESS {
		e.RemappedCorrectable, e.RemappedUncorrectable = c, u
		e.RemapPending, e.RemapFailure = pending, failure
	}
	return e
}

func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	if len(b) == 0 {
		return fmt.Sprintf("%08X:%02X:%02X.0", p.Domain, p.Bus, p.Device)
	}
	return string(b)
}

func computeModeName(m nvml.ComputeMode) string {
	switch m {
	case nvml.COMPUTEMODE_DEFAULT:
		return "Default"
	case nvml.COMPUTEMODE_EXCLUSIVE_THREAD:
		return "Exclusive_Thread"
	case nvml.COMPUTEMODE_PROHIBITED:
		return "Prohibited"
	case nvml.COMPUTEMODE_EXCLUSIVE_PROCESS:
		return "Exclusive_Process"
	}
	return fmt.Sprintf("Unknown(%d)", int(m))
}

// throttleNames maps clock event reason bits (nvml.h) to stable names.
var throttleNames = []struct {
	bit  uint64
	name string
}{
	{nvml.ClocksEventReasonGpuIdle, "gpu_idle"},
	{nvml.ClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"},
	{nvml.ClocksEventReasonSwPowerCap, "sw_power_cap"},
	{nvml.ClocksThrottleReasonHwSlowdown, "hw_slowdown"},
	{nvml.ClocksEventReasonSyncBoost, "sync_boost"},
	{nvml.ClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
	{nvml.ClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
	{nvml.ClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
	{nvml.ClocksEventReasonDisplayClockSetting, "display_clock_setting"},
}

// ThrottleReasonNames names the bits set in a clocks-event-reasons mask.
func ThrottleReasonNames(mask uint64) []string {
	var out []string
	for _, t := range throttleNames {
		if mask&t.bit != 0 {
			out = append(out, t.name)
		}
	}
	return out
}

// collectNVML reads NVML and adds user and command of GPU processes.
func collectNVML(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	if g.opts.GPU == nil {
		return nil, errors.New("no GPU source configured")
	}
	info, err := g.opts.GPU.Read(ctx)
	for gi := range info.GPUs {
		for pi := range info.GPUs[gi].Processes {
			p := &info.GPUs[gi].Processes[pi]
			p.Self = p.PID == g.self
			p.User, p.Command = g.processOwner(ctx, p.PID)
		}
	}
	return func(s *Snapshot) { s.NVML = info }, err
}
