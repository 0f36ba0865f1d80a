/*
 * A fake libcuda.so.1 for doctor's tests: the driver API entry points the
 * verification ladder calls, with "device memory" in host memory and
 * doctor's three kernels run on the CPU. Environment variables make it fail
 * the way broken machines do:
 *
 *   FAKECUDA_INIT=<code>     cuInit returns this CUresult
 *   FAKECUDA_HANG=1          cuInit never returns
 *   FAKECUDA_COUNT=<n>       device count (default 1)
 *   FAKECUDA_WRONG=1         doctor_saxpy gets element 12345 wrong
 *   FAKECUDA_OOM=1           cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY
 *   FAKECUDA_PTX=<code>      cuModuleLoadDataEx fails for the first header
 *   FAKECUDA_NAME=<name>     device name (default "Fake GPU")
 *   FAKECUDA_CC=<maj><min>   compute capability (default 80)
 *   FAKECUDA_DRIVER=<v>      cuDriverGetVersion (default 12040)
 *   FAKECUDA_FREE_MIB=<n>    free memory reported by cuMemGetInfo
 *   FAKECUDA_STDERR=<text>   printed to stderr by cuInit
 *
 * Every launch is checked: a kernel that doctor did not load or a grid that
 * does not cover n fails the test through a wrong result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;

static int env_int(const char *name, int def) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

CUresult cuInit(unsigned flags) {
    (void)flags;
    const char *msg = getenv("FAKECUDA_STDERR");
    if (msg) fprintf(stderr, "%s\n", msg);
    if (env_int("FAKECUDA_HANG", 0)) {
        for (;;) pause();
    }
    return env_int("FAKECUDA_INIT", 0);
}

CUresult cuDriverGetVersion(int *v) { *v = env_int("FAKECUDA_DRIVER", 12040); return 0; }

static const char *names[][2] = {
    {"0", "CUDA_SUCCESS"}, {"2", "CUDA_ERROR_OUT_OF_MEMORY"}, {"100", "CUDA_ERROR_NO_DEVICE"},
    {"218", "CUDA_ERROR_INVALID_PTX"}, {"803", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"}, {"999", "CUDA_ERROR_UNKNOWN"},
};

CUresult cuGetErrorName(CUresult r, const char **s) {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", r);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!strcmp(names[i][0], buf)) { *s = names[i][1]; return 0; }
    }
    *s = NULL;
    return 1;
}

CUresult cuGetErrorString(CUresult r, const char **s) {
    *s = r == 100 ? "no CUDA-capable device is detected" : "fake error";
    return 0;
}

CUresult cuDeviceGetCount(int *n) { *n = env_int("FAKECUDA_COUNT", 1); return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal < env_int("FAKECUDA_COUNT", 1) ? 0 : 101; }

CUresult cuDeviceGetName(char *buf, int len, int dev) {
    (void)dev;
    const char *n = getenv("FAKECUDA_NAME");
    snprintf(buf, (size_t)len, "%s", n ? n : "Fake GPU");
    return 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    (void)dev;
    int cc = env_int("FAKECUDA_CC", 80);
    switch (attr) {
    case 16: *v = 108; return 0;
    case 33: *v = 0x18; return 0;
    case 34: *v = 0; return 0;
    case 50: *v = 0; return 0;
    case 75: *v = cc / 10; return 0;
    case 76: *v = cc % 10; return 0;
    }
    return 1;
}

CUresult cuDeviceTotalMem_v2(size_t *b, int dev) { (void)dev; *b = (size_t)80 << 30; return 0; }

static int ctx_token;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = &ctx_token; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &ctx_token ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }

CUresult cuMemGetInfo_v2(size_t *f, size_t *t) {
    *t = (size_t)80 << 30;
    *f = (size_t)env_int("FAKECUDA_FREE_MIB", 80 * 1024) << 20;
    return 0;
}

CUresult cuMemAlloc_v2(unsigned long long *p, size_t bytes) {
    if (env_int("FAKECUDA_OOM", 0)) return 2;
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m) return 2;
    *p = (unsigned long long)(uintptr_t)m;
    return 0;
}

CUresult cuMemFree_v2(unsigned long long p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return 0; }

enum { K_SAXPY = 1, K_FILL32, K_FILL16 };
static int kernel_ids[] = {K_SAXPY, K_FILL32, K_FILL16};
static int module_token;
static int ptx_loads;

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals) {
    const char *src = image;
    ptx_loads++;
    int fail = env_int("FAKECUDA_PTX", 0);
    if (fail && strstr(src, ".target sm_50")) {
        for (unsigned i = 0; i < n; i++) {
            if (opts[i] == 5) snprintf(vals[i], 64, "ptxas fatal: fake refusal of sm_50");
        }
        return fail;
    }
    if (!strstr(src, ".entry doctor_saxpy(") || !strstr(src, ".entry doctor_fill_f32(") ||
        !strstr(src, ".entry doctor_fill_bf16(") || !strstr(src, ".address_size 64")) {
        return 218;
    }
    *mod = &module_token;
    return 0;
}

CUresult cuModuleUnload(void *mod) { return mod == &module_token ? 0 : 400; }

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
    if (mod != &module_token) return 400;
    if (!strcmp(name, "doctor_saxpy")) *fn = &kernel_ids[0];
    else if (!strcmp(name, "doctor_fill_f32")) *fn = &kernel_ids[1];
    else if (!strcmp(name, "doctor_fill_bf16")) *fn = &kernel_ids[2];
    else return 500;
    return 0;
}

static float hash_value(uint32_t seed, uint32_t idx) {
    uint32_t x = idx * 0x9E3779B1u + seed;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    return (float)((int)(x >> 24) - 128) / 128.0f;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, void *stream, void **params, void **extra) {
    (void)shmem; (void)stream; (void)extra;
    uint64_t threads = (uint64_t)gx * gy * gz * bx * by * bz;
    int id = *(int *)fn;
    if (id == K_SAXPY) {
        float *x = (float *)(uintptr_t)*(unsigned long long *)params[0];
        float *y = (float *)(uintptr_t)*(unsigned long long *)params[1];
        float a = *(float *)params[2];
        unsigned n = *(unsigned *)params[3];
        for (uint64_t i = 0; i < n && i < threads; i++) y[i] = a * x[i] + y[i];
        if (env_int("FAKECUDA_WRONG", 0) && n > 12345) y[12345] += 1;
        return 0;
    }
    void *p = (void *)(uintptr_t)*(unsigned long long *)params[0];
    unsigned n = *(unsigned *)params[1];
    unsigned seed = *(unsigned *)params[2];
    for (uint64_t i = 0; i < n && i < threads; i++) {
        float v = hash_value(seed, (uint32_t)i);
        if (id == K_FILL32) {
            ((float *)p)[i] = v;
        } else {
            uint32_t bits;
            memcpy(&bits, &v, 4);
            ((uint16_t *)p)[i] = (uint16_t)(bits >> 16);
        }
    }
    return 0;
}

/* Events hold the host's monotonic clock: the fake runs everything
 * synchronously, so their differences are the CPU time of the work. */
typedef struct { double t; } fake_event;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

CUresult cuEventCreate(void **ev, unsigned flags) { (void)flags; *ev = calloc(1, sizeof(fake_event)); return 0; }
CUresult cuEventRecord(void *ev, void *stream) { (void)stream; ((fake_event *)ev)->t = now_ms(); return 0; }
CUresult cuEventSynchronize(void *ev) { (void)ev; return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { *ms = (float)(((fake_event *)b)->t - ((fake_event *)a)->t); return 0; }
CUresult cuEventDestroy_v2(void *ev) { free(ev); return 0; }

int fake_ptx_loads(void) { return ptx_loads; }
