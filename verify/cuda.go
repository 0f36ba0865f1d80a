//go:build cgo

package verify

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cuda_shim.h"
*/
import "C"

import (
	_ "embed"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/tfdoctor/doctor/host"
)

//go:embed kernels.ptx
var kernelsPTX string

// ptxFallbackHeader replaces kernels.ptx's header when a driver refuses the
// old one: PTX ISA 8.0 (CUDA 12.0 drivers and newer) for sm_75, the oldest
// GPU CUDA 13 supports.
const ptxFallbackHeader = ".version 8.0\n.target sm_75\n"

// CUdevice_attribute values (cuda.h).
const (
	attrMultiprocessors = 16
	attrPCIBus          = 33
	attrPCIDevice       = 34
	attrPCIDomain       = 50
	attrCCMajor         = 75
	attrCCMinor         = 76
)

// cuError is a failed driver API or cuBLAS call.
type cuError struct {
	api  string
	code int
	name string
	text string
	lib  string // "cuda" or "cublas"
}

func (e *cuError) Error() string {
	s := e.api + ": " + e.name
	if e.text != "" && e.text != e.name {
		s += " (" + e.text + ")"
	}
	return s
}

func cstr(buf []C.char) string { return C.GoString(&buf[0]) }

// check turns a driver API result into an error.
func check(api string, r C.int) error {
	code := int(r)
	switch code {
	case 0:
		return nil
	case C.DR_NOT_LOADED:
		return &cuError{api: api, code: code, name: "LIBRARY_NOT_LOADED", lib: "cuda"}
	case C.DR_NO_SYMBOL:
		return &cuError{api: api, code: code, name: "SYMBOL_NOT_FOUND", text: "libcuda has no entry point for " + api + " (driver too old?)", lib: "cuda"}
	}
	e := &cuError{api: api, code: code, name: cuResultName(code), lib: "cuda"}
	buf := make([]C.char, 256)
	if C.dr_error_name(r, &buf[0], 256) == 0 {
		e.name = cstr(buf)
	}
	if C.dr_error_string(r, &buf[0], 256) == 0 {
		e.text = cstr(buf)
	}
	return e
}

// checkBlas turns a cuBLAS status into an error.
func checkBlas(api string, r C.int) error {
	code := int(r)
	switch code {
	case 0:
		return nil
	case C.DR_NOT_LOADED:
		return &cuError{api: api, code: code, name: "LIBRARY_NOT_LOADED", lib: "cublas"}
	case C.DR_NO_SYMBOL:
		return &cuError{api: api, code: code, name: "SYMBOL_NOT_FOUND", text: "libcublas has no entry point for " + api, lib: "cublas"}
	}
	e := &cuError{api: api, code: code, name: cublasStatusName(code), lib: "cublas"}
	buf := make([]C.char, 128)
	if C.bl_status_name(r, &buf[0], 128) == 0 {
		e.name = cstr(buf)
	}
	return e
}

// device is an opened CUDA device 0 with doctor's kernels loaded.
type device struct {
	driverVersion int
	cc            [2]int
	name          string
}

// failCUDA fills r for a failed driver call.
func failCUDA(r *host.Rung, err error, e env) {
	r.Status = host.RungFail
	r.Error = err.Error()
	ce, ok := err.(*cuError)
	if !ok {
		r.Cause = causeComputeFailed
		return
	}
	r.API, r.Code = ce.api, ce.name
	switch {
	case ce.code == C.DR_NO_SYMBOL:
		r.Cause = causeDriverTooOld
	case ce.code < 0:
		r.Cause = causeComputeFailed
	default:
		r.Cause = causeOfCUresult(ce.api, ce.code, e)
		if h := cuResultHint(ce.code, e); h != "" {
			r.Error += ": " + h
		}
	}
	r.Summary = fmt.Sprintf("%s failed: %s", ce.api, ce.name)
}

