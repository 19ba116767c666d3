// The lab's entry points over kiln's tensor-core device functions
// (kernels/src/matmul/mma.cu, included before this file): one product,
// row-major, (a, b, c, m, n, k, lda, ldb, ldc); mmalab.cu times them and
// mma_emu.cpp runs them on the host.
#define KILN_LAB_ENTRY(NAME, IN, OUT, CALL)                                                                  \
    extern "C" __global__ void __launch_bounds__(256, 1)                                                     \
        NAME(const IN* __restrict__ a, const IN* __restrict__ b, OUT* __restrict__ c, kiln_u64 m, kiln_u64 n, \
             kiln_u64 k, kiln_u64 lda, kiln_u64 ldb, kiln_u64 ldc) {                                         \
        CALL(a, b, c, m, n, k, lda, 1, ldb, 1, ldc);                                                         \
    }
KILN_LAB_ENTRY(kiln_mma_f16, unsigned short, float, (kiln_hmma<false, true>))
KILN_LAB_ENTRY(kiln_mma_f16_any, unsigned short, float, (kiln_hmma<false, false>))
KILN_LAB_ENTRY(kiln_mma_bf16, unsigned short, float, (kiln_hmma<true, true>))
KILN_LAB_ENTRY(kiln_mma_bf16_any, unsigned short, float, (kiln_hmma<true, false>))
KILN_LAB_ENTRY(kiln_mma_tf32, float, float, kiln_tmma<true>)
KILN_LAB_ENTRY(kiln_mma_tf32_any, float, float, kiln_tmma<false>)
KILN_LAB_ENTRY(kiln_mma_f64, double, double, kiln_dmma<true>)
KILN_LAB_ENTRY(kiln_mma_f64_any, double, double, kiln_dmma<false>)
