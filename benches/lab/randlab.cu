// Random lab: kiln's Philox fills (variants) against cuRAND, 64 Mi f32.
#include <curand.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
typedef float T;
#include "normal.cuh"
#include "normal_new.cuh"
__device__ __forceinline__ uint4 kiln_philox(uint4 c, uint2 k) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        unsigned lo0 = 0xD2511F53u * c.x, hi0 = __umulhi(0xD2511F53u, c.x);
        unsigned lo1 = 0xCD9E8D57u * c.z, hi1 = __umulhi(0xCD9E8D57u, c.z);
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k.x += 0x9E3779B9u; k.y += 0xBB67AE85u;
    }
    return c;
}
struct RoundKeys { unsigned x[10], y[10]; };
__device__ __forceinline__ RoundKeys round_keys(unsigned a, unsigned b) {
    RoundKeys k;
#pragma unroll
    for (int r = 0; r < 10; ++r) { k.x[r] = a + r * 0x9E3779B9u; k.y[r] = b + r * 0xBB67AE85u; }
    return k;
}
__device__ __forceinline__ uint4 philox_k(uint4 c, const RoundKeys& k) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        unsigned lo0 = 0xD2511F53u * c.x, hi0 = __umulhi(0xD2511F53u, c.x);
        unsigned lo1 = 0xCD9E8D57u * c.z, hi1 = __umulhi(0xCD9E8D57u, c.z);
        c = make_uint4(hi1 ^ c.y ^ k.x[r], lo1, hi0 ^ c.w ^ k.y[r], lo0);
    }
    return c;
}
__device__ __forceinline__ float cutf32(unsigned v, int sh) {
    if (v == 0u) return 0.0f;
    int lz = __clz((int)v);
    return __uint_as_float(((unsigned)(157 - lz + sh) << 23) + ((v << lz) >> 8));
}
template <int NEWTON>
__device__ __forceinline__ float2 normal2_fast(unsigned a, unsigned b) {
    unsigned x = a | 1u;
    int e = __clz((int)x);
    unsigned mi = x << e;
    int k = -1 - e;
    unsigned ti; bool neg; int sh;
    if (mi > 3037000499u) { ti = 0u - mi; neg = true; sh = -32; k += 1; } else { ti = mi - 0x80000000u; neg = false; sh = -31; }
    float t = cutf32(ti, sh);
    if (neg) t = -t;
    float p = __int_as_float(0xbd9899ad); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0x3e0323c3)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0xbe07d81b)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0x3e116788)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0xbe2a11d8)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0x3e4ccf43)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0xbe800212)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0x3eaaaaaf)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0xbefffffc)); p = __fadd_rn(__fmul_rn(p, t), __int_as_float(0x3f800000));
    float kf = __fsub_rn(__int_as_float(0x4B400000 + k), 12582912.0f);
    float ln = __fadd_rn(__fmul_rn(kf, __int_as_float(0x3f317200)), __fadd_rn(__fmul_rn(t, p), __fmul_rn(kf, __int_as_float(0x35bfbe8e))));
    float l = __fmul_rn(-2.0f, ln);
    float h = __fmul_rn(0.5f, l);
    float y = __uint_as_float(0x5f3759dfu - (__float_as_uint(l) >> 1));
