// An f32 product rounded to the 16-bit float T, element by element of its
// matrices: dst[i] = FROM_FLOAT(src[i]) for i = z sc + r ldc + j over
// z < batch, r < m, j < n (the padding of dst's rows and batch untouched).
// Grid-stride over the batch's m n elements: 4 + 2 bytes per element.
extern "C" __global__ void KERNEL(const float* __restrict__ src, T* __restrict__ dst, unsigned long long m,
                                  unsigned long long n, unsigned long long batch, unsigned long long ldc,
                                  unsigned long long sc) {
    const unsigned long long per = m * n;
    KILN_FOR_EACH(e, per * batch) {
        const unsigned long long z = e / per, r = (e - z * per) / n, j = e - z * per - r * n;
        const unsigned long long i = z * sc + r * ldc + j;
        dst[i] = FROM_FLOAT(src[i]);
    }
}
