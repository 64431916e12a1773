# CUDA backend build settings (included by the top-level CMakeLists.txt when nvcc is
# found). Hopper gets its own machine code (sm_90a); compute_80 PTX lets the driver
# build the kernels for any other GPU from Ampere on (mma.sync bf16 needs sm_80).
set_property(TARGET lnlinear PROPERTY CUDA_ARCHITECTURES OFF)
target_compile_options(lnlinear PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=compute_80 -std=c++17 -Xcompiler=-fvisibility=hidden>)
set_property(TARGET lnlinear PROPERTY CUDA_STANDARD 17)
# cuBLAS beside cuBLASLt: the float32 dW GEMM goes through cublasSgemm (gemm_cublas.cu).
target_link_libraries(lnlinear PRIVATE CUDA::cudart CUDA::cublas CUDA::cublasLt)
