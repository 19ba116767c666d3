// sort: the sortable patterns of keys, shared by both CUDA sorts (kernel.cu
// and onesweep.cu), which the host prepends this to.
//
// Keys are moved as 32-bit patterns. KEY_TYPE maps keys to unsigned
// patterns that order like the keys: 0 u32 (as is), 1 i32 (sign bit
// flipped), 2 f32 (NaN made the positive quiet NaN, then the sign bit flipped
// for positives and every bit for negatives: -inf < ... < -0.0 < 0.0 < ...
// < inf < NaN). DESCENDING complements the pattern. The first pass maps the
// keys it reads, the last maps back what it writes; in between, the
// temporaries hold patterns.

__device__ __forceinline__ unsigned kiln_map(unsigned raw) {
    unsigned b;
#if KEY_TYPE == 0
    b = raw;
#elif KEY_TYPE == 1
    b = raw ^ 0x80000000u;
#else
    if ((raw & 0x7fffffffu) > 0x7f800000u) raw = 0x7fc00000u;
    b = (raw & 0x80000000u) ? ~raw : (raw | 0x80000000u);
#endif
#if DESCENDING
    b = ~b;
#endif
    return b;
}

__device__ __forceinline__ unsigned kiln_unmap(unsigned b) {
#if DESCENDING
    b = ~b;
#endif
#if KEY_TYPE == 0
    return b;
#elif KEY_TYPE == 1
    return b ^ 0x80000000u;
#else
    return (b & 0x80000000u) ? (b & 0x7fffffffu) : ~b;
#endif
}
