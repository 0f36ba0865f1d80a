//go:build cgo

/*
 * See cuda_shim.h. The prototypes below restate the documented CUDA driver
 * API and cuBLAS ABI (cuda.h, cublas_api.h, library_types.h) for the few
 * calls doctor makes; the headers are not needed to build doctor.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda_shim.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;

/* CUjit_option values (cuda.h). */
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/* Driver API entry points, under their versioned symbol names. */
static void *dr_lib;
static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDriverGetVersion)(int *);
static CUresult (*p_cuGetErrorName)(CUresult, const char **);
static CUresult (*p_cuGetErrorString)(CUresult, const char **);
static CUresult (*p_cuDeviceGetCount)(int *);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*p_cuDeviceTotalMem)(size_t *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRelease)(CUdevice);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);
static CUresult (*p_cuMemAlloc)(dr_ptr *, size_t);
static CUresult (*p_cuMemFree)(dr_ptr);
static CUresult (*p_cuMemcpyHtoD)(dr_ptr, const void *, size_t);
static CUresult (*p_cuMemcpyDtoH)(void *, dr_ptr, size_t);
static CUresult (*p_cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
static CUresult (*p_cuModuleUnload)(CUmodule);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, CUstream, void **, void **);
static CUresult (*p_cuEventCreate)(CUevent *, unsigned);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventSynchronize)(CUevent);
static CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*p_cuEventDestroy)(CUevent);

static CUmodule dr_module;
static CUfunction fn_saxpy, fn_fill_f32, fn_fill_bf16;
static CUcontext dr_ctx;

#define MAX_EVENTS 512
static CUevent events[MAX_EVENTS];
static int n_events;

static void copy_err(char *err, int errlen, const char *msg) {
    if (err && errlen > 0) {
        snprintf(err, (size_t)errlen, "%s", msg ? msg : "unknown error");
    }
}

#define SYM(lib, var, name) (*(void **)(&(var)) = dlsym((lib), (name)))

