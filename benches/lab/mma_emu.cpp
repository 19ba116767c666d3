// mma_emu: runs kiln's kernels/src/matmul/mma.cu on the host, for checking
// their indexing where no GPU is at hand. mma_emu.sh strips the PTX helper
// section out of mma.cu (from its "helpers" rule to "Block number")
// and this file supplies host versions of those helpers, written from the
// PTX ISA's fragment layouts (mma.m16n8k16 f16/bf16, m16n8k8 tf32, m8n8k4
// f64; ldmatrix .x4 with and without .trans). Each CUDA thread of a block is
// an OS thread; the warp-wide instructions meet at a per-warp barrier,
// __syncthreads at a block barrier. cp.async copies at once (zero-filled
// past `bytes`, with the 16-byte alignment checked), so the pipeline's
// timing is not exercised, only which stage each tile goes to and what is
// read from where. Built with ASan and UBSan: shared memory is a heap block
// of exactly the kernel's size, so reads or writes past it, past A, B or C,
// and misaligned vector accesses all stop the run. Shared memory starts
// all-ones (NaN in every type) and C's padding is checked untouched.
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

struct kiln_dim3 { unsigned x, y, z; };
thread_local kiln_dim3 threadIdx, blockIdx;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)
struct float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
static inline float2 make_float2(float x, float y) { return {x, y}; }
static inline double2 make_double2(double x, double y) { return {x, y}; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }

static unsigned char* kiln_mma_smem;  // the kernel's dynamic shared memory (exact size)
static size_t smem_bytes;
static std::barrier<>* block_bar;
static std::barrier<>* warp_bar[8];
static void __syncthreads() { block_bar->arrive_and_wait(); }
static void fail(const char* what) { fprintf(stderr, "emu: %s (thread %u block %u)\n", what, threadIdx.x, blockIdx.x); abort(); }

// Two sets of per-warp slots, alternated by each lane's count of collective calls,
// so one barrier per call suffices (a set is reused only after the next barrier).
struct Slots { unsigned addr[32]; unsigned a[32][4], b[32][2]; float c[32][4]; double da[32], db[32]; double f64a[32][4], f64b[32][2]; };
static Slots slots[8][2];
thread_local unsigned calls;
template <typename F>
static void collective(F publish_then_compute) {
    const unsigned w = threadIdx.x >> 5;
    Slots& s = slots[w][calls++ & 1];
    publish_then_compute(s, w);
}

static unsigned kiln_smem_u32(const void* p) {
    const size_t off = (const unsigned char*)p - kiln_mma_smem;
    if (off > smem_bytes) fail("kiln_smem_u32 of a non-shared pointer");
    return (unsigned)off;
}
static void kiln_cp16(unsigned dst, const void* src, unsigned bytes) {
    if (dst % 16 || dst + 16 > smem_bytes) fail("cp.async destination misaligned or past shared memory");
    if (bytes > 16) fail("cp.async src-size > 16");
    if (bytes && ((uintptr_t)src % 16)) fail("cp.async source not 16-byte aligned");
    memcpy(kiln_mma_smem + dst, src, bytes);
    memset(kiln_mma_smem + dst + bytes, 0, 16 - bytes);
}
static void kiln_cp_commit() {}
template <int N> static void kiln_cp_wait() {}

