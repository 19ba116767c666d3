// sequence: dst[i] = start + i * step.
// One pass, 16-byte stores: memory-bound at one store per element.
// The multiply and add are never fused, so every backend rounds alike.
__device__ __forceinline__ T kiln_seq(T start, T step, unsigned long long i) {
    return kiln_add_rn(start, kiln_mul_rn(kiln_from_index<T>(i), step));
}

extern "C" __global__ void KERNEL(T* __restrict__ dst, T start, T step, unsigned long long n) {
    KILN_FOR_EACH_PACKED(n, kiln_aligned16(dst),
        {
            kiln_pack p;
#pragma unroll
            for (int k = 0; k < KILN_PACK; ++k) p.v[k] = kiln_seq(start, step, i * KILN_PACK + k);
            ((kiln_pack*)dst)[i] = p;
        },
        dst[i] = kiln_seq(start, step, i));
}