int dr_open(const char *path, char *err, int errlen) {
    dlerror();
    dr_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dr_lib) {
        copy_err(err, errlen, dlerror());
        return DR_NOT_LOADED;
    }
    SYM(dr_lib, p_cuInit, "cuInit");
    SYM(dr_lib, p_cuDriverGetVersion, "cuDriverGetVersion");
    SYM(dr_lib, p_cuGetErrorName, "cuGetErrorName");
    SYM(dr_lib, p_cuGetErrorString, "cuGetErrorString");
    SYM(dr_lib, p_cuDeviceGetCount, "cuDeviceGetCount");
    SYM(dr_lib, p_cuDeviceGet, "cuDeviceGet");
    SYM(dr_lib, p_cuDeviceGetName, "cuDeviceGetName");
    SYM(dr_lib, p_cuDeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(dr_lib, p_cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    SYM(dr_lib, p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    SYM(dr_lib, p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    if (!p_cuDevicePrimaryCtxRelease) {
        SYM(dr_lib, p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease");
    }
    SYM(dr_lib, p_cuCtxSetCurrent, "cuCtxSetCurrent");
    SYM(dr_lib, p_cuCtxSynchronize, "cuCtxSynchronize");
    SYM(dr_lib, p_cuMemGetInfo, "cuMemGetInfo_v2");
    SYM(dr_lib, p_cuMemAlloc, "cuMemAlloc_v2");
    SYM(dr_lib, p_cuMemFree, "cuMemFree_v2");
    SYM(dr_lib, p_cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    SYM(dr_lib, p_cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    SYM(dr_lib, p_cuModuleLoadDataEx, "cuModuleLoadDataEx");
    SYM(dr_lib, p_cuModuleUnload, "cuModuleUnload");
    SYM(dr_lib, p_cuModuleGetFunction, "cuModuleGetFunction");
    SYM(dr_lib, p_cuLaunchKernel, "cuLaunchKernel");
    SYM(dr_lib, p_cuEventCreate, "cuEventCreate");
    SYM(dr_lib, p_cuEventRecord, "cuEventRecord");
    SYM(dr_lib, p_cuEventSynchronize, "cuEventSynchronize");
    SYM(dr_lib, p_cuEventElapsedTime, "cuEventElapsedTime");
    SYM(dr_lib, p_cuEventDestroy, "cuEventDestroy_v2");
    return 0;
}

static int loaded_from(void *sym, char *buf, int len) {
    Dl_info info;
    if (!sym || !dladdr(sym, &info) || !info.dli_fname) {
        return DR_NO_SYMBOL;
    }
    snprintf(buf, (size_t)len, "%s", info.dli_fname);
    return 0;
}

int dr_loaded_from(char *buf, int len) { return loaded_from((void *)p_cuInit, buf, len); }

#define NEED(p)                          \
    do {                                 \
        if (!dr_lib) return DR_NOT_LOADED; \
        if (!(p)) return DR_NO_SYMBOL;   \
    } while (0)

int dr_error_name(int code, char *buf, int len) {
    const char *s = NULL;
    NEED(p_cuGetErrorName);
    CUresult r = p_cuGetErrorName(code, &s);
    if (r == 0 && s) snprintf(buf, (size_t)len, "%s", s);
    return r;
}

int dr_error_string(int code, char *buf, int len) {
    const char *s = NULL;
    NEED(p_cuGetErrorString);
    CUresult r = p_cuGetErrorString(code, &s);
    if (r == 0 && s) snprintf(buf, (size_t)len, "%s", s);
    return r;
}

int dr_init(void) { NEED(p_cuInit); return p_cuInit(0); }
int dr_driver_version(int *v) { NEED(p_cuDriverGetVersion); return p_cuDriverGetVersion(v); }
int dr_device_count(int *n) { NEED(p_cuDeviceGetCount); return p_cuDeviceGetCount(n); }
int dr_device_get(int ordinal, int *dev) { NEED(p_cuDeviceGet); return p_cuDeviceGet(dev, ordinal); }
int dr_device_name(int dev, char *buf, int len) { NEED(p_cuDeviceGetName); return p_cuDeviceGetName(buf, len, dev); }
int dr_device_attr(int dev, int attr, int *v) { NEED(p_cuDeviceGetAttribute); return p_cuDeviceGetAttribute(v, attr, dev); }
int dr_device_total_mem(int dev, size_t *bytes) { NEED(p_cuDeviceTotalMem); return p_cuDeviceTotalMem(bytes, dev); }

int dr_primary_ctx_retain(int dev) {
    NEED(p_cuDevicePrimaryCtxRetain);
    NEED(p_cuCtxSetCurrent);
    CUresult r = p_cuDevicePrimaryCtxRetain(&dr_ctx, dev);
    if (r != 0) return r;
    return p_cuCtxSetCurrent(dr_ctx);
}

int dr_primary_ctx_release(int dev) { NEED(p_cuDevicePrimaryCtxRelease); return p_cuDevicePrimaryCtxRelease(dev); }
int dr_mem_get_info(size_t *f, size_t *t) { NEED(p_cuMemGetInfo); return p_cuMemGetInfo(f, t); }
int dr_mem_alloc(dr_ptr *p, size_t bytes) { NEED(p_cuMemAlloc); return p_cuMemAlloc(p, bytes); }
int dr_mem_free(dr_ptr p) { NEED(p_cuMemFree); return p_cuMemFree(p); }
int dr_memcpy_htod(dr_ptr dst, const void *src, size_t bytes) { NEED(p_cuMemcpyHtoD); return p_cuMemcpyHtoD(dst, src, bytes); }
int dr_memcpy_dtoh(void *dst, dr_ptr src, size_t bytes) { NEED(p_cuMemcpyDtoH); return p_cuMemcpyDtoH(dst, src, bytes); }
int dr_ctx_synchronize(void) { NEED(p_cuCtxSynchronize); return p_cuCtxSynchronize(); }

int dr_module_load(const char *image, char *log, int loglen) {
    NEED(p_cuModuleLoadDataEx);
    NEED(p_cuModuleGetFunction);
    int opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, (void *)(size_t)loglen};
    if (log && loglen > 0) log[0] = 0;
    CUresult r = p_cuModuleLoadDataEx(&dr_module, image, 2, opts, vals);
    if (r != 0) return r;
    if ((r = p_cuModuleGetFunction(&fn_saxpy, dr_module, "doctor_saxpy")) != 0) return r;
    if ((r = p_cuModuleGetFunction(&fn_fill_f32, dr_module, "doctor_fill_f32")) != 0) return r;
    return p_cuModuleGetFunction(&fn_fill_bf16, dr_module, "doctor_fill_bf16");
}

int dr_module_unload(void) {
    NEED(p_cuModuleUnload);
    if (!dr_module) return 0;
    CUresult r = p_cuModuleUnload(dr_module);
    dr_module = NULL;
    return r;
}

#define BLOCK 256u

static int launch(CUfunction f, unsigned n, void **params) {
    NEED(p_cuLaunchKernel);
    if (!f) return DR_NO_SYMBOL;
    unsigned grid = (n + BLOCK - 1) / BLOCK;
    if (grid == 0) grid = 1;
    return p_cuLaunchKernel(f, grid, 1, 1, BLOCK, 1, 1, 0, NULL, params, NULL);
}

int dr_launch_saxpy(dr_ptr x, dr_ptr y, float a, unsigned n) {
    void *params[] = {&x, &y, &a, &n};
    return launch(fn_saxpy, n, params);
}

int dr_launch_fill_f32(dr_ptr p, unsigned n, unsigned seed) {
    void *params[] = {&p, &n, &seed};
    return launch(fn_fill_f32, n, params);
}

int dr_launch_fill_bf16(dr_ptr p, unsigned n, unsigned seed) {
    void *params[] = {&p, &n, &seed};
    return launch(fn_fill_bf16, n, params);
}

int dr_events_create(int n) {
    NEED(p_cuEventCreate);
    if (n > MAX_EVENTS) n = MAX_EVENTS;
    dr_events_destroy();
    for (int i = 0; i < n; i++) {
        CUresult r = p_cuEventCreate(&events[i], 0);
        if (r != 0) return r;
        n_events = i + 1;
    }
    return 0;
}

int dr_event_record(int i) {
    NEED(p_cuEventRecord);
    if (i < 0 || i >= n_events) return 1; /* CUDA_ERROR_INVALID_VALUE */
    return p_cuEventRecord(events[i], NULL);
}

int dr_event_synchronize(int i) {
    NEED(p_cuEventSynchronize);
    if (i < 0 || i >= n_events) return 1;
    return p_cuEventSynchronize(events[i]);
}

int dr_event_elapsed(int from, int to, float *ms) {
    NEED(p_cuEventElapsedTime);
    if (from < 0 || to < 0 || from >= n_events || to >= n_events) return 1;
    return p_cuEventElapsedTime(ms, events[from], events[to]);
}

void dr_events_destroy(void) {
    for (int i = 0; i < n_events; i++) {
        if (p_cuEventDestroy && events[i]) p_cuEventDestroy(events[i]);
        events[i] = NULL;
    }
    n_events = 0;
}

/* ---- cuBLAS ---- */

typedef void *cublasHandle_t;
typedef int cublasStatus_t;

/* cublasOperation_t, cudaDataType_t, cublasComputeType_t, cublasGemmAlgo_t */
#define CUBLAS_OP_N 0
#define CUDA_R_32F 0
#define CUDA_R_16BF 14
#define CUBLAS_COMPUTE_32F 68
#define CUBLAS_GEMM_DEFAULT (-1)

static void *bl_lib;
static cublasHandle_t bl_handle;
static cublasStatus_t (*p_cublasCreate)(cublasHandle_t *);
static cublasStatus_t (*p_cublasDestroy)(cublasHandle_t);
static cublasStatus_t (*p_cublasGetVersion)(cublasHandle_t, int *);
static cublasStatus_t (*p_cublasGetProperty)(int, int *);
static const char *(*p_cublasGetStatusName)(cublasStatus_t);
static cublasStatus_t (*p_cublasSetMathMode)(cublasHandle_t, int);
static cublasStatus_t (*p_cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
                                       const float *, int, const float *, float *, int);
static cublasStatus_t (*p_cublasGemmEx)(cublasHandle_t, int, int, int, int, int, const void *, const void *, int, int,
                                        const void *, int, int, const void *, void *, int, int, int, int);

/* bl_preload loads a library cuBLAS depends on (libcublasLt) and keeps it
 * loaded for the life of the process. */
int bl_preload(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL) ? 0 : DR_NOT_LOADED; }

int bl_open(const char *path, char *err, int errlen) {
    bl_close();
    dlerror();
    bl_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!bl_lib) {
        copy_err(err, errlen, dlerror());
        return DR_NOT_LOADED;
    }
    SYM(bl_lib, p_cublasCreate, "cublasCreate_v2");
    SYM(bl_lib, p_cublasDestroy, "cublasDestroy_v2");
    SYM(bl_lib, p_cublasGetVersion, "cublasGetVersion_v2");
    SYM(bl_lib, p_cublasGetProperty, "cublasGetProperty");
    SYM(bl_lib, p_cublasGetStatusName, "cublasGetStatusName");
    SYM(bl_lib, p_cublasSetMathMode, "cublasSetMathMode");
    SYM(bl_lib, p_cublasSgemm, "cublasSgemm_v2");
    SYM(bl_lib, p_cublasGemmEx, "cublasGemmEx");
    return 0;
}

int bl_loaded_from(char *buf, int len) { return loaded_from((void *)p_cublasCreate, buf, len); }

void bl_close(void) {
    if (bl_handle && p_cublasDestroy) p_cublasDestroy(bl_handle);
    bl_handle = NULL;
    if (bl_lib) dlclose(bl_lib);
    bl_lib = NULL;
    p_cublasCreate = NULL;
    p_cublasDestroy = NULL;
    p_cublasGetVersion = NULL;
    p_cublasGetProperty = NULL;
    p_cublasGetStatusName = NULL;
    p_cublasSetMathMode = NULL;
    p_cublasSgemm = NULL;
    p_cublasGemmEx = NULL;
}

#define BNEED(p)                           \
    do {                                   \
        if (!bl_lib) return DR_NOT_LOADED; \
        if (!(p)) return DR_NO_SYMBOL;     \
    } while (0)

int bl_property(int type, int *v) { BNEED(p_cublasGetProperty); return p_cublasGetProperty(type, v); }

int bl_status_name(int code, char *buf, int len) {
    BNEED(p_cublasGetStatusName);
    const char *s = p_cublasGetStatusName(code);
    if (!s) return DR_NO_SYMBOL;
    snprintf(buf, (size_t)len, "%s", s);
    return 0;
}

int bl_create(void) { BNEED(p_cublasCreate); return p_cublasCreate(&bl_handle); }

int bl_destroy(void) {
    BNEED(p_cublasDestroy);
    if (!bl_handle) return 0;
    int r = p_cublasDestroy(bl_handle);
    bl_handle = NULL;
    return r;
}

int bl_version(int *v) { BNEED(p_cublasGetVersion); return p_cublasGetVersion(bl_handle, v); }
int bl_set_math_mode(int mode) { BNEED(p_cublasSetMathMode); return p_cublasSetMathMode(bl_handle, mode); }

int bl_sgemm(int m, int n, int k, dr_ptr a, dr_ptr b, dr_ptr c) {
    BNEED(p_cublasSgemm);
    const float alpha = 1.0f, beta = 0.0f;
    return p_cublasSgemm(bl_handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, (const float *)(size_t)a, m,
                         (const float *)(size_t)b, k, &beta, (float *)(size_t)c, m);
}

int bl_gemm_bf16(int m, int n, int k, dr_ptr a, dr_ptr b, dr_ptr c) {
    BNEED(p_cublasGemmEx);
    const float alpha = 1.0f, beta = 0.0f;
    return p_cublasGemmEx(bl_handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, (const void *)(size_t)a, CUDA_R_16BF,
                          m, (const void *)(size_t)b, CUDA_R_16BF, k, &beta, (void *)(size_t)c, CUDA_R_16BF, m,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
