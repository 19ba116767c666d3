// What the labs share: a checked CUDA call, and the median of 25
// event-timed runs of a function after three untimed ones.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

template <typename F>
float lab_time(F f) {
    static cudaEvent_t a, b;
    static bool made = false;
    if (!made) { cudaEventCreate(&a); cudaEventCreate(&b); made = true; }
    std::vector<float> t;
    for (int i = 0; i < 3; ++i) f();
    for (int r = 0; r < 25; ++r) {
        cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}
