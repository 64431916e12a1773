/*
 * The few CUDA runtime calls the tests need, loaded with dlopen at run time so
 * that test programs never link CUDA. All functions abort on a CUDA error.
 */
#ifndef LNL_CUDART_SHIM_H
#define LNL_CUDART_SHIM_H

#include <stddef.h>

/* Loads libcudart and checks a device exists; returns 0 on success (msg set otherwise). */
int cu_init(const char **msg);
void *cu_malloc(size_t bytes);
void cu_free(void *p);
void cu_upload(void *dst, const void *src, size_t bytes);
void cu_download(void *dst, const void *src, size_t bytes);
void cu_sync(void);

#endif /* LNL_CUDART_SHIM_H */
