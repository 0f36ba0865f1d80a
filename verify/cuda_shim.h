/*
 * A thin C layer over the CUDA driver API (libcuda.so.1) and cuBLAS
 * (libcublas.so.N), both loaded with dlopen at run time, so that doctor builds
 * and runs on machines without CUDA. No CUDA header is included: the few
 * prototypes and constants needed are declared in cuda_shim.c, from the
 * documented, stable ABI. Every function returns the library's own status
 * code (CUresult or cublasStatus_t), or one of the DR_* codes below for a
 * failure of the shim itself. Only one thread uses this at a time: the rung
 * child locks its goroutine to one OS thread.
 */
#ifndef DOCTOR_CUDA_SHIM_H
#define DOCTOR_CUDA_SHIM_H

#include <stddef.h>

typedef unsigned long long dr_ptr; /* CUdeviceptr */

#define DR_NOT_LOADED (-1)  /* the library is not loaded */
#define DR_NO_SYMBOL (-2)   /* the library lacks the entry point */

/* Driver API. */
int dr_open(const char *path, char *err, int errlen);
int dr_loaded_from(char *buf, int len);
int dr_error_name(int code, char *buf, int len);
int dr_error_string(int code, char *buf, int len);
int dr_init(void);
int dr_driver_version(int *v);
int dr_device_count(int *n);
int dr_device_get(int ordinal, int *dev);
int dr_device_name(int dev, char *buf, int len);
int dr_device_attr(int dev, int attr, int *v);
int dr_device_total_mem(int dev, size_t *bytes);
int dr_primary_ctx_retain(int dev);
int dr_primary_ctx_release(int dev);
int dr_mem_get_info(size_t *free_bytes, size_t *total_bytes);
int dr_mem_alloc(dr_ptr *p, size_t bytes);
int dr_mem_free(dr_ptr p);
int dr_memcpy_htod(dr_ptr dst, const void *src, size_t bytes);
int dr_memcpy_dtoh(void *dst, dr_ptr src, size_t bytes);
int dr_module_load(const char *image, char *log, int loglen);
int dr_module_unload(void);
int dr_launch_saxpy(dr_ptr x, dr_ptr y, float a, unsigned n);
int dr_launch_fill_f32(dr_ptr p, unsigned n, unsigned seed);
int dr_launch_fill_bf16(dr_ptr p, unsigned n, unsigned seed);
int dr_ctx_synchronize(void);
int dr_events_create(int n);
int dr_event_record(int i);
int dr_event_synchronize(int i);
int dr_event_elapsed(int from, int to, float *ms);
void dr_events_destroy(void);

/* cuBLAS. */
int bl_preload(const char *path);
int bl_open(const char *path, char *err, int errlen);
int bl_loaded_from(char *buf, int len);
void bl_close(void);
int bl_property(int type, int *v);
int bl_status_name(int code, char *buf, int len);
int bl_create(void);
int bl_destroy(void);
int bl_version(int *v);
int bl_set_math_mode(int mode);
int bl_sgemm(int m, int n, int k, dr_ptr a, dr_ptr b, dr_ptr c);
int bl_gemm_bf16(int m, int n, int k, dr_ptr a, dr_ptr b, dr_ptr c);

#endif