// openDevice loads libcuda, initialises CUDA, describes device 0, makes its
// primary context current and loads doctor's kernels. On failure r says why.
func openDevice(req childRequest, e env, r *host.Rung) (*device, bool) {
	errBuf := make([]C.char, 1024)
	path := C.CString(req.LibCUDA)
	defer C.free(unsafe.Pointer(path))
	if C.dr_open(path, &errBuf[0], 1024) != 0 {
		r.Status = host.RungFail
		r.API, r.Code = "dlopen", "LIBRARY_NOT_FOUND"
		r.Cause = causeOfLoadFailure(e)
		r.Error = fmt.Sprintf("dlopen(%s): %s", req.LibCUDA, cstr(errBuf))
		r.Summary = req.LibCUDA + " could not be loaded: no NVIDIA driver library on the loader's path"
		if e.WSL {
			r.Summary = req.LibCUDA + " could not be loaded: WSL's /usr/lib/wsl/lib is not on the loader's path"
		}
		if strings.Contains(req.LibCUDA, "/") {
			// A file named by path (--libcuda): the loader's path is not
			// involved, and a file that is there but does not load is not
			// a missing driver.
			if _, err := os.Stat(req.LibCUDA); err != nil {
				r.Summary = req.LibCUDA + " could not be loaded: no such file"
			} else {
				r.Code, r.Cause = "LIBRARY_NOT_LOADABLE", causeComputeFailed
				r.Summary = req.LibCUDA + " could not be loaded: the named file is not a loadable library"
			}
		}
		return nil, false
	}
	if C.dr_loaded_from(&errBuf[0], 1024) == 0 {
		lib := cstr(errBuf)
		if r.Name == host.RungDriver {
			r.Library = lib
		} else {
			r.Facts["libcuda"] = lib
		}
		if real, err := filepath.EvalSymlinks(lib); err == nil && real != lib {
			r.Facts["libcuda_file"] = real
		}
	}
	d := &device{}
	if err := check("cuInit", C.dr_init()); err != nil {
		failCUDA(r, err, e)
		return nil, false
	}
	var v C.int
	if check("cuDriverGetVersion", C.dr_driver_version(&v)) == nil {
		d.driverVersion = int(v)
		r.Facts["driver_cuda_version"] = host.CUDAVersionString(int(v))
	}
	var count C.int
	if err := check("cuDeviceGetCount", C.dr_device_count(&count)); err != nil {
		failCUDA(r, err, e)
		return nil, false
	}
	if count == 0 {
		// cuInit succeeded yet no device is visible: report it the way
		// cuInit reports it.
		failCUDA(r, &cuError{api: "cuDeviceGetCount", code: 100, name: "CUDA_ERROR_NO_DEVICE", text: "no CUDA-capable device is detected"}, e)
		return nil, false
	}
	var dev C.int
	if err := check("cuDeviceGet", C.dr_device_get(0, &dev)); err != nil {
		failCUDA(r, err, e)
		return nil, false
	}
	info := &host.RungDevice{Count: int(count)}
	name := make([]C.char, 256)
	if check("cuDeviceGetName", C.dr_device_name(dev, &name[0], 256)) == nil {
		info.Name = cstr(name)
	}
	attr := func(a int) int {
		var x C.int
		if C.dr_device_attr(dev, C.int(a), &x) != 0 {
			return -1
		}
		return int(x)
	}
	d.cc = [2]int{attr(attrCCMajor), attr(attrCCMinor)}
	if d.cc[0] >= 0 {
		info.ComputeCapability = fmt.Sprintf("%d.%d", d.cc[0], d.cc[1])
	}
	if n := attr(attrMultiprocessors); n > 0 {
		info.Multiprocessors = n
	}
	if bus, slot, dom := attr(attrPCIBus), attr(attrPCIDevice), attr(attrPCIDomain); bus >= 0 && slot >= 0 && dom >= 0 {
		info.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.0", dom, bus, slot)
	}
	var mem C.size_t
	if C.dr_device_total_mem(dev, &mem) == 0 {
		info.MemoryMiB = uint64(mem) >> 20
	}
	d.name = info.Name
	r.Device = info
	if err := check("cuDevicePrimaryCtxRetain", C.dr_primary_ctx_retain(dev)); err != nil {
		failCUDA(r, err, e)
		return nil, false
	}
	if err := loadKernels(r); err != nil {
		failCUDA(r, err, e)
		return nil, false
	}
	return d, true
}

