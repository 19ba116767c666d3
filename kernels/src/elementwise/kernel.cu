// Elementwise binary operations and axpy, out of place and in place.
// One pass, 16-byte loads and stores: memory-bound at two loads and one
// store per element. OP: 0 add, 1 sub, 2 mul, 3 div, 4 axpy (alpha * x + y,
// where the multiply-add may be fused into one rounding, as in cuBLAS).

#if OP == 4
#define KILN_COMBINE(a, b) kiln_add(kiln_mul(alpha, (a)), (b))
#define KILN_ALPHA_PARAM , T alpha
#elif OP == 0
#define KILN_COMBINE(a, b) kiln_add((a), (b))
#elif OP == 1
#define KILN_COMBINE(a, b) kiln_sub((a), (b))
#elif OP == 2
#define KILN_COMBINE(a, b) kiln_mul((a), (b))
#elif OP == 3
#define KILN_COMBINE(a, b) kiln_div((a), (b))
#else
#error "unknown OP"
#endif
#ifndef KILN_ALPHA_PARAM
#define KILN_ALPHA_PARAM
#endif

// Argument order follows the safe API: (a, b, c) out of place; in place
// (a, b) with a = a op b, except axpy in place (x, y) with y = alpha * x + y.
#if defined(IN_PLACE) && OP == 4
extern "C" __global__ void KERNEL(const T* __restrict__ a, T* __restrict__ out KILN_ALPHA_PARAM, unsigned long long n) {
    const T* b = out;
#elif defined(IN_PLACE)
extern "C" __global__ void KERNEL(T* __restrict__ out, const T* __restrict__ b KILN_ALPHA_PARAM, unsigned long long n) {
    const T* a = out;
#else
extern "C" __global__ void KERNEL(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out KILN_ALPHA_PARAM,
                                  unsigned long long n) {
#endif
    KILN_FOR_EACH_PACKED(n, kiln_aligned16(a) && kiln_aligned16(b) && kiln_aligned16(out),
        {
            kiln_pack pa = ((const kiln_pack*)a)[i];
            kiln_pack pb = ((const kiln_pack*)b)[i];
#pragma unroll
            for (int k = 0; k < KILN_PACK; ++k) pa.v[k] = KILN_COMBINE(pa.v[k], pb.v[k]);
            ((kiln_pack*)out)[i] = pa;
        },
        out[i] = KILN_COMBINE(a[i], b[i]));
}