static void kiln_ldsm4(unsigned (&r)[4], unsigned addr) {
    collective([&](Slots& s, unsigned w) {
        const unsigned lane = threadIdx.x & 31;
        if (addr % 16 || addr + 16 > smem_bytes) fail("ldmatrix row address misaligned or past shared memory");
        s.addr[lane] = addr;
        warp_bar[w]->arrive_and_wait();
        // Matrix q's row i comes from lane 8q + i; lane l gets row l / 4, word l % 4.
        for (int q = 0; q < 4; ++q) memcpy(&r[q], kiln_mma_smem + s.addr[8 * q + (lane >> 2)] + 4 * (lane & 3), 4);
    });
}
static void kiln_ldsm4t(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, unsigned addr) {
    collective([&](Slots& s, unsigned w) {
        const unsigned lane = threadIdx.x & 31;
        if (addr % 16 || addr + 16 > smem_bytes) fail("ldmatrix row address misaligned or past shared memory");
        s.addr[lane] = addr;
        warp_bar[w]->arrive_and_wait();
        // Transposed: lane l gets elements (rows 2 (l % 4), 2 (l % 4) + 1; column l / 4).
        unsigned* out[4] = {&r0, &r1, &r2, &r3};
        for (int q = 0; q < 4; ++q) {
            unsigned short e0, e1;
            memcpy(&e0, kiln_mma_smem + s.addr[8 * q + 2 * (lane & 3)] + 2 * (lane >> 2), 2);
            memcpy(&e1, kiln_mma_smem + s.addr[8 * q + 2 * (lane & 3) + 1] + 2 * (lane >> 2), 2);
            *out[q] = e0 | ((unsigned)e1 << 16);
        }
    });
}
static unsigned kiln_tf32(float f) {
    unsigned u;
    memcpy(&u, &f, 4);
    if ((u & 0x7F800000u) != 0x7F800000u) u = (u + 0x1000u) & 0xFFFFE000u;  // nearest, ties away
    return u;
}
static float half_to_float(unsigned short h) {
    const unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? std::ldexp((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp((float)(m | 1024), (int)e - 25);
    return s ? -v : v;
}
static float bf16_to_float(unsigned short h) { return __uint_as_float((unsigned)h << 16); }

template <bool BF16>
static void kiln_mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    collective([&](Slots& s, unsigned w) {
        const unsigned lane = threadIdx.x & 31;
        memcpy(s.a[lane], a, 16);
        s.b[lane][0] = b0, s.b[lane][1] = b1;
        warp_bar[w]->arrive_and_wait();
        auto el = [&](unsigned reg, int half) {
            const unsigned short h = (unsigned short)(half ? reg >> 16 : reg & 0xFFFF);
            return BF16 ? bf16_to_float(h) : half_to_float(h);
        };
        float A[16][16], B[16][8];
        for (unsigned l = 0; l < 32; ++l) {
            const unsigned g = l >> 2, t = l & 3;
            for (int i = 0; i < 2; ++i) {
                A[g][2 * t + i] = el(s.a[l][0], i);
                A[g + 8][2 * t + i] = el(s.a[l][1], i);
                A[g][2 * t + 8 + i] = el(s.a[l][2], i);
                A[g + 8][2 * t + 8 + i] = el(s.a[l][3], i);
                B[2 * t + i][g] = el(s.b[l][0], i);
                B[2 * t + 8 + i][g] = el(s.b[l][1], i);
            }
        }
        const unsigned g = lane >> 2, t = lane & 3;
        for (int e = 0; e < 4; ++e) {
            const unsigned row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
            double acc = d[e];
            for (int q = 0; q < 16; ++q) acc += (double)A[row][q] * B[q][col];
            d[e] = (float)acc;
        }
    });
}
static void kiln_mma1688_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    collective([&](Slots& s, unsigned w) {
        const unsigned lane = threadIdx.x & 31;
        for (int e = 0; e < 4; ++e)
            if (a[e] & 0x1FFF) fail("tf32 A operand not rounded");
        if ((b0 | b1) & 0x1FFF) fail("tf32 B operand not rounded");
        memcpy(s.a[lane], a, 16);
        s.b[lane][0] = b0, s.b[lane][1] = b1;
        warp_bar[w]->arrive_and_wait();
        float A[16][8], B[8][8];
        for (unsigned l = 0; l < 32; ++l) {
            const unsigned g = l >> 2, t = l & 3;
            A[g][t] = __uint_as_float(s.a[l][0]);
            A[g + 8][t] = __uint_as_float(s.a[l][1]);
            A[g][t + 4] = __uint_as_float(s.a[l][2]);
            A[g + 8][t + 4] = __uint_as_float(s.a[l][3]);
            B[t][g] = __uint_as_float(s.b[l][0]);
            B[t + 4][g] = __uint_as_float(s.b[l][1]);
        }
        const unsigned g = lane >> 2, t = lane & 3;
        for (int e = 0; e < 4; ++e) {
            const unsigned row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
            double acc = d[e];
            for (int q = 0; q < 8; ++q) acc += (double)A[row][q] * B[q][col];
            d[e] = (float)acc;
        }
    });
}
static void kiln_mma884_f64(double (&d)[2], double a, double b) {
    collective([&](Slots& s, unsigned w) {
        const unsigned lane = threadIdx.x & 31;
        s.da[lane] = a, s.db[lane] = b;
        warp_bar[w]->arrive_and_wait();
        double A[8][4], B[4][8];
        for (unsigned l = 0; l < 32; ++l) A[l >> 2][l & 3] = s.da[l], B[l & 3][l >> 2] = s.db[l];
        const unsigned g = lane >> 2, t = lane & 3;
        for (int e = 0; e < 2; ++e) {
            double acc = d[e];
            for (int q = 0; q < 4; ++q) acc += A[g][q] * B[q][2 * t + e];
            d[e] = acc;
        }
    });
}

