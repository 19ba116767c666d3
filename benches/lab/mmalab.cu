// mmalab: kiln's tensor-core matrix products (kernels/src/matmul/mma.cu) against
// cuBLAS in one process. For each type (f16, bf16, tf32, f64): a full check
// against a host f64 reference at small and odd sizes, then at 4096^3 and
// 8192^3 a sampled check of kiln's and cuBLAS's results and the median of
// 25 event-timed runs (lab.cuh) of each, kiln timed twice (before and after
// cuBLAS) to show the spread.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -o mmalab benches/lab/mmalab.cu -lcublas
//   ./mmalab [f16] [bf16] [tf32] [f64] [nocheck] [big=N,...]
//
// Error measure: for each checked entry |c - ref| / sum_p |a_ip b_pj| (the
// entry's error relative to the size of what was added up, so it does not
// blow up where ref cancels to ~0), its maximum printed as "maxrel", and the
// norm-wise ||c - ref|| / ||ref|| over the checked entries as "normrel".
// The output is poisoned with NaN before each run; any NaN left fails.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "lab.cuh"
#include "../../kernels/src/matmul/mma.cu"

#include "mma_entries.cuh"

#define CB(x) do { cublasStatus_t s = (x); if (s != CUBLAS_STATUS_SUCCESS) { printf("%s: cublas status %d\n", #x, (int)s); exit(1);} } while (0)

enum Type { F16, BF16, TF32, F64 };
static const char* tname[] = {"f16", "bf16", "tf32", "f64"};
static size_t in_size(Type t) { return t == F16 || t == BF16 ? 2 : t == TF32 ? 4 : 8; }
static size_t out_size(Type t) { return t == F64 ? 8 : 4; }
static double tolerance(Type t) { return t == F64 ? 1e-12 : t == TF32 ? 5e-3 : 1e-4; }