// loadKernels has the driver JIT-compile kernels.ptx, retrying once with a
// newer PTX header if the driver refuses the old one.
func loadKernels(r *host.Rung) error {
	log := make([]C.char, 4096)
	try := func(src string) error {
		img := C.CString(src)
		defer C.free(unsafe.Pointer(img))
		err := check("cuModuleLoadDataEx", C.dr_module_load(img, &log[0], 4096))
		if ce, ok := err.(*cuError); ok {
			if msg := strings.TrimSpace(cstr(log)); msg != "" {
				ce.text = strings.TrimSpace(ce.text + "; JIT log: " + msg)
			}
		}
		return err
	}
	err := try(kernelsPTX)
	if err == nil {
		r.Facts["ptx_target"] = "sm_50 (PTX ISA 6.0)"
		return nil
	}
	if ce, ok := err.(*cuError); ok {
		switch ce.code {
		case 200, 209, 218, 222: // invalid image, no binary, invalid PTX, PTX version
			src := strings.Replace(kernelsPTX, ".version 6.0\n.target sm_50\n", ptxFallbackHeader, 1)
			if err2 := try(src); err2 == nil {
				r.Facts["ptx_target"] = "sm_75 (PTX ISA 8.0)"
				r.Facts["ptx_first_error"] = err.Error()
				return nil
			}
		}
	}
	return err
}

func closeDevice() {
	C.dr_module_unload()
	C.dr_events_destroy()
	var dev C.int
	if C.dr_device_get(0, &dev) == 0 {
		C.dr_primary_ctx_release(dev)
	}
}

// buffer is device memory.
type buffer struct {
	ptr   C.dr_ptr
	bytes int
}

func alloc(bytes int) (buffer, error) {
	var p C.dr_ptr
	err := check("cuMemAlloc", C.dr_mem_alloc(&p, C.size_t(bytes)))
	return buffer{ptr: p, bytes: bytes}, err
}

func (b buffer) free() {
	if b.ptr != 0 {
		C.dr_mem_free(b.ptr)
	}
}

