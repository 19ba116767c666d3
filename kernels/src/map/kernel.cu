// map: y[i] = op(x[i]) (or x[i] = op(x[i]) in place, with IN_PLACE defined).
// One pass, 16-byte loads and stores: memory-bound at one load and one store
// per element. OP: 0 square, 1 abs, 2 negate, 3 sqrt.

__device__ __forceinline__ T kiln_apply(T v) {
#if OP == 0
    return kiln_mul(v, v);
#elif OP == 1
    return kiln_abs(v);
#elif OP == 2
    return kiln_neg(v);
#elif OP == 3
    return kiln_sqrt(v);
#else
#error "unknown OP"
#endif
}

#ifdef IN_PLACE
extern "C" __global__ void KERNEL(T* __restrict__ x, unsigned long long n) {
    KILN_FOR_EACH_PACKED(n, kiln_aligned16(x),
        {
            kiln_pack p = ((const kiln_pack*)x)[i];
#pragma unroll
            for (int k = 0; k < KILN_PACK; ++k) p.v[k] = kiln_apply(p.v[k]);
            ((kiln_pack*)x)[i] = p;
        },
        x[i] = kiln_apply(x[i]));
}
#else
extern "C" __global__ void KERNEL(const T* __restrict__ x, T* __restrict__ y, unsigned long long n) {
    KILN_FOR_EACH_PACKED(n, kiln_aligned16(x) && kiln_aligned16(y),
        {
            kiln_pack p = ((const kiln_pack*)x)[i];
#pragma unroll
            for (int k = 0; k < KILN_PACK; ++k) p.v[k] = kiln_apply(p.v[k]);
            ((kiln_pack*)y)[i] = p;
        },
        y[i] = kiln_apply(x[i]));
}
#endif