#pragma unroll
    for (int i = 0; i < NEWTON; ++i) y = __fmul_rn(y, __fadd_rn(__fmul_rn(__fmul_rn(-h, y), y), 1.5f));
    float r = __fmul_rn(l, y);
    unsigned xb = b << 2;
    bool swap = xb >= 0x80000000u;
    float g = cutf32(swap ? 0u - xb : xb, -32);
    float g2 = __fmul_rn(g, g);
    float s, c;
    { float p = __int_as_float(0x39283c1a); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0xbb996966)); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0x3da335e3)); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0xbf255de7)); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0x3fc90fdb)); s = __fmul_rn(g, p); }
    { float p = __int_as_float(0xb7d368f9); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0x3a70fa83)); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0xbcaae9e4)); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0x3e81e0f8)); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0xbf9de9e6)); p = __fadd_rn(__fmul_rn(p, g2), __int_as_float(0x3f800000)); c = p; }
    float co, si;
    kiln_rotate(b >> 30, swap, s, c, &co, &si);
    return make_float2(__fmul_rn(r, co), __fmul_rn(r, si));
}
__device__ __forceinline__ float unit(unsigned w) { return (float)(w >> 8) * 5.9604644775390625e-8f; }
// KIND 0 uniform, 1 normal current transform, 2 normal fast (3 Newton), 3 fast with 2 Newton.
template <int KIND, bool STRIDE>
__global__ void fill(float4* dst, unsigned s0, unsigned s1, unsigned long long ctr, unsigned long long blocks) {
    RoundKeys rk = round_keys(s0, s1);
    for (unsigned long long b = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; b < blocks;
         b += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long c = ctr + b;
        uint4 cc = make_uint4((unsigned)c, (unsigned)(c >> 32), 0u, 0u);
        uint4 w = STRIDE ? philox_k(cc, rk) : kiln_philox(cc, make_uint2(s0, s1));
        float4 v;
        if (KIND == 0) v = make_float4(unit(w.x), unit(w.y), unit(w.z), unit(w.w));
        else {
            float2 p, q;
            if (KIND == 1) { p = kiln_normal2f(w.x, w.y); q = kiln_normal2f(w.z, w.w); }
            else if (KIND == 2) { p = normal2_fast<3>(w.x, w.y); q = normal2_fast<3>(w.z, w.w); }
            else { p = normal2_fast<2>(w.x, w.y); q = normal2_fast<2>(w.z, w.w); }
            v = make_float4(p.x, p.y, q.x, q.y);
        }
        dst[b] = v;
    }
}
__global__ void cmp_normals(unsigned long long blocks, unsigned* bad32, unsigned* bad64) {
    RoundKeys rk = round_keys(9, 10);
    for (unsigned long long b = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; b < blocks; b += (unsigned long long)gridDim.x * blockDim.x) {
        uint4 w = philox_k(make_uint4((unsigned)b, (unsigned)(b >> 32), 0u, 0u), rk);
        float2 a = kiln_normal2f(w.x, w.y), c = knew_normal2f(w.x, w.y);
        if (__float_as_uint(a.x) != __float_as_uint(c.x) || __float_as_uint(a.y) != __float_as_uint(c.y)) atomicAdd(bad32, 1u);
        double2 d = kiln_normal2(w), e = knew_normal2(w);
        if (__double_as_longlong(d.x) != __double_as_longlong(e.x) || __double_as_longlong(d.y) != __double_as_longlong(e.y)) atomicAdd(bad64, 1u);
        if (b < (1u << 24)) {  // the ends of the range: small words and words near 2^32
            unsigned i = (unsigned)b;
            unsigned as[4] = {i, ~i, i << 8, ~(i << 8)};
            for (int j = 0; j < 4; ++j) {
                float2 p = kiln_normal2f(as[j], as[3 - j]), q = knew_normal2f(as[j], as[3 - j]);
                if (__float_as_uint(p.x) != __float_as_uint(q.x) || __float_as_uint(p.y) != __float_as_uint(q.y)) atomicAdd(bad32, 1u);
            }
        }
    }
}
int main() {
    { unsigned* bad; cudaMalloc(&bad, 8); cudaMemset(bad, 0, 8); cmp_normals<<<2048, 256>>>(1ull << 28, bad, bad + 1); unsigned h[2]; cudaMemcpy(h, bad, 8, cudaMemcpyDeviceToHost);
      printf("new transform against old over 2^28 Philox blocks: f32 pairs differing %u, f64 pairs differing %u\n", h[0], h[1]); }
    size_t n = 64u << 20, blocks = n / 4;
    float *d, *ref; cudaMalloc(&d, n * 4); cudaMalloc(&ref, n * 4);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    auto time = [&](auto f) {
        std::vector<float> t;
        for (int i = 0; i < 5; ++i) f();
        for (int r = 0; r < 30; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
        std::sort(t.begin(), t.end()); return t[t.size() / 2];
    };
    std::vector<float> h0(n), h1(n);
    auto report = [&](const char* name, float ms, bool cmp, bool same_as_ref) {
        cudaDeviceSynchronize();
        const char* eq = "";
        if (cmp) { cudaMemcpy(h0.data(), ref, n * 4, cudaMemcpyDeviceToHost); cudaMemcpy(h1.data(), d, n * 4, cudaMemcpyDeviceToHost);
            size_t diff = 0; double worst = 0; for (size_t i = 0; i < n; ++i) if (memcmp(&h0[i], &h1[i], 4)) { ++diff; worst = std::max(worst, (double)fabsf(h0[i] - h1[i])); }
            static char buf[100]; snprintf(buf, 100, " differs at %zu (max abs %.3g)", diff, worst); eq = buf; }
        printf("%-34s %.4f ms  %7.1f GB/s%s\n", name, ms, n * 4 / ms / 1e6, eq);
    };
    unsigned g1 = (blocks + 255) / 256;
    for (int grid_mul : {4, 8, 16}) {
        unsigned g = sms * grid_mul;
        printf("-- strided grid %d x 256\n", g);
        report("uniform strided", time([&] { fill<0, true><<<g, 256>>>((float4*)d, 5, 6, 0, blocks); }), false, false);
        report("normal strided, current transform", time([&] { fill<1, true><<<g, 256>>>((float4*)d, 5, 6, 0, blocks); }), false, false);
        report("normal strided, fast (3 Newton)", time([&] { fill<2, true><<<g, 256>>>((float4*)d, 5, 6, 0, blocks); }), false, false);
        report("normal strided, fast (2 Newton)", time([&] { fill<3, true><<<g, 256>>>((float4*)d, 5, 6, 0, blocks); }), false, false);
    }
    report("uniform current (1 block/thread)", time([&] { fill<0, false><<<g1, 256>>>((float4*)ref, 5, 6, 0, blocks); }), false, false);
    fill<0, true><<<sms * 8, 256>>>((float4*)d, 5, 6, 0, blocks); report("uniform strided vs current", 0, true, true);
    report("normal current (1 block/thread)", time([&] { fill<1, false><<<g1, 256>>>((float4*)ref, 5, 6, 0, blocks); }), false, false);
    fill<2, true><<<sms * 8, 256>>>((float4*)d, 5, 6, 0, blocks); report("normal fast3 vs current", 0, true, true);
    fill<3, true><<<sms * 8, 256>>>((float4*)d, 5, 6, 0, blocks); report("normal fast2 vs current", 0, true, true);
    curandGenerator_t gen; curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10); curandSetPseudoRandomGeneratorSeed(gen, 5);
    report("curand uniform", time([&] { curandGenerateUniform(gen, d, n); }), false, false);
    report("curand normal", time([&] { curandGenerateNormal(gen, d, n, 0.0f, 1.0f); }), false, false);
    report("memset (fill ceiling)", time([&] { cudaMemsetAsync(d, 0, n * 4); }), false, false);
    return 0;
}
