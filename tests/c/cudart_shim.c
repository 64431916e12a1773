#include "cudart_shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

typedef int (*fn_malloc)(void **, size_t);
typedef int (*fn_free)(void *);
typedef int (*fn_memcpy)(void *, const void *, size_t, int);
typedef int (*fn_void)(void);
typedef int (*fn_count)(int *);
typedef const char *(*fn_errstr)(int);

static struct {
    fn_malloc malloc_;
    fn_free free_;
    fn_memcpy memcpy_;
    fn_void sync_;
    fn_count count_;
    fn_errstr errstr_;
} cu;

enum { H2D = 1, D2H = 2 };

static void cu_ok(int err, const char *what) {
    if (err != 0) {
        fprintf(stderr, "CUDA error in %s: %d (%s)\n", what, err,
                cu.errstr_ ? cu.errstr_(err) : "?");
        abort();
    }
}

int cu_init(const char **msg) {
    static const char *names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                  "libcudart.so.11.0"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        *msg = "cannot dlopen libcudart.so";
        return -1;
    }
    cu.malloc_ = (fn_malloc)dlsym(h, "cudaMalloc");
    cu.free_ = (fn_free)dlsym(h, "cudaFree");
    cu.memcpy_ = (fn_memcpy)dlsym(h, "cudaMemcpy");
    cu.sync_ = (fn_void)dlsym(h, "cudaDeviceSynchronize");
    cu.count_ = (fn_count)dlsym(h, "cudaGetDeviceCount");
    cu.errstr_ = (fn_errstr)dlsym(h, "cudaGetErrorString");
    if (!cu.malloc_ || !cu.free_ || !cu.memcpy_ || !cu.sync_ || !cu.count_) {
        *msg = "libcudart lacks a needed symbol";
        return -1;
    }
    int n = 0;
    if (cu.count_(&n) != 0 || n < 1) {
        *msg = "no CUDA device";
        return -1;
    }
    return 0;
}

void *cu_malloc(size_t bytes) {
    void *p = NULL;
    cu_ok(cu.malloc_(&p, bytes ? bytes : 1), "cudaMalloc");
    return p;
}

void cu_free(void *p) {
    if (p) cu_ok(cu.free_(p), "cudaFree");
}

void cu_upload(void *dst, const void *src, size_t bytes) {
    if (bytes) cu_ok(cu.memcpy_(dst, src, bytes, H2D), "cudaMemcpy H2D");
}

void cu_download(void *dst, const void *src, size_t bytes) {
    if (bytes) cu_ok(cu.memcpy_(dst, src, bytes, D2H), "cudaMemcpy D2H");
}

void cu_sync(void) { cu_ok(cu.sync_(), "cudaDeviceSynchronize"); }
