/* Which GEMM algorithm is fastest for lnlinear's three bf16/f16 matmuls at one shape,
 * and what it costs us to take cuBLASLt's first heuristic answer.
 *
 *   nvcc -O2 -arch=sm_90a bench/cuda/lt_probe.cu -lcublasLt -lcublas -o lt_probe
 *   ./lt_probe M K N [bf16|f16]
 *
 * For y = LN(x) W^T + b (bias epilogue), dW = dy^T LN(x) (bias-gradient epilogue) and
 * dxhat = dy W, with 8 and 32 MiB of scratch, it times every algorithm among the
 * heuristic's first 8 (median of 15 launches, CUDA events) and prints each one's
 * configuration, beside cublasGemmEx on the same operands (what PyTorch's mm runs).
 * Evidence for the choices in gemm_cublaslt.cu, not part of the library. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CK(x)                                                                                  \
    do {                                                                                       \
        auto r_ = (x);                                                                         \
        if ((int)r_ != 0) {                                                                    \
            std::fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)r_);         \
            std::exit(1);                                                                      \
        }                                                                                      \
    } while (0)

template <class F> static float median_ms(F &&f) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) f();
    std::vector<float> t;
    for (int i = 0; i < 15; i++) {
        cudaEventRecord(a);
        f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static int cfg(const cublasLtMatmulAlgo_t &al, cublasLtMatmulAlgoConfigAttributes_t w) {
    int v = 0;
    size_t got = 0;
    uint32_t u = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&al, w, &u, sizeof u, &got) == 0 && got == 4) v = (int)u;
    return v;
}

struct gemm {
    const char *name;
    bool ta, tb;
    long m, n, k;
    const void *A, *B;
    long lda, ldb;
    void *D;
    long ldd;
    cublasLtEpilogue_t epi;
    void *bias;
};

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s M K N [bf16|f16]\n", argv[0]);
        return 2;
    }
    const long M = std::atol(argv[1]), K = std::atol(argv[2]), N = std::atol(argv[3]);
    const bool f16 = argc > 4 && argv[4][0] == 'f';
    const cudaDataType_t ty = f16 ? CUDA_R_16F : CUDA_R_16BF;
    auto buf = [](size_t elems) {
        void *p = nullptr;
        CK(cudaMalloc(&p, elems * 2));
        CK(cudaMemset(p, 0x3c, elems * 2)); /* ~1.0-ish non-zero halves: not timing zeros */
        return p;
    };
    void *x = buf(M * K), *w = buf(N * K), *bias = buf(N), *y = buf(M * N), *dy = buf(M * N),
         *dw = buf(N * K), *db = buf(N), *dxh = buf(M * K);
    void *ws = nullptr;
    CK(cudaMalloc(&ws, 32u << 20));
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    cublasHandle_t bl;
    CK(cublasCreate(&bl));
    /* column-major views, as gemm_cublaslt.cu issues them */
    const gemm gs[3] = {
        {"y = LN(x) W^T + b", true, false, N, M, K, w, x, K, K, y, N, CUBLASLT_EPILOGUE_BIAS, bias},
        {"dW = dy^T LN(x), db", false, true, K, N, M, x, dy, K, N, dw, K, CUBLASLT_EPILOGUE_BGRADB, db},
        {"dxhat = dy W", false, false, K, M, N, w, dy, K, N, dxh, K, CUBLASLT_EPILOGUE_DEFAULT, nullptr},
    };
    std::printf("M,K,N = %ld,%ld,%ld %s\n", M, K, N, f16 ? "f16" : "bf16");
    for (const gemm &g : gs) {
        const float one = 1.f, zero = 0.f;
        const float ms_blas = median_ms([&] {
            CK(cublasGemmEx(bl, g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, g.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                            (int)g.m, (int)g.n, (int)g.k, &one, g.A, ty, (int)g.lda, g.B, ty,
                            (int)g.ldb, &zero, g.D, ty, (int)g.ldd, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
        });
        std::printf("%s: cublasGemmEx (no epilogue) %.4f ms\n", g.name, ms_blas);
        for (int with_epi = 0; with_epi < 2; with_epi++) {
            if (with_epi && g.epi == CUBLASLT_EPILOGUE_DEFAULT) continue;
            for (size_t wsb : {(size_t)8 << 20, (size_t)32 << 20}) {
                cublasLtMatmulDesc_t op;
                CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
                cublasOperation_t ta = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
                CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
                CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
                if (with_epi) {
                    cublasLtEpilogue_t e = g.epi;
                    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
                    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias,
                                                      sizeof g.bias));
                    int32_t bty = (int32_t)ty;
                    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bty,
                                                      sizeof bty));
                }
                cublasLtMatrixLayout_t a, b, d;
                CK(cublasLtMatrixLayoutCreate(&a, ty, g.ta ? g.k : g.m, g.ta ? g.m : g.k, g.lda));
                CK(cublasLtMatrixLayoutCreate(&b, ty, g.tb ? g.n : g.k, g.tb ? g.k : g.n, g.ldb));
                CK(cublasLtMatrixLayoutCreate(&d, ty, g.m, g.n, g.ldd));
                cublasLtMatmulPreference_t pref;
                CK(cublasLtMatmulPreferenceCreate(&pref));
                const uint64_t w64 = wsb;
                CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                        &w64, sizeof w64));
                cublasLtMatmulHeuristicResult_t res[8];
                int found = 0;
                CK(cublasLtMatmulAlgoGetHeuristic(lt, op, a, b, d, d, pref, 8, res, &found));
                for (int i = 0; i < found; i++) {
                    const cublasLtMatmulAlgo_t al = res[i].algo;
                    const float ms = median_ms([&] {
                        CK(cublasLtMatmul(lt, op, &one, g.A, a, g.B, b, &zero, g.D, d, g.D, d, &al, ws,
                                          wsb, 0));
                    });
                    std::printf("  lt %s ws %2zu MiB #%d: %.4f ms (%.2fx GemmEx) id %d tile %d stages %d "
                                "splitk %d cluster %d ws %zu\n",
                                with_epi ? "epilogue" : "plain   ", wsb >> 20, i, ms, ms / ms_blas,
                                cfg(al, CUBLASLT_ALGO_CONFIG_ID), cfg(al, CUBLASLT_ALGO_CONFIG_TILE_ID),
                                cfg(al, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                                cfg(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                                cfg(al, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID),
                                res[i].workspaceSize);
                }
                cublasLtMatmulPreferenceDestroy(pref);
                cublasLtMatrixLayoutDestroy(a);
                cublasLtMatrixLayoutDestroy(b);
                cublasLtMatrixLayoutDestroy(d);
                cublasLtMatmulDescDestroy(op);
            }
        }
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
