// How many clusters of 1, 2 and 4 CTAs of the Hopper forward's launch shape (384 threads,
// 231504 bytes of dynamic shared memory, one CTA an SM) the device can hold at once.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void k() {
    extern __shared__ char s[];
    if (threadIdx.x == 9999) s[0] = 0;
}
int main() {
    const int smem = 231504;
    printf("setattr %s\n", cudaGetErrorString(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)));
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("%s: %d SMs\n", p.name, p.multiProcessorCount);
    for (unsigned cl : {1u, 2u, 4u}) {
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(264);
        cfg.blockDim = dim3(384);
        cfg.dynamicSmemBytes = smem;
        cudaLaunchAttribute a[1];
        a[0].id = cudaLaunchAttributeClusterDimension;
        a[0].val.clusterDim.x = cl;
        a[0].val.clusterDim.y = 1;
        a[0].val.clusterDim.z = 1;
        cfg.attrs = a;
        cfg.numAttrs = 1;
        int n = 0;
        cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
        printf("cluster %u: max active clusters %d (%s)\n", cl, n, cudaGetErrorString(e));
    }
}