static void kiln_mma1688_f64(double (&d0)[2], double (&d1)[2], double a0, double a1, double a2, double a3, double b0,
                             double b1) {
    collective([&](Slots& s, unsigned w) {
        const unsigned lane = threadIdx.x & 31;
        s.f64a[lane][0] = a0, s.f64a[lane][1] = a1, s.f64a[lane][2] = a2, s.f64a[lane][3] = a3;
        s.f64b[lane][0] = b0, s.f64b[lane][1] = b1;
        warp_bar[w]->arrive_and_wait();
        double A[16][8], B[8][8];
        for (unsigned l = 0; l < 32; ++l) {
            const unsigned g = l >> 2, t = l & 3;
            A[g][t] = s.f64a[l][0], A[g + 8][t] = s.f64a[l][1], A[g][t + 4] = s.f64a[l][2], A[g + 8][t + 4] = s.f64a[l][3];
            B[t][g] = s.f64b[l][0], B[t + 4][g] = s.f64b[l][1];
        }
        const unsigned g = lane >> 2, t = lane & 3;
        for (int e = 0; e < 2; ++e) {
            double top = d0[e], bottom = d1[e];
            for (int q = 0; q < 8; ++q) top = std::fma(A[g][q], B[q][2 * t + e], top);
            for (int q = 0; q < 8; ++q) bottom = std::fma(A[g + 8][q], B[q][2 * t + e], bottom);
            d0[e] = top, d1[e] = bottom;
        }
    });
}

#include "mma_kernels_emu.inc"  // mma.cu less its helper section, and mma_entries.cuh (mma_emu.sh)

// ------------------------------------------------------------------ driver
enum Type { F16, BF16, TF32, F64 };
static const char* tname[] = {"f16", "bf16", "tf32", "f64"};
static size_t isz(Type t) { return t < 2 ? 2 : t == TF32 ? 4 : 8; }
static size_t osz(Type t) { return t == F64 ? 8 : 4; }
static uint64_t rs = 12345;
static double uni() { rs = rs * 6364136223846793005ull + 1442695040888963407ull; return (double)(rs >> 11) / 9007199254740992.0 * 2 - 1; }
static unsigned short to_bf16(float f) { unsigned u; memcpy(&u, &f, 4); u += 0x7FFF + ((u >> 16) & 1); return (unsigned short)(u >> 16); }
static unsigned short to_half(float f) { _Float16 h = (_Float16)f; unsigned short s; memcpy(&s, &h, 2); return s; }

typedef void (*Entry)(const void*, const void*, void*, kiln_u64, kiln_u64, kiln_u64, kiln_u64, kiln_u64, kiln_u64);

