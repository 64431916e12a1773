/* Does compute-sanitizer initcheck see what cuBLASLt writes? A probe without any
 * lnlinear code, run by tests/gpu/run.sh under initcheck.
 *
 * The library's backward writes dxhat = dy @ W with cuBLASLt and its LayerNorm-backward
 * kernel reads it; for bf16/f16 problems initcheck reported those reads as
 * uninitialized although every value read was right. This probe repeats that call
 * (same shapes, layouts, heuristic and workspace) into a fresh cudaMalloc buffer and
 * reads the result with a kernel of its own, once with a float32 output and once with
 * a bf16 output, after a control buffer that a plain cudaMemset initializes. Each
 * reader has its own name, so initcheck's report says which case it flags; the probe
 * itself checks the values against a host computation and exits non-zero if they are
 * wrong. On the H200 (CUDA 13.0, 2026-11-30) initcheck reported every read of both
 * cuBLASLt outputs and none of the memset control, with all values right.
 *
 *   nvcc -O2 -arch=sm_90a tests/gpu/initcheck_probe.cu -lcublasLt -o probe
 *   compute-sanitizer --tool initcheck ./probe */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#define CK(x)                                                                   \
    do {                                                                        \
        if ((x) != 0) {                                                         \
            std::printf("probe: %s failed (%d) line %d\n", #x, (int)(x), __LINE__); \
            return 2;                                                           \
        }                                                                       \
    } while (0)

__global__ void read_f32_after_cublaslt(const float4 *d, int n4, float *sum) {
    float s = 0.f;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = d[i];
        s += v.x + v.y + v.z + v.w;
    }
    atomicAdd(sum, s); /* one block: order does not matter for this probe */
}
__global__ void read_bf16_after_cublaslt(const __nv_bfloat16 *d, int n, float *sum) {
    float s = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += __bfloat162float(d[i]);
    atomicAdd(sum, s);
}
__global__ void read_f32_after_memset(const float4 *d, int n4, float *sum) {
    float s = 0.f;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = d[i];
        s += v.x + v.y + v.z + v.w;
    }
    atomicAdd(sum, s);
}

/* D^T[K,M] = W_cm[K,N] @ dy^T_cm[N,M], all column-major: exactly the library's call. */
static int lt_gemm(cublasLtHandle_t h, const void *W, const void *dy, void *D, cudaDataType_t dty,
                   int M, int K, int N, void *ws, size_t wsb) {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, N, M, N));
    CK(cublasLtMatrixLayoutCreate(&d, dty, K, M, K));
    CK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t w = wsb;
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &w, sizeof w));
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(h, op, a, b, d, d, pref, 1, &res, &found));
    if (!found) return 3;
    const float alpha = 1.f, beta = 0.f;
    CK(cublasLtMatmul(h, op, &alpha, W, a, dy, b, &beta, D, d, D, d, &res.algo, ws, wsb, 0));
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(d);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(op);
    return 0;
}

int main() {
    int bad = 0;
    const int shapes[][3] = {{16, 8, 16}, {64, 64, 32}}; /* small: initcheck is slow per report */
    cublasLtHandle_t h;
    CK(cublasLtCreate(&h));
    const size_t wsb = (size_t)8 << 20;
    void *ws;
    CK(cudaMalloc(&ws, wsb));
    float *sum;
    CK(cudaMalloc(&sum, 4));
    for (auto &s : shapes) {
        const int M = s[0], K = s[1], N = s[2];
        std::vector<__nv_bfloat16> hW((size_t)N * K), hdy((size_t)M * N);
        double expect = 0; /* sum of all entries of dy @ W = sum_n colsum(dy)[n] * rowsum(W)[n] */
        std::vector<double> cs(N, 0.0), rs(N, 0.0);
        for (size_t i = 0; i < hW.size(); i++) {
            hW[i] = __float2bfloat16((float)((i * 37) % 17) / 17.f - 0.5f);
            rs[i / K] += __bfloat162float(hW[i]);
        }
        for (size_t i = 0; i < hdy.size(); i++) {
            hdy[i] = __float2bfloat16((float)((i * 11) % 13) / 13.f - 0.4f);
            cs[i % N] += __bfloat162float(hdy[i]);
        }
        for (int n = 0; n < N; n++) expect += cs[n] * rs[n];
        void *W, *dy, *D32, *D16, *Dm;
        CK(cudaMalloc(&W, hW.size() * 2));
        CK(cudaMalloc(&dy, hdy.size() * 2));
        CK(cudaMalloc(&D32, (size_t)M * K * 4));
        CK(cudaMalloc(&D16, (size_t)M * K * 2));
        CK(cudaMalloc(&Dm, (size_t)M * K * 4));
        CK(cudaMemcpy(W, hW.data(), hW.size() * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dy, hdy.data(), hdy.size() * 2, cudaMemcpyHostToDevice));
        const int n = M * K;
        float got[3];
        CK(cudaMemset(Dm, 0, (size_t)n * 4));
        CK(cudaMemset(sum, 0, 4));
        if (n % 4 == 0) read_f32_after_memset<<<1, 256>>>((const float4 *)Dm, n / 4, sum);
        CK(cudaMemcpy(&got[0], sum, 4, cudaMemcpyDeviceToHost));
        CK(lt_gemm(h, W, dy, D32, CUDA_R_32F, M, K, N, ws, wsb));
        CK(cudaMemset(sum, 0, 4));
        if (n % 4 == 0) read_f32_after_cublaslt<<<1, 256>>>((const float4 *)D32, n / 4, sum);
        CK(cudaMemcpy(&got[1], sum, 4, cudaMemcpyDeviceToHost));
        CK(lt_gemm(h, W, dy, D16, CUDA_R_16BF, M, K, N, ws, wsb));
        CK(cudaMemset(sum, 0, 4));
        read_bf16_after_cublaslt<<<1, 256>>>((const __nv_bfloat16 *)D16, n, sum);
        CK(cudaMemcpy(&got[2], sum, 4, cudaMemcpyDeviceToHost));
        CK(cudaDeviceSynchronize());
        const double tol = 1e-2 * (std::fabs(expect) + 1.0);
        /* bf16 output: each entry (|entry| <= N / 4) rounded to 8 bits of mantissa */
        const double tol16 = tol + std::ldexp((double)n * N / 4.0, -8);
        const bool ok = got[0] == 0.f && std::fabs(got[1] - expect) <= tol &&
                        std::fabs(got[2] - expect) <= tol16;
        std::printf("probe M=%d K=%d N=%d: memset %g, f32 out %g, bf16 out %g, expected %g: %s\n", M,
                    K, N, got[0], got[1], got[2], expect, ok ? "values right" : "VALUES WRONG");
        bad += !ok;
        cudaFree(W);
        cudaFree(dy);
        cudaFree(D32);
        cudaFree(D16);
        cudaFree(Dm);
    }
    cudaFree(ws);
    cudaFree(sum);
    cublasLtDestroy(h);
    return bad ? 1 : 0;
}
