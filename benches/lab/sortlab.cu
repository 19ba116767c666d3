// Sort lab: kiln's onesweep (variants by -D) against CUB SortKeys, 64 Mi random u32.
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>
#define KEY_TYPE 0
#define DESCENDING 0
#include "keys.cuh"
#define STEP 0
#define KERNEL kiln_count
#include "os_lab.cu"
#undef STEP
#undef KERNEL
#define STEP 1
#define VALUES 0  // keys only
#define KERNEL kiln_pass
#include "os_lab.cu"
#include "lab.cuh"
int main(int argc, char** argv) {
    size_t n = argc > 1 ? atol(argv[1]) : (64u << 20);
    std::vector<unsigned> h(n);
    std::mt19937 rng(7);
    for (auto& x : h) x = rng();
    unsigned *in, *tmp, *out, *counts, *status;
    unsigned tiles = (n + KILN_TILE - 1) / KILN_TILE;
    size_t status_words = 4ull * tiles * 256 + 4;
    CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&tmp, n * 4)); CK(cudaMalloc(&out, n * 4));
    CK(cudaMalloc(&counts, 4096)); CK(cudaMalloc(&status, status_words * 4));
    CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    size_t cblocks = std::min<size_t>((n + 256 * 8 - 1) / (256 * 8), sms * 4);
    auto kiln = [&]() {
        cudaMemsetAsync(counts, 0, 4096);
        cudaMemsetAsync(status, 0, status_words * 4);
        kiln_count<<<cblocks, 256>>>(in, counts, n);
        const unsigned* src[4] = {in, tmp, out, tmp};
        unsigned* dst[4] = {tmp, out, tmp, out};
        for (unsigned p = 0; p < 4; ++p)
            kiln_pass<<<tiles, KILN_THREADS>>>(src[p], nullptr, dst[p], nullptr, counts, status, n, tiles, p,
                                               (p == 0 ? 1u : 0u) | (p == 3 ? 2u : 0u));
    };
    void* temp = nullptr; size_t tb = 0;
    cub::DeviceRadixSort::SortKeys(temp, tb, in, tmp, (long long)n);
    CK(cudaMalloc(&temp, tb));
    auto cub_ = [&]() { cub::DeviceRadixSort::SortKeys(temp, tb, in, out, (long long)n); };
    float tk = lab_time(kiln);
    float tcount = lab_time([&]() { cudaMemsetAsync(counts, 0, 4096); kiln_count<<<cblocks, 256>>>(in, counts, n); });
    float tmemset = lab_time([&]() { cudaMemsetAsync(status, 0, status_words * 4); });
    printf("  count kernel %.4f ms, status memset %.4f ms, passes %.4f ms each\n", tcount, tmemset, (tk - tcount - tmemset) / 4);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> got(n); CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    std::vector<unsigned> want = h; std::sort(want.begin(), want.end());
    bool ok = got == want;
    float tc = lab_time(cub_);
    printf("items %d threads %d minb %d n %zu: kiln %.4f ms (%.1f Gkeys/s) %s, cub %.4f ms (%.1f), kiln/cub %.3f\n",
           KILN_ITEMS, KILN_THREADS, KILN_MIN_BLOCKS, n, tk, n / tk / 1e6, ok ? "sorted" : "WRONG", tc, n / tc / 1e6, tc / tk);
    return 0;
}