static bool run(Type t, long m, long n, long k, long lda, long ldb, long ldc) {
    const bool vec = lda % (16 / (long)isz(t)) == 0 && ldb % (16 / (long)isz(t)) == 0 && ldc % 2 == 0;
    // Exact-size allocations (ASan sees any overrun); 16-byte aligned.
    auto alloc = [](size_t bytes) { return (unsigned char*)aligned_alloc(16, (bytes + 15) / 16 * 16); };
    const size_t na = (size_t)(m - 1) * lda + k, nb = (size_t)(k - 1) * ldb + n, nc = (size_t)(m - 1) * ldc + n;
    unsigned char *a = alloc(na * isz(t)), *b = alloc(nb * isz(t)), *c = alloc(nc * osz(t));
    std::vector<double> va(na), vb(nb);
    auto fill = [&](unsigned char* p, std::vector<double>& v) {
        for (size_t i = 0; i < v.size(); ++i) {
            const double u = uni();
            if (t == F16) { unsigned short h = to_half((float)u); memcpy(p + 2 * i, &h, 2); v[i] = half_to_float(h); }
            else if (t == BF16) { unsigned short h = to_bf16((float)u); memcpy(p + 2 * i, &h, 2); v[i] = bf16_to_float(h); }
            else if (t == TF32) { float f = (float)u; memcpy(p + 4 * i, &f, 4); v[i] = f; }
            else { memcpy(p + 8 * i, &u, 8); v[i] = u; }
        }
    };
    fill(a, va);
    fill(b, vb);
    memset(c, 0xFF, nc * osz(t));
    Entry e;
    long bn;
    switch (t) {
        case F16: e = (Entry)(vec ? kiln_mma_f16 : kiln_mma_f16_any); smem_bytes = KILN_HM_SMEM; bn = KILN_HM_BN; break;
        case BF16: e = (Entry)(vec ? kiln_mma_bf16 : kiln_mma_bf16_any); smem_bytes = KILN_HM_SMEM; bn = KILN_HM_BN; break;
        case TF32: e = (Entry)(vec ? kiln_mma_tf32 : kiln_mma_tf32_any); smem_bytes = KILN_TM_SMEM; bn = KILN_TM_BN; break;
        default: e = (Entry)(vec ? kiln_mma_f64 : kiln_mma_f64_any); smem_bytes = KILN_DM_SMEM; bn = KILN_DM_BN; break;
    }
    const unsigned blocks = (unsigned)(((m + 127) / 128) * ((n + bn - 1) / bn));
    kiln_mma_smem = alloc(smem_bytes);
    for (unsigned blk = 0; blk < blocks; ++blk) {
        memset(kiln_mma_smem, 0xFF, smem_bytes);
        std::barrier<> bb(256);
        std::vector<std::barrier<>*> wb;
        block_bar = &bb;
        for (int w = 0; w < 8; ++w) warp_bar[w] = new std::barrier<>(32);
        std::vector<std::thread> th;
        for (unsigned tid = 0; tid < 256; ++tid)
            th.emplace_back([=]() {
                threadIdx = {tid, 0, 0};
                blockIdx = {blk, 0, 0};
                calls = 0;
                e(a, b, c, m, n, k, lda, ldb, ldc);
            });
        for (auto& x : th) x.join();
        for (int w = 0; w < 8; ++w) delete warp_bar[w];
    }
    free(kiln_mma_smem);
    // Check every entry against the f64 reference, and the padding of C untouched.
    const double tol = t == F64 ? 1e-13 : t == TF32 ? 5e-3 : 1e-5;
    double maxrel = 0;
    long bad = 0, pad = 0;
    for (long i = 0; i < m; ++i)
        for (long j = 0; j < ldc && (size_t)(i * ldc + j) < nc; ++j) {
            const size_t x = (size_t)i * ldc + j;
            double cv;
            if (t == F64) memcpy(&cv, c + 8 * x, 8);
            else { float f; memcpy(&f, c + 4 * x, 4); cv = f; }
            if (j >= n) { if (!std::isnan(cv)) ++pad; continue; }
            double ref = 0, mag = 0;
            for (long q = 0; q < k; ++q) { const double p = va[i * lda + q] * vb[q * ldb + j]; ref += p; mag += std::fabs(p); }
            const double rel = std::fabs(cv - ref) / (mag > 0 ? mag : 1e-300);
            if (!(rel <= tol)) { if (bad < 5) printf("    (%ld, %ld): %.9g, want %.9g\n", i, j, cv, ref); ++bad; }
            if (!(rel <= maxrel)) maxrel = std::isnan(rel) ? INFINITY : rel;
        }
    printf("  %-4s %4ldx%4ldx%4ld ld %ld,%ld,%ld %s %u blocks: maxrel %.3e, %ld bad, %ld padding written: %s\n", tname[t], m,
           n, k, lda, ldb, ldc, vec ? "vec" : "any", blocks, maxrel, bad, pad, bad || pad ? "FAIL" : "ok");
    fflush(stdout);
    free(a), free(b), free(c);
    return !bad && !pad;
}

int main(int argc, char** argv) {
    struct P { long m, n, k, lda, ldb, ldc; };
    const P ps[] = {{1, 1, 1, 1, 1, 1},          {17, 33, 65, 65, 33, 33},       {8, 8, 8, 8, 8, 8},
                    {127, 129, 255, 255, 129, 131}, {300, 300, 37, 40, 304, 302}, {140, 264, 70, 72, 264, 266},
                    {1100, 20, 16, 16, 20, 20}};
    bool ok = true;
    for (int ti = 0; ti < 4; ++ti) {
        if (argc > 1 && std::string(argv[1]).find(tname[ti]) == std::string::npos) continue;
        for (const P& p : ps) ok &= run((Type)ti, p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
    }
    printf("%s\n", ok ? "emu: all passed" : "emu: SOME FAILED");
    return ok ? 0 : 1;
}
