/*
 * A fake libcublas.so.N for doctor's tests, used together with fakecuda.c
 * (device pointers are host pointers): cublasSgemm_v2 and cublasGemmEx
 * (bfloat16 in and out, float32 compute) computed on the CPU in column-major
 * order. Built with -DFAKE_MAJOR=N for the CUDA major version it claims.
 *
 *   FAKECUBLAS_CREATE=<status>  cublasCreate_v2 returns this status
 *   FAKECUBLAS_WRONG=1          the GEMMs add 1 to entry (0, 0)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_MAJOR
#define FAKE_MAJOR 12
#endif

typedef int cublasStatus_t;
static int handle_token;
static int math_mode;

static int env_int(const char *name, int def) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

cublasStatus_t cublasGetProperty(int type, int *v) {
    *v = type == 0 ? FAKE_MAJOR : type == 1 ? 4 : 2;
    return 0;
}

cublasStatus_t cublasCreate_v2(void **h) {
    int st = env_int("FAKECUBLAS_CREATE", 0);
    if (st) return st;
    *h = &handle_token;
    return 0;
}

cublasStatus_t cublasDestroy_v2(void *h) { return h == &handle_token ? 0 : 1; }
cublasStatus_t cublasGetVersion_v2(void *h, int *v) { (void)h; *v = FAKE_MAJOR * 10000 + 402; return 0; }
cublasStatus_t cublasSetMathMode(void *h, int mode) { (void)h; math_mode = mode; return 0; }

const char *cublasGetStatusName(cublasStatus_t s) {
    switch (s) {
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    }
    return "CUBLAS_STATUS_INTERNAL_ERROR";
}

static float bf16_to_float(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits += 0x7FFF + ((bits >> 16) & 1); /* round to nearest even */
    return (uint16_t)(bits >> 16);
}

cublasStatus_t cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A,
                              int lda, const float *B, int ldb, const float *beta, float *C, int ldc) {
    if (h != &handle_token || ta || tb) return 7;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++) {
            float s = 0;
            for (int l = 0; l < k; l++) s += A[i + l * lda] * B[l + j * ldb];
            C[i + j * ldc] = *alpha * s + *beta * C[i + j * ldc];
        }
    }
    if (env_int("FAKECUBLAS_WRONG", 0)) C[0] += 1;
    return 0;
}

cublasStatus_t cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at,
                            int lda, const void *B, int bt, int ldb, const void *beta, void *C, int ct, int ldc,
                            int compute, int algo) {
    (void)beta; (void)algo;
    if (h != &handle_token || ta || tb || at != 14 || bt != 14 || ct != 14 || compute != 68) return 7;
    const uint16_t *a = A, *b = B;
    uint16_t *c = C;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++) {
            float s = 0;
            for (int l = 0; l < k; l++) s += bf16_to_float(a[i + l * lda]) * bf16_to_float(b[l + j * ldb]);
            c[i + j * ldc] = float_to_bf16(*(const float *)alpha * s);
        }
    }
    if (env_int("FAKECUBLAS_WRONG", 0)) c[0] = float_to_bf16(bf16_to_float(c[0]) + 1);
    return 0;
}
