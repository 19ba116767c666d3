// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11): block b of the
// stream is the cipher of counter (ctr + b, 0, 0) under key (seed), and
// gives PER values. The grid is a few blocks per SM (the host caps it), each
// thread striding over many Philox blocks with the ten round keys worked out
// once; a thread stores a block's values as one 16-byte pack where dst
// allows. Measured on the H200 (64 Mi f32, 16 blocks per SM): uniform
// 0.0714 ms against 0.0801 with one Philox block per thread, normal 0.1919
// against 0.2222.
struct kiln_round_keys {
    unsigned x[10], y[10];
};

__device__ __forceinline__ kiln_round_keys kiln_keys(unsigned lo, unsigned hi) {
    kiln_round_keys k;
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        k.x[r] = lo + (unsigned)r * 0x9E3779B9u;
        k.y[r] = hi + (unsigned)r * 0xBB67AE85u;
    }
    return k;
}

__device__ __forceinline__ uint4 kiln_philox(uint4 c, const kiln_round_keys& k) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        unsigned lo0 = 0xD2511F53u * c.x, hi0 = __umulhi(0xD2511F53u, c.x);
        unsigned lo1 = 0xCD9E8D57u * c.z, hi1 = __umulhi(0xCD9E8D57u, c.z);
        c = make_uint4(hi1 ^ c.y ^ k.x[r], lo1, hi0 ^ c.w ^ k.y[r], lo0);
    }
    return c;
}

extern "C" __global__ void KERNEL(T* __restrict__ dst, unsigned seed_lo, unsigned seed_hi, unsigned ctr_lo,
                                  unsigned ctr_hi, float one, unsigned zero, unsigned long long n) {
    unsigned long long blocks = (n + PER - 1) / PER;
    unsigned long long ctr = ((unsigned long long)ctr_hi << 32) | ctr_lo;
    bool packed = kiln_aligned16(dst);
    const kiln_round_keys keys = kiln_keys(seed_lo, seed_hi);
    KILN_FOR_EACH(b, blocks) {
        unsigned long long c = ctr + b;
        uint4 w = kiln_philox(make_uint4((unsigned)c, (unsigned)(c >> 32), 0u, 0u), keys);
        kiln_pack p = kiln_values(w);
        unsigned long long at = b * PER;
        if (packed && at + PER <= n) {
            ((kiln_pack*)dst)[b] = p;
        } else {
            for (int k = 0; k < PER && at + k < n; ++k) dst[at + k] = p.v[k];
        }
    }
}