struct Prob { long m, n, k, lda, ldb, ldc; };

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t splitmix() {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform() { return (double)(splitmix() >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

// Fills a rows x cols matrix (leading dimension ld; padding gets random values too)
// with uniform [-1, 1) values of type t: raw bits in `bits`, the exact values in `val`.
static void fill(Type t, long rows, long ld, std::vector<unsigned char>& bits, std::vector<double>& val) {
    const size_t cnt = (size_t)rows * ld;
    bits.resize(cnt * in_size(t));
    val.resize(cnt);
    for (size_t i = 0; i < cnt; ++i) {
        const double u = uniform();
        if (t == F16) {
            __half h = __float2half_rn((float)u);
            memcpy(&bits[2 * i], &h, 2);
            val[i] = __half2float(h);
        } else if (t == BF16) {
            __nv_bfloat16 h = __float2bfloat16_rn((float)u);
            memcpy(&bits[2 * i], &h, 2);
            val[i] = __bfloat162float(h);
        } else if (t == TF32) {
            float f = (float)u;
            memcpy(&bits[4 * i], &f, 4);
            val[i] = f;
        } else {
            memcpy(&bits[8 * i], &u, 8);
            val[i] = u;
        }
    }
}

static const void* kernel_for(Type t, bool vec) {
    switch (t) {
        case F16: return vec ? (const void*)kiln_mma_f16 : (const void*)kiln_mma_f16_any;
        case BF16: return vec ? (const void*)kiln_mma_bf16 : (const void*)kiln_mma_bf16_any;
        case TF32: return vec ? (const void*)kiln_mma_tf32 : (const void*)kiln_mma_tf32_any;
        default: return vec ? (const void*)kiln_mma_f64 : (const void*)kiln_mma_f64_any;
    }
}
static void setup_kernels() {
    for (int t = 0; t < 4; ++t)
        for (int v = 0; v < 2; ++v) {
            const int smem = t < 2 ? KILN_HM_SMEM : t == 2 ? KILN_TM_SMEM : KILN_DM_SMEM;
            CK(cudaFuncSetAttribute(kernel_for((Type)t, v), cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        }
}
static bool vec_ok(Type t, const Prob& p, const void* a, const void* b, const void* c) {
    const long q = 16 / (long)in_size(t);
    return p.lda % q == 0 && p.ldb % q == 0 && p.ldc % 2 == 0 && ((uintptr_t)a & 15) == 0 &&
           ((uintptr_t)b & 15) == 0 && ((uintptr_t)c & 15) == 0;
}
static void run_kiln(Type t, const Prob& p, const void* a, const void* b, void* c) {
    const bool vec = vec_ok(t, p, a, b, c);
    const long bm = 128, bn = t == F64 ? 128 : 256;
    const unsigned blocks = (unsigned)(((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn));
    const int smem = t < 2 ? KILN_HM_SMEM : t == 2 ? KILN_TM_SMEM : KILN_DM_SMEM;
    kiln_u64 m = p.m, n = p.n, k = p.k, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
    void* args[] = {(void*)&a, (void*)&b, (void*)&c, &m, &n, &k, &lda, &ldb, &ldc};
    CK(cudaLaunchKernel(kernel_for(t, vec), dim3(blocks), dim3(256), args, smem, 0));
}
static cublasHandle_t handle;
// Row-major C = A B is column-major C^T = B^T A^T.
static void run_cublas(Type t, const Prob& p, const void* a, const void* b, void* c) {
    if (t == F64) {
        const double one = 1, zero = 0;
        CB(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &one, (const double*)b, p.ldb,
                       (const double*)a, p.lda, &zero, (double*)c, p.ldc));
        return;
    }
    const float one = 1, zero = 0;
    const cudaDataType_t it = t == F16 ? CUDA_R_16F : t == BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct = t == TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    CB(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &one, b, it, p.ldb, a, it, p.lda, &zero, c,
                    CUDA_R_32F, p.ldc, ct, CUBLAS_GEMM_DEFAULT));
}

struct Err { double maxrel = 0, num = 0, den = 0; long bad = 0, nan = 0, checked = 0; };

// Checks C against the host reference at the entries listed (all if `all`).
static Err check(Type t, const Prob& p, const std::vector<double>& a, const std::vector<double>& b, const void* dc,
                 bool all) {
    const size_t osz = out_size(t);
    std::vector<unsigned char> hc((size_t)p.m * p.ldc * osz);
    CK(cudaMemcpy(hc.data(), dc, hc.size(), cudaMemcpyDeviceToHost));
    auto cval = [&](long i, long j) -> double {
        const size_t e = (size_t)i * p.ldc + j;
        if (osz == 8) { double d; memcpy(&d, &hc[8 * e], 8); return d; }
        float f; memcpy(&f, &hc[4 * e], 4); return f;
    };
    const double tol = tolerance(t);
    Err E;
    // Every entry must have been written (no NaN left of the poison).
    for (long i = 0; i < p.m; ++i)
        for (long j = 0; j < p.n; ++j)
            if (!std::isfinite(cval(i, j))) ++E.nan;
    auto one = [&](long i, long j, const double* ref, const double* mag, Err& e) {
        const double cv = cval(i, j), r = *ref;
        const double rel = std::fabs(cv - r) / (*mag > 0 ? *mag : 1e-300);
        if (!(rel <= tol)) ++e.bad;
        if (!(rel <= e.maxrel)) e.maxrel = std::isnan(rel) ? INFINITY : std::max(e.maxrel, rel);
        e.num += (cv - r) * (cv - r);
        e.den += r * r;
        ++e.checked;
    };
    if (all) {
        const int nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
        std::vector<Err> part(nt);
        std::vector<std::thread> th;
        for (int w = 0; w < nt; ++w)
            th.emplace_back([&, w]() {
                std::vector<double> ref(p.n), mag(p.n);
                for (long i = w; i < p.m; i += nt) {
                    std::fill(ref.begin(), ref.end(), 0.0);
                    std::fill(mag.begin(), mag.end(), 0.0);
                    for (long q = 0; q < p.k; ++q) {
                        const double av = a[(size_t)i * p.lda + q];
                        const double* br = &b[(size_t)q * p.ldb];
                        for (long j = 0; j < p.n; ++j) { ref[j] += av * br[j]; mag[j] += std::fabs(av * br[j]); }
                    }
                    for (long j = 0; j < p.n; ++j) one(i, j, &ref[j], &mag[j], part[w]);
                }
            });
        for (auto& x : th) x.join();
        for (auto& x : part) {
            E.maxrel = std::max(E.maxrel, x.maxrel); E.num += x.num; E.den += x.den;
            E.bad += x.bad; E.checked += x.checked;
        }
    } else {
        std::vector<std::pair<long, long>> pts = {{0, 0}, {0, p.n - 1}, {p.m - 1, 0}, {p.m - 1, p.n - 1}};
        for (int s = 0; s < 1020; ++s) pts.push_back({(long)(splitmix() % p.m), (long)(splitmix() % p.n)});
        for (auto [i, j] : pts) {
            double ref = 0, mag = 0;
            for (long q = 0; q < p.k; ++q) {
                const double x = a[(size_t)i * p.lda + q] * b[(size_t)q * p.ldb + j];
                ref += x; mag += std::fabs(x);
            }
            one(i, j, &ref, &mag, E);
        }
    }
    return E;
}
static bool report(const char* who, Type t, const Prob& p, const Err& e) {
    const bool ok = e.bad == 0 && e.nan == 0;
    printf("  %-6s %-4s %5ldx%5ldx%5ld ld %ld,%ld,%ld: %s maxrel %.3e normrel %.3e (%ld entries checked%s, %ld non-finite) %s\n",
           who, tname[t], p.m, p.n, p.k, p.lda, p.ldb, p.ldc,
           vec_ok(t, p, (void*)0, (void*)0, (void*)0) ? "vec" : "any", e.maxrel,
           e.den > 0 ? std::sqrt(e.num / e.den) : 0.0, e.checked, "", e.nan, ok ? "ok" : "FAIL");
    return ok;
}

struct Dev {
    void *a = nullptr, *b = nullptr, *c = nullptr;
    void alloc(Type t, const Prob& p) {
        CK(cudaMalloc(&a, (size_t)p.m * p.lda * in_size(t)));
        CK(cudaMalloc(&b, (size_t)p.k * p.ldb * in_size(t)));
        CK(cudaMalloc(&c, (size_t)p.m * p.ldc * out_size(t)));
    }
    void release() { cudaFree(a); cudaFree(b); cudaFree(c); }
};

int main(int argc, char** argv) {
    bool types[4] = {false, false, false, false}, any = false, do_check = true;
    std::vector<long> big = {4096, 8192};
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        for (int t = 0; t < 4; ++t)
            if (s == tname[t]) types[t] = any = true;
        if (s == "nocheck") do_check = false;
        if (s.rfind("big=", 0) == 0) {
            big.clear();
            for (size_t pos = 4; pos < s.size();) {
                size_t e = s.find(',', pos);
                big.push_back(atol(s.substr(pos, e - pos).c_str()));
                pos = e == std::string::npos ? s.size() : e + 1;
            }
        }
    }
    if (!any) for (auto& x : types) x = true;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs, L2 %d MB; smem per block: f16/bf16 %d, tf32 %d, f64 %d bytes; stages %d/%d/%d\n",
           prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, KILN_HM_SMEM, KILN_TM_SMEM, KILN_DM_SMEM,
           KILN_HM_STAGES, KILN_TM_STAGES, KILN_DM_STAGES);
    setup_kernels();
    CB(cublasCreate(&handle));
    bool all_ok = true;
    std::vector<std::string> table;
    for (int ti = 0; ti < 4; ++ti) {
        if (!types[ti]) continue;
        const Type t = (Type)ti;
        std::vector<unsigned char> ba, bb;
        std::vector<double> va, vb;
        if (do_check) {
            printf("%s: full checks (tolerance %.0e)\n", tname[t], tolerance(t));
            const Prob small[] = {{1, 1, 1, 1, 1, 1},          {17, 33, 65, 65, 33, 33},
                                  {127, 129, 255, 255, 129, 129}, {1000, 1000, 1000, 1000, 1000, 1000},
                                  {300, 500, 301, 304, 504, 504}, {1500, 700, 200, 200, 700, 700},
                                  {256, 512, 64, 64, 512, 512},   {8, 8, 8, 8, 8, 8}};
            for (const Prob& p : small) {
                fill(t, p.m, p.lda, ba, va);
                fill(t, p.k, p.ldb, bb, vb);
                Dev d;
                d.alloc(t, p);
                CK(cudaMemcpy(d.a, ba.data(), ba.size(), cudaMemcpyHostToDevice));
                CK(cudaMemcpy(d.b, bb.data(), bb.size(), cudaMemcpyHostToDevice));
                CK(cudaMemset(d.c, 0xFF, (size_t)p.m * p.ldc * out_size(t)));
                run_kiln(t, p, d.a, d.b, d.c);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                all_ok &= report("kiln", t, p, check(t, p, va, vb, d.c, true));
                d.release();
            }
        }
        for (long s : big) {
            const Prob p = {s, s, s, s, s, s};
            fill(t, p.m, p.lda, ba, va);
            fill(t, p.k, p.ldb, bb, vb);
            Dev d;
            d.alloc(t, p);
            CK(cudaMemcpy(d.a, ba.data(), ba.size(), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(d.b, bb.data(), bb.size(), cudaMemcpyHostToDevice));
            const size_t cbytes = (size_t)p.m * p.ldc * out_size(t);
            if (do_check) {
                CK(cudaMemset(d.c, 0xFF, cbytes));
                run_kiln(t, p, d.a, d.b, d.c);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                all_ok &= report("kiln", t, p, check(t, p, va, vb, d.c, false));
                CK(cudaMemset(d.c, 0xFF, cbytes));
                run_cublas(t, p, d.a, d.b, d.c);
                CK(cudaDeviceSynchronize());
                report("cublas", t, p, check(t, p, va, vb, d.c, false));
            }
            const double fl = 2.0 * s * s * s;
            const float k1 = lab_time([&] { run_kiln(t, p, d.a, d.b, d.c); });
            CK(cudaGetLastError());
            const float cb = lab_time([&] { run_cublas(t, p, d.a, d.b, d.c); });
            const float k2 = lab_time([&] { run_kiln(t, p, d.a, d.b, d.c); });
            CK(cudaDeviceSynchronize());
            const float kb = std::min(k1, k2);
            char line[256];
            snprintf(line, sizeof line, "%-5s %5ld^3  kiln %7.1f TFLOP/s (%8.3f ms; again %8.3f ms)  cuBLAS %7.1f TFLOP/s (%8.3f ms)  kiln/cuBLAS %.3f",
                     tname[t], s, fl / kb / 1e9, k1, k2, fl / cb / 1e9, cb, cb / kb);
            printf("  %s\n", line);
            table.push_back(line);
            d.release();
        }
    }
    printf("\nsummary (median of 25 timed runs after 3 warm-ups; kiln = the better of its two medians)\n");
    for (auto& l : table) printf("%s\n", l.c_str());
    printf("checks: %s\n", do_check ? (all_ok ? "all passed" : "SOME FAILED") : "skipped");
    cublasDestroy(handle);
    return all_ok ? 0 : 1;
}
