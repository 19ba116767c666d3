// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11): block b of the
// stream is the cipher of counter (ctr + b, 0, 0) under key (seed), and
// gives PER values. One block per thread, grid-stride; a thread stores its
// values as one 16-byte pack where dst allows.
__device__ __forceinline__ uint4 kiln_philox(uint4 c, uint2 k) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        unsigned lo0 = 0xD2511F53u * c.x, hi0 = __umulhi(0xD2511F53u, c.x);
        unsigned lo1 = 0xCD9E8D57u * c.z, hi1 = __umulhi(0xCD9E8D57u, c.z);
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k.x += 0x9E3779B9u;
        k.y += 0xBB67AE85u;
    }
    return c;
}

extern "C" __global__ void KERNEL(T* __restrict__ dst, unsigned seed_lo, unsigned seed_hi, unsigned ctr_lo,
                                  unsigned ctr_hi, float one, unsigned zero, unsigned long long n) {
    unsigned long long blocks = (n + PER - 1) / PER;
    unsigned long long ctr = ((unsigned long long)ctr_hi << 32) | ctr_lo;
    bool packed = kiln_aligned16(dst);
    KILN_FOR_EACH(b, blocks) {
        unsigned long long c = ctr + b;
        uint4 w = kiln_philox(make_uint4((unsigned)c, (unsigned)(c >> 32), 0u, 0u), make_uint2(seed_lo, seed_hi));
        kiln_pack p = kiln_values(w);
        unsigned long long at = b * PER;
        if (packed && at + PER <= n) {
            ((kiln_pack*)dst)[b] = p;
        } else {
            for (int k = 0; k < PER && at + k < n; ++k) dst[at + k] = p.v[k];
        }
    }
}
