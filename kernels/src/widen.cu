// The 16-bit floats to f32 (WIDEN 1, exact) and back (WIDEN 0, rounded to
// nearest even by FROM_FLOAT), T being the 16-bit type. Grid-stride, one
// element a thread a step: memory-bound at 2 + 4 bytes per element.
#if WIDEN
extern "C" __global__ void KERNEL(const T* __restrict__ src, float* __restrict__ dst, unsigned long long n) {
    KILN_FOR_EACH(i, n) dst[i] = kiln_to_float(src[i]);
}
#else
extern "C" __global__ void KERNEL(const float* __restrict__ src, T* __restrict__ dst, unsigned long long n) {
    KILN_FOR_EACH(i, n) dst[i] = FROM_FLOAT(src[i]);
}
#endif
