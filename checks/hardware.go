package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// XidErrors reads NVRM Xid lines from the kernel log.
var XidErrors = &Check{
	ID:       "hardware.xid",
	Link:     LinkHardware,
	Title:    "Kernel log: NVIDIA Xid errors",
	Causes:   []string{"gpu_hardware_xid_error"},
	Requires: []string{"platform", "kernel-log"},
	Doc: `The NVIDIA kernel driver logs GPU faults as "NVRM: Xid (PCI:...): N, ...".
Codes such as 79 (fallen off the bus), 48 (double-bit ECC), 62, 64, 74, 95,
119 and 120 point at the GPU, its firmware or the bus and need a reset,
reboot or a hardware look; 13, 31, 43 and 45 are usually one application's
fault. Needs the kernel log (root where kernel.dmesg_restrict=1); under WSL 2
Xids are logged on the Windows side.`,
	Run: func(p *Pass) {
		s := p.Snap
		kl := s.KernelLog
		if !kl.Readable {
			if isWSL2(s) {
				p.Skip("WSL 2: Xid errors are logged by the Windows driver (Event Viewer), not in this kernel log")
				return
			}
			if st, ok := collector(s, "kernel-log"); !ok && st.Skipped != "" {
				p.Skip(st.Skipped)
				return
			}
			p.Skip("kernel log not readable: " + kl.Error)
			return
		}
		if len(kl.Xids) == 0 {
			p.OK("no Xid errors in the kernel log")
			return
		}
		type agg struct {
			x     knowledge.Xid
			count int
			last  host.XidEvent
		}
		byCode := map[int]*agg{}
		for _, e := range kl.Xids {
			a := byCode[e.Code]
			if a == nil {
				a = &agg{x: knowledge.LookupXid(e.Code)}
				byCode[e.Code] = a
			}
			a.count++
			a.last = e
		}
		codes := make([]int, 0, len(byCode))
		for c := range byCode {
			codes = append(codes, c)
		}
		// Serious codes first, then by code.
		sort.Slice(codes, func(i, j int) bool {
			a, b := byCode[codes[i]], byCode[codes[j]]
			if a.x.Serious() != b.x.Serious() {
				return a.x.Serious()
			}
			return codes[i] < codes[j]
		})
		for _, c := range codes {
			a := byCode[c]
			x := a.x
			ev := Ev{"xid": c, "count": a.count, "pci": a.last.PCI, "kind": x.Kind, "last_line": a.last.Text,
				"mnemonic": x.Mnemonic, "catalog_immediate_action": x.Immediate, "catalog_investigatory_action": x.Investigatory, "action": x.Action}
			title := fmt.Sprintf("Xid %d (%s) on %s, %s", c, x.Name, a.last.PCI, plural(a.count, "time", "times"))
			sev, text := x.Severity, x.Text
			if c == 154 {
				// The driver's own recommendation for the Xids logged with it.
				if act, op, s154, ok := knowledge.Xid154Action(a.last.Text); ok {
					sev, text = s154, fmt.Sprintf("The driver recommends: %s. %s", act, x.Text)
					ev["recovery_action"], ev["action"] = act, op
					title = fmt.Sprintf("Xid 154 on %s: the driver asks for %s", a.last.PCI, act)
				}
			}
			fix := Fix{ID: FixXidAction, Title: "Act on Xid " + fmt.Sprint(c), Risk: RiskSafe, Manual: true, Steps: []string{text},
				Params: map[string]string{"xid": fmt.Sprint(c)}}
			var f *Finding
			switch {
			case sev == "error":
				f = p.Error("gpu_hardware_xid_error", title, text, ev, fix)
			case x.Kind == "application":
				f = p.Warn("gpu_hardware_xid_error", title, "Usually the application's fault rather than the GPU's: "+text, ev, fix)
			case sev == "info":
				f = p.Info("gpu_hardware_xid_error", title, text, ev)
			default:
				f = p.Warn("gpu_hardware_xid_error", title, text, ev, fix)
			}
			f.ID = fmt.Sprintf("%s/%d", p.check.ID, c)
		}
	},
}