// runDriver is rung 1: a kernel the driver compiled from PTX, run on
// device 0 and checked element by element.
func runDriver(req childRequest, e env) host.Rung {
	r := host.Rung{Name: host.RungDriver, Facts: map[string]string{}}
	if _, ok := openDevice(req, e, &r); !ok {
		return r
	}
	defer closeDevice()
	const n = 1 << 20
	const a = float32(2)
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i] = float32(i % 1024)
		y[i] = float32(i % 7)
	}
	dx, err := alloc(4 * n)
	if err != nil {
		failCUDA(&r, err, e)
		return r
	}
	defer dx.free()
	dy, err := alloc(4 * n)
	if err != nil {
		failCUDA(&r, err, e)
		return r
	}
	defer dy.free()
	steps := []func() error{
		func() error { return check("cuMemcpyHtoD", C.dr_memcpy_htod(dx.ptr, unsafe.Pointer(&x[0]), 4*n)) },
		func() error { return check("cuMemcpyHtoD", C.dr_memcpy_htod(dy.ptr, unsafe.Pointer(&y[0]), 4*n)) },
		func() error { return check("cuLaunchKernel", C.dr_launch_saxpy(dx.ptr, dy.ptr, C.float(a), n)) },
		func() error { return check("cuCtxSynchronize", C.dr_ctx_synchronize()) },
		func() error { return check("cuMemcpyDtoH", C.dr_memcpy_dtoh(unsafe.Pointer(&y[0]), dy.ptr, 4*n)) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			failCUDA(&r, err, e)
			return r
		}
	}
	bad, first := 0, -1
	for i := range y {
		want := a*float32(i%1024) + float32(i%7)
		if y[i] != want {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	dev := r.Device.Name
	if r.Device.ComputeCapability != "" {
		dev += " (cc " + r.Device.ComputeCapability + ")"
	}
	r.Facts["elements"] = fmt.Sprint(n)
	if bad > 0 {
		r.Status = host.RungFail
		r.Cause = causeComputeFailed
		r.API = "doctor_saxpy"
		r.Code = "WRONG_RESULT"
		i := first
		r.Error = fmt.Sprintf("%d of %d elements wrong; first at %d: got %g, want %g", bad, n, i, y[i], a*float32(i%1024)+float32(i%7))
		r.Summary = "the GPU computed wrong results on " + dev
		return r
	}
	r.Status = host.RungPass
	r.Summary = "PTX kernel compiled by the driver ran correctly on " + dev
	return r
}

// Products the libraries rung times, in order.
var gemmTypes = []string{"bf16", "tf32", "fp32"}

// cuBLAS math modes (cublasMath_t) and library properties.
const (
	cublasDefaultMath = 0
	cublasTF32Math    = 3
	propMajor         = 0
	propMinor         = 1
	propPatch         = 2
)

// warm-up: at least this many products and this much GPU time, so clocks
// and caches have settled and one-time costs (kernel loading, heuristics)
// are paid before timing. The first product type warms the GPU up; the
// next ones only need their own kernels loaded and selected.
const (
	warmupMin     = 3
	warmupFirstMS = 100
	warmupLaterMS = 25
	warmupLimit   = 500
)

// runLibraries is rung 2: GEMMs through cuBLAS on GPU-generated data,
// timed with CUDA events after warm-up and checked against a float64 CPU
// reference.
func runLibraries(req childRequest, e env, gate func()) host.Rung {
	r := host.Rung{Name: host.RungLibraries, Facts: map[string]string{}}
	d, ok := openDevice(req, e, &r)
	if !ok {
		return r
	}
	defer closeDevice()
	defer C.bl_close()
	if !openCublas(req, d, &r) {
		return r
	}
	if err := checkBlas("cublasCreate_v2", C.bl_create()); err != nil {
		failBlas(&r, err, d)
		return r
	}
	var ver C.int
	if C.bl_version(&ver) == 0 {
		v := int(ver)
		r.Facts["cublas_version"] = fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
	}
	types := []string{"fp32"}
	if d.cc[0] >= 8 {
		types = gemmTypes
	}
	size := req.Size
	need := func(s int) int {
		b := 3 * s * s * 4
		if d.cc[0] >= 8 {
			b += 3 * s * s * 2
		}
		return b
	}
	var free, total C.size_t
	if C.dr_mem_get_info(&free, &total) == 0 {
		for size > 1024 && float64(need(size)) > 0.9*float64(free) {
			size /= 2
		}
		if size != req.Size {
			r.Facts["size_reduced"] = fmt.Sprintf("%d to %d: %d MiB free on the GPU", req.Size, size, uint64(free)>>20)
		}
	}
	g := &gemmRun{m: size, n: size, k: size, runs: req.Runs}
	defer g.free()
	if err := g.setup(d.cc[0] >= 8); err != nil {
		failCUDA(&r, err, e)
		return r
	}
	samples := req.Samples
	if samples <= 0 {
		samples = 128
	}
	g.sample(samples)
	gate()
	if err := check("cuEventCreate", C.dr_events_create(C.int(2+2*req.Runs))); err != nil {
		failCUDA(&r, err, e)
		return r
	}
	var parts []string
	for i, t := range types {
		warm := float64(warmupLaterMS)
		if i == 0 {
			warm = warmupFirstMS
		}
		f, err := g.time(t, warm)
		if err != nil {
			if ce, ok := err.(*cuError); ok && ce.lib == "cublas" {
				failBlas(&r, err, d)
			} else {
				failCUDA(&r, err, e)
			}
			r.Summary = t + " GEMM: " + r.Summary
			return r
		}
		f.ExpectedTFLOPS, _ = expectedTFLOPS(d.name, t)
		r.Figures = append(r.Figures, f)
		parts = append(parts, figureText(f))
	}
	for _, f := range r.Figures {
		if !f.Correct {
			r.Status = host.RungFail
			r.Cause = causeComputeFailed
			r.API, r.Code = "cublasGemm", "WRONG_RESULT"
			r.Error = fmt.Sprintf("%s GEMM: result entries differ from the CPU reference by up to %.3g (tolerance %.0e)", f.DType, f.MaxError, f.Tolerance)
			r.Summary = "cuBLAS computed wrong results"
			return r
		}
	}
	r.Status = host.RungPass
	r.Summary = fmt.Sprintf("cuBLAS %s %d³: %s; results checked", r.Facts["cublas_version"], size, strings.Join(parts, ", "))
	return r
}

// openCublas loads the first libcublas candidate that the driver can run,
// preferring the order given. With none compatible, it keeps the first that
// loads so its failure can be reported.
func openCublas(req childRequest, d *device, r *host.Rung) bool {
	errBuf := make([]C.char, 1024)
	var loadErrs []string
	var fallback string
	for _, cand := range req.Cublas {
		preloadCublasLt(cand)
		p := C.CString(cand)
		rc := C.bl_open(p, &errBuf[0], 1024)
		C.free(unsafe.Pointer(p))
		if rc != 0 {
			loadErrs = append(loadErrs, cstr(errBuf))
			continue
		}
		var major C.int
		if C.bl_property(propMajor, &major) == 0 && d.driverVersion > 0 && int(major) > d.driverVersion/1000 {
			if fallback == "" {
				fallback = cand
			}
			loadErrs = append(loadErrs, fmt.Sprintf("%s: cuBLAS for CUDA %d, the driver supports CUDA %s", cand, int(major), host.CUDAVersionString(d.driverVersion)))
			C.bl_close()
			continue
		}
		noteCublas(cand, r)
		return true
	}
	if fallback != "" {
		p := C.CString(fallback)
		rc := C.bl_open(p, &errBuf[0], 1024)
		C.free(unsafe.Pointer(p))
		if rc == 0 {
			noteCublas(fallback, r)
			r.Facts["cublas_rejected"] = strings.Join(loadErrs, "; ")
			return true
		}
	}
	r.Status = host.RungFail
	r.Cause = causeCublasMissing
	r.API, r.Code = "dlopen", "LIBRARY_NOT_FOUND"
	r.Summary = "no libcublas could be loaded"
	if len(req.Cublas) == 0 {
		r.Error = "no libcublas candidate was found"
	} else {
		r.Error = "tried " + strings.Join(req.Cublas, ", ") + ": " + strings.Join(loadErrs, "; ")
	}
	return false
}

// preloadCublasLt loads libcublasLt.so.N from the folder of a
// libcublas.so.N file first, so that libcublas finds its sibling even where
// the wheel or package did not set an $ORIGIN run path (the loader matches a
// dependency against libraries already loaded, by soname).
func preloadCublasLt(cand string) {
	dir, base := filepath.Split(cand)
	if dir == "" || !strings.HasPrefix(base, "libcublas.so.") {
		return
	}
	lt := filepath.Join(dir, "libcublasLt.so."+strings.TrimPrefix(base, "libcublas.so."))
	if _, err := os.Stat(lt); err != nil {
		return
	}
	p := C.CString(lt)
	defer C.free(unsafe.Pointer(p))
	C.bl_preload(p)
}

func noteCublas(cand string, r *host.Rung) {
	buf := make([]C.char, 1024)
	r.Library = cand
	if C.bl_loaded_from(&buf[0], 1024) == 0 {
		r.Library = cstr(buf)
	}
	var maj, min, patch C.int
	if C.bl_property(propMajor, &maj) == 0 && C.bl_property(propMinor, &min) == 0 && C.bl_property(propPatch, &patch) == 0 {
		r.Facts["cublas_version"] = fmt.Sprintf("%d.%d.%d", maj, min, patch)
	}
}

func failBlas(r *host.Rung, err error, d *device) {
	r.Status = host.RungFail
	r.Error = err.Error()
	ce, ok := err.(*cuError)
	if !ok {
		r.Cause = causeComputeFailed
		return
	}
	r.API, r.Code = ce.api, ce.name
	var major C.int
	libMajor := 0
	if C.bl_property(propMajor, &major) == 0 {
		libMajor = int(major)
	}
	r.Cause = causeOfCublasStatus(ce.code, libMajor, d.driverVersion)
	if r.Cause == causeDriverTooOld {
		r.Error += fmt.Sprintf(": cuBLAS for CUDA %d needs a newer driver than this one (CUDA %s)", libMajor, host.CUDAVersionString(d.driverVersion))
	}
	r.Summary = fmt.Sprintf("%s failed: %s", ce.api, ce.name)
}

// gemmRun holds the matrices of the timed products.
type gemmRun struct {
	m, n, k  int
	runs     int
	a32, b32 buffer
	c32      buffer
	a16, b16 buffer
	c16      buffer
	entries  []entry
	want     []float64
	scale    []float64
}

func (g *gemmRun) free() {
	for _, b := range []buffer{g.a32, g.b32, g.c32, g.a16, g.b16, g.c16} {
		b.free()
	}
}

// setup allocates the matrices and fills A and B on the GPU.
func (g *gemmRun) setup(bf16 bool) error {
	var err error
	mk, kn, mn := g.m*g.k, g.k*g.n, g.m*g.n
	if g.a32, err = alloc(4 * mk); err != nil {
		return err
	}
	if g.b32, err = alloc(4 * kn); err != nil {
		return err
	}
	if g.c32, err = alloc(4 * mn); err != nil {
		return err
	}
	if err := check("cuLaunchKernel", C.dr_launch_fill_f32(g.a32.ptr, C.uint(mk), C.uint(seedA))); err != nil {
		return err
	}
	if err := check("cuLaunchKernel", C.dr_launch_fill_f32(g.b32.ptr, C.uint(kn), C.uint(seedB))); err != nil {
		return err
	}
	if bf16 {
		if g.a16, err = alloc(2 * mk); err != nil {
			return err
		}
		if g.b16, err = alloc(2 * kn); err != nil {
			return err
		}
		if g.c16, err = alloc(2 * mn); err != nil {
			return err
		}
		if err := check("cuLaunchKernel", C.dr_launch_fill_bf16(g.a16.ptr, C.uint(mk), C.uint(seedA))); err != nil {
			return err
		}
		if err := check("cuLaunchKernel", C.dr_launch_fill_bf16(g.b16.ptr, C.uint(kn), C.uint(seedB))); err != nil {
			return err
		}
	}
	return check("cuCtxSynchronize", C.dr_ctx_synchronize())
}

// sample chooses the checked entries and computes their reference values
// (shared by every product type: the inputs are the same numbers).
func (g *gemmRun) sample(n int) {
	g.entries = sampleEntries(g.m, g.n, n)
	g.want = make([]float64, len(g.entries))
	g.scale = make([]float64, len(g.entries))
	for i, e := range g.entries {
		g.want[i], g.scale[i] = reference(g.m, g.k, e)
	}
}

// product returns the function that enqueues one product of type t.
func (g *gemmRun) product(t string) (func() error, error) {
	m, n, k := C.int(g.m), C.int(g.n), C.int(g.k)
	switch t {
	case "fp32", "tf32":
		mode := cublasDefaultMath
		if t == "tf32" {
			mode = cublasTF32Math
		}
		if err := checkBlas("cublasSetMathMode", C.bl_set_math_mode(C.int(mode))); err != nil {
			return nil, err
		}
		return func() error { return checkBlas("cublasSgemm_v2", C.bl_sgemm(m, n, k, g.a32.ptr, g.b32.ptr, g.c32.ptr)) }, nil
	case "bf16":
		if err := checkBlas("cublasSetMathMode", C.bl_set_math_mode(cublasDefaultMath)); err != nil {
			return nil, err
		}
		return func() error {
			return checkBlas("cublasGemmEx", C.bl_gemm_bf16(m, n, k, g.a16.ptr, g.b16.ptr, g.c16.ptr))
		}, nil
	}
	return nil, fmt.Errorf("unknown product type %q", t)
}

// elapsed is the GPU time between two recorded events.
func elapsed(from, to int) (float64, error) {
	var ms C.float
	if err := check("cuEventSynchronize", C.dr_event_synchronize(C.int(to))); err != nil {
		return 0, err
	}
	if err := check("cuEventElapsedTime", C.dr_event_elapsed(C.int(from), C.int(to), &ms)); err != nil {
		return 0, err
	}
	return float64(ms), nil
}

// time warms up, then times g.runs products of type t one by one with CUDA
// events, and checks the sampled entries of the last result.
func (g *gemmRun) time(t string, warmupMS float64) (host.Figure, error) {
	f := host.Figure{DType: t, M: g.m, N: g.n, K: g.k, Runs: g.runs, PerSample: 1, Timing: "cuda_events", Tolerance: tolerances[t]}
	gemm, err := g.product(t)
	if err != nil {
		return f, err
	}
	// Warm-up in batches until both minimums are met.
	done, spent, batch := 0, 0.0, warmupMin
	for {
		if err := check("cuEventRecord", C.dr_event_record(0)); err != nil {
			return f, err
		}
		for i := 0; i < batch; i++ {
			if err := gemm(); err != nil {
				return f, err
			}
		}
		if err := check("cuEventRecord", C.dr_event_record(1)); err != nil {
			return f, err
		}
		ms, err := elapsed(0, 1)
		if err != nil {
			return f, err
		}
		done += batch
		spent += ms
		if spent >= warmupMS || done >= warmupLimit {
			break
		}
		per := ms / float64(batch)
		if per <= 0 {
			per = 0.001
		}
		batch = int(math.Ceil((warmupMS - spent) / per))
		batch = max(1, min(batch, warmupLimit-done))
	}
	// Timed runs, each between its own pair of events.
	for i := 0; i < g.runs; i++ {
		if err := check("cuEventRecord", C.dr_event_record(C.int(2+2*i))); err != nil {
			return f, err
		}
		if err := gemm(); err != nil {
			return f, err
		}
		if err := check("cuEventRecord", C.dr_event_record(C.int(3+2*i))); err != nil {
			return f, err
		}
	}
	times := make([]float64, g.runs)
	for i := range times {
		if times[i], err = elapsed(2+2*i, 3+2*i); err != nil {
			return f, err
		}
	}
	f.MedianMS, f.MinMS, f.MaxMS = stats(times)
	f.TFLOPS = tflops(g.m, g.n, g.k, f.MedianMS)
	return f, g.verify(&f)
}

// verify reads the sampled entries of C back and compares them with the
// float64 reference.
func (g *gemmRun) verify(f *host.Figure) error {
	f.Correct = true
	for i, e := range g.entries {
		idx := e.i + e.j*g.m
		var got float64
		if f.DType == "bf16" {
			var h uint16
			if err := check("cuMemcpyDtoH", C.dr_memcpy_dtoh(unsafe.Pointer(&h), g.c16.ptr+C.dr_ptr(2*idx), 2)); err != nil {
				return err
			}
			got = bf16ToFloat(h)
		} else {
			var x float32
			if err := check("cuMemcpyDtoH", C.dr_memcpy_dtoh(unsafe.Pointer(&x), g.c32.ptr+C.dr_ptr(4*idx), 4)); err != nil {
				return err
			}
			got = float64(x)
		}
		rel := relError(got, g.want[i], g.scale[i])
		f.Checked++
		if rel > f.MaxError || math.IsInf(rel, 1) {
			f.MaxError = rel
		}
		if !(rel <= f.Tolerance) {
			f.Correct = false
		}
	}
	if math.IsInf(f.MaxError, 1) {
		f.MaxError = math.MaxFloat64 // JSON cannot carry infinity
	}
	return nil
}
