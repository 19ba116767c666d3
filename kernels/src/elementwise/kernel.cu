// Elementwise binary operations and axpy, out of place and in place.
// One pass: memory-bound at two loads and one store per element.
// OP: 0 add, 1 sub, 2 mul, 3 div, 4 axpy (z = alpha * x + y).

#if OP == 4
// axpy: the multiply-add may be fused (one rounding), like cuBLAS.
#ifdef IN_PLACE
extern "C" __global__ void KERNEL(const T* __restrict__ x, T* __restrict__ y, T alpha, unsigned long long n) {
    KILN_FOR_EACH(i, n) { y[i] = kiln_add(kiln_mul(alpha, x[i]), y[i]); }
}
#else
extern "C" __global__ void KERNEL(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ z, T alpha,
                                  unsigned long long n) {
    KILN_FOR_EACH(i, n) { z[i] = kiln_add(kiln_mul(alpha, x[i]), y[i]); }
}
#endif

#else
__device__ __forceinline__ T kiln_combine(T a, T b) {
#if OP == 0
    return kiln_add(a, b);
#elif OP == 1
    return kiln_sub(a, b);
#elif OP == 2
    return kiln_mul(a, b);
#elif OP == 3
    return kiln_div(a, b);
#else
#error "unknown OP"
#endif
}

#ifdef IN_PLACE
// a = a op b
extern "C" __global__ void KERNEL(T* __restrict__ a, const T* __restrict__ b, unsigned long long n) {
    KILN_FOR_EACH(i, n) { a[i] = kiln_combine(a[i], b[i]); }
}
#else
extern "C" __global__ void KERNEL(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                  unsigned long long n) {
    KILN_FOR_EACH(i, n) { c[i] = kiln_combine(a[i], b[i]); }
}
#endif
#endif