// ECCErrors reads uncorrectable ECC counters and page retirement / row
// remapping state.
var ECCErrors = &Check{
	ID:       "hardware.ecc",
	Link:     LinkHardware,
	Title:    "GPU memory ECC",
	Causes:   []string{"gpu_ecc_errors"},
	Requires: []string{"nvml", "driver.nvml"},
	Doc: `Uncorrectable (double-bit) ECC errors since the driver loaded, a failed
row remapping, or retirements waiting for a reset make CUDA calls fail with
CUDA_ERROR_ECC_UNCORRECTABLE or put the GPU in a bad state. Data-center GPUs
only; consumer GPUs have no ECC.`,
	Run: func(p *Pass) {
		s := p.Snap
		if !s.NVML.Available {
			p.Skip("NVML not available")
			return
		}
		any := false
		for _, g := range s.NVML.GPUs {
			if g.ECC == nil {
				continue
			}
			any = true
			e := g.ECC
			ev := Ev{"gpu": g.Index, "ecc_enabled": e.Enabled, "volatile_uncorrected": e.VolatileUncorrected,
				"aggregate_uncorrected": e.AggregateUncorrected, "retired_pages_dbe": e.RetiredPagesDBE,
				"retirement_pending": e.RetirementPending, "remapped_uncorrectable": e.RemappedUncorrectable,
				"remap_pending": e.RemapPending, "remap_failure": e.RemapFailure}
			reset := Fix{ID: FixGPUDrainAndReboot, Title: "Drain the GPU and reboot (or have the administrator reset it)", Risk: RiskDangerous, Manual: true,
				Steps: []string{"Stop the jobs on GPU " + fmt.Sprint(g.Index), "Reboot the machine (doctor never resets a GPU)", "If errors return, open a hardware ticket with this report"}}
			id := fmt.Sprintf("%s/gpu%d", p.check.ID, g.Index)
			switch {
			case e.RemapFailure:
				p.Error("gpu_ecc_errors", fmt.Sprintf("GPU %d: row remapping failed", g.Index), "The GPU could not remap a failing memory row: a hardware fault.", ev, reset).ID = id
			case e.VolatileUncorrected > 0:
				p.Error("gpu_ecc_errors", fmt.Sprintf("GPU %d: %d uncorrectable ECC errors since the driver loaded", g.Index, e.VolatileUncorrected),
					"Uncorrectable memory errors make CUDA work fail on this GPU until it is reset.", ev, reset).ID = id
			case e.RemapPending || e.RetirementPending:
				p.Warn("gpu_ecc_errors", fmt.Sprintf("GPU %d: memory repair pending until the next GPU reset", g.Index),
					"A row remap or page retirement is recorded but only takes effect after a reset or reboot.", ev, reset).ID = id
			case e.AggregateUncorrected > 0 || e.RetiredPagesDBE > 0:
				p.Warn("gpu_ecc_errors", fmt.Sprintf("GPU %d: %d uncorrectable ECC errors over its lifetime", g.Index, e.AggregateUncorrected),
					"Past uncorrectable errors; watch for new ones.", ev).ID = id
			}
		}
		if !any {
			p.Skip("no GPU reports ECC (consumer GPUs have none; WSL 2 does not expose it)")
			return
		}
		if len(p.findings) == 0 {
			p.OK("no uncorrectable ECC errors")
		}
	},
}

// PCIeLink compares the PCIe link width with what the GPU and slot allow.
var PCIeLink = &Check{
	ID:       "hardware.pcie",
	Link:     LinkHardware,
	Title:    "PCIe link",
	Causes:   []string{"pcie_link_degraded"},
	Requires: []string{"nvml", "driver.nvml"},
	Doc: `A GPU whose PCIe link trained narrower than it can (x8 or x4 instead of
x16) moves data to the GPU at a fraction of the speed: a badly seated card,
a riser, or a slot shared with another device. A lower link generation at
idle is normal power saving; under load it is a degradation too.`,
	Run: func(p *Pass) {
		s := p.Snap
		if !s.NVML.Available {
			p.Skip("NVML not available")
			return
		}
		var ok []string
		for _, g := range s.NVML.GPUs {
			l := g.PCIe
			if l == nil || l.MaxWidth == 0 {
				continue
			}
			ev := Ev{"gpu": g.Index, "current_width": l.CurrentWidth, "max_width": l.MaxWidth, "current_gen": l.CurrentGen, "max_gen": l.MaxGen}
			id := fmt.Sprintf("%s/gpu%d", p.check.ID, g.Index)
			fix := Fix{ID: FixPCIeReseat, Title: "Check how the GPU is seated", Risk: RiskSafe, Manual: true,
				Steps: []string{"Power off; reseat the GPU in a x16 slot wired for x16 (not through a x1/x4 riser)", "Check the BIOS PCIe settings for the slot"}}
			busy := g.Utilization != nil && g.Utilization.GPU >= 50
			switch {
			case l.CurrentWidth > 0 && l.CurrentWidth < l.MaxWidth:
				p.Warn("pcie_link_degraded", fmt.Sprintf("GPU %d: PCIe link x%d, can do x%d", g.Index, l.CurrentWidth, l.MaxWidth),
					"Host-to-GPU transfers run at a fraction of their speed.", ev, fix).ID = id
			case busy && l.CurrentGen > 0 && l.MaxGen > 0 && l.CurrentGen < l.MaxGen:
				p.Warn("pcie_link_degraded", fmt.Sprintf("GPU %d: PCIe Gen%d under load, can do Gen%d", g.Index, l.CurrentGen, l.MaxGen),
					"The link did not train to its full speed while the GPU was busy.", ev, fix).ID = id
			default:
				ok = append(ok, fmt.Sprintf("GPU %d Gen%d x%d (max Gen%d x%d)", g.Index, l.CurrentGen, l.CurrentWidth, l.MaxGen, l.MaxWidth))
			}
		}
		if len(p.findings) == 0 {
			if len(ok) == 0 {
				p.Skip("the driver does not report the PCIe link (normal under WSL 2 and some VMs)")
				return
			}
			p.OK("PCIe " + strings.Join(ok, ", "))
		}
	},
}
