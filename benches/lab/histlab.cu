// Histogram lab: kiln's histogram kernel (variants by -D, grids at run
// time) against cub::DeviceHistogram::HistogramEven, 256 bins over [0,
// 1024), 64 Mi samples uniform over the range (f32 by default, i32 with
// -DLAB_I32), counts checked against the host's.
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>
#ifdef LAB_I32
typedef int T;
#define INPUT_TYPE 1
#else
typedef float T;
#define INPUT_TYPE 2
#endif
#define WARP_MATCH 0
#define KERNEL kiln_histogram
#include "hist_lab.cu"
#include "lab.cuh"
int main(int argc, char** argv) {
    size_t n = argc > 1 ? atol(argv[1]) : (64u << 20);
    std::vector<T> h(n);
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> d(0, (1u << 24) - 1);
    for (auto& x : h) x = INPUT_TYPE == 2 ? T(d(rng) * (1.0 / 16384)) : T(d(rng) >> 14);
    std::vector<unsigned> want(256, 0);
    for (T v : h) want[size_t(v / T(4))]++;
    T* x; unsigned* counts; unsigned long long* dropped;
    CK(cudaMalloc(&x, n * sizeof(T))); CK(cudaMalloc(&counts, 1024)); CK(cudaMalloc(&dropped, 8));
    CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    // kiln's arguments for 256 bins over [0, 1024) (histogram/mod.rs).
    float lo = 0, hi = 1024;
    unsigned a = INPUT_TYPE == 2 ? *(unsigned*)&lo : 0u, b = INPUT_TYPE == 2 ? *(unsigned*)&hi : 1023u;
    unsigned shift = INPUT_TYPE == 2 ? 32 : 2;
    float scale = 256.0f / 1024.0f;
    void* temp = nullptr; size_t tb = 0;
    cub::DeviceHistogram::HistogramEven(temp, tb, x, counts, 257, T(0), T(1024), (long long)n);
    CK(cudaMalloc(&temp, tb));
    float tc = lab_time([&]() { cub::DeviceHistogram::HistogramEven(temp, tb, x, counts, 257, T(0), T(1024), (long long)n); });
    printf("%s n %zu: cub %.4f ms (%.0f GB/s)\n", INPUT_TYPE == 2 ? "f32" : "i32", n, tc, n * sizeof(T) / tc / 1e6);
    for (int per_sm : {4, 8, 16}) {
        size_t blocks = std::min<size_t>((n + 256 * 2 * 4 - 1) / (256 * 2 * 4), (size_t)sms * per_sm);
        auto kiln = [&]() {
            cudaMemsetAsync(counts, 0, 1024); cudaMemsetAsync(dropped, 0, 8);
            kiln_histogram<<<blocks, 256, 256 * 4>>>(x, counts, dropped, a, b, shift, scale, 256, n);
        };
        float tk = lab_time(kiln);
        CK(cudaDeviceSynchronize());
        std::vector<unsigned> got(256); CK(cudaMemcpy(got.data(), counts, 1024, cudaMemcpyDeviceToHost));
        printf("  kiln UNROLL %d FADD %d, %d blocks/SM: %.4f ms (%.0f GB/s) %s, kiln/cub %.3f\n", UNROLL, LAB_FADD, per_sm,
               tk, n * sizeof(T) / tk / 1e6, got == want ? "right" : "WRONG", tc / tk);
    }
    return 0;
}
