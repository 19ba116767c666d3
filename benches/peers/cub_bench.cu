// CUB's device algorithms and cuRAND's Philox generator on the cases and
// sizes of `kiln bench`, timed the way kiln's rows are: what an expert calls
// for these patterns, not a wrapper around them.
//
// Build: nvcc -O3 -std=c++17 -arch=native -o cub_bench cub_bench.cu -lcurand
// Usage: cub_bench --cases reduce_sum,sort_u32 --sizes 1048576,67108864 --dtype f32
//            --runs 20 --warmup-ms 100 --sample-ms 2 --json OUT
// Writes {"peer": "cub", "version": ..., "rows": [{pattern, dtype, size, median_ms, min_ms, launches, calls}]}.
//
// Each row names in `calls` what it times:
//   copy_d2d          cudaMemcpyAsync, device to device (the copy ceiling)
//   reduce_sum        cub::DeviceReduce::Sum
//   dot               cub::DeviceReduce::TransformReduce of x[i] * y[i]
//   user_sum_squares  cub::DeviceReduce::TransformReduce of x[i] * x[i]
//   scan_inclusive    cub::DeviceScan::InclusiveSum (user_scan: the same)
//   scan_exclusive    cub::DeviceScan::ExclusiveSum
//   compact           cub::DeviceSelect::If, x > threshold, the count left on the device
//   histogram_{i32,f32}[_skewed]  cub::DeviceHistogram::HistogramEven, 256 bins over [0, 1024)
//   sort_{u32,i32,f32}      cub::DeviceRadixSort::SortKeys, out of place (no copy)
//   sort_pairs_u32          cub::DeviceRadixSort::SortPairs, out of place (no copy)
//   random_uniform    curandGenerateUniform[Double] (u32: curandGenerate), Philox4x32-10
//   random_normal     curandGenerateNormal[Double], Philox4x32-10
//   launch_overhead   one thread squaring one float through <<<>>>: the launch floor
// Inputs are those of kiln's rows: floats uniform in [0.5, 2), integers in
// [1, 1000), histogram samples (int or float) in [0, 1024) (or all 7), sort
// keys over their whole range (floats in [-1e6, 1e6)). Buffer sets rotate
// past twice a 64 MiB cache. Temporary storage is allocated before the timed region. Each case's
// result is checked once on the host; a case that fails its check is left out
// with the reason on stderr.
// Exits with status 3 and a one-line reason on stderr when no CUDA device runs here.

#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <curand.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kCacheBytes = size_t(64) << 20;
constexpr int kMaxLaunches = 1000;

struct Options {
    std::vector<std::string> cases;
    std::vector<size_t> sizes;
    std::string dtype = "f32";
    int runs = 20;
    double warmup_ms = 100.0, sample_ms = 2.0;
    std::string json;
};

struct Failure {
    std::string what;
};

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw Failure{std::string(what) + ": " + cudaGetErrorString(e)};
}

void check(curandStatus_t s, const char* what) {
    if (s != CURAND_STATUS_SUCCESS) throw Failure{std::string(what) + ": cuRAND status " + std::to_string(int(s))};
}

/// Device memory freed on scope exit.
template <typename T>
struct DeviceArray {
    T* ptr = nullptr;
    size_t len = 0;
    explicit DeviceArray(size_t n) : len(n) { check(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T)), "cudaMalloc"); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    DeviceArray(DeviceArray&& o) noexcept : ptr(o.ptr), len(o.len) { o.ptr = nullptr; }
    ~DeviceArray() { if (ptr) cudaFree(ptr); }
    void upload(const std::vector<T>& h) { check(cudaMemcpy(ptr, h.data(), len * sizeof(T), cudaMemcpyHostToDevice), "upload"); }
    std::vector<T> download(size_t n) const {
        std::vector<T> h(n);
        check(cudaMemcpy(h.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
        return h;
    }
};

/// How many buffer sets of `bytes` each rotate: past twice the cache, at most 8.
int set_count(size_t bytes) {
    size_t b = std::max<size_t>(bytes, 1);
    return int(std::clamp<size_t>((2 * kCacheBytes + b - 1) / b, 1, 8));
}

/// kiln's sampling: 3 untimed windows of one call, calls for --warmup-ms of
/// busy time, then --runs windows of `launches` calls each between one pair
/// of events, `launches` chosen so a window covers --sample-ms. Returns the
/// sorted ms per call.
std::vector<double> sampled(const Options& o, const std::function<void()>& call, int* launches_out) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    auto window = [&](int k) {
        check(cudaEventRecord(start), "cudaEventRecord");
        for (int i = 0; i < k; ++i) call();
        check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        return double(ms) / k;
    };
    auto count = [&](double ms) {
        return ms > 0 ? int(std::clamp(std::ceil(o.sample_ms / ms), 1.0, double(kMaxLaunches))) : kMaxLaunches;
    };
    for (int i = 0; i < 3; ++i) window(1);
    int launches = count(window(1));
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() < o.warmup_ms)
        launches = count(window(launches));
    std::vector<double> t;
    for (int r = 0; r < std::max(o.runs, 1); ++r) t.push_back(window(launches));
    std::sort(t.begin(), t.end());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    *launches_out = launches;
    return t;
}

struct Row {
    std::string pattern, dtype, calls;
    size_t size;
    double median_ms, min_ms;
    int launches;
};

double median(const std::vector<double>& t) {
    size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

std::mt19937_64 rng(0x6b696c6e);

template <typename T>
std::vector<T> bench_input(size_t n) {
    std::vector<T> h(n);
    if constexpr (std::is_floating_point_v<T>) {
        std::uniform_real_distribution<double> d(0.5, 2.0);
        for (auto& v : h) v = T(d(rng));
    } else {
        std::uniform_int_distribution<int> d(1, 999);
        for (auto& v : h) v = T(d(rng));
    }
    return h;
}

template <typename T>
struct Product {
    const T* x;
    const T* y;
    __host__ __device__ T operator()(long long i) const { return x[i] * y[i]; }
};

template <typename T>
struct Above {
    T threshold;
    __host__ __device__ bool operator()(const T& v) const { return v > threshold; }
};

__global__ void square_one(const float* x, float* y) { y[0] = x[0] * x[0]; }

/// One timed call per buffer set, rotating; the row and what it calls.
Row time_sets(const Options& o, const std::string& pattern, const std::string& dtype, size_t n, const char* calls,
              std::vector<std::function<void()>>& per_set) {
    size_t next = 0;
    int launches = 0;
    auto t = sampled(o, [&] { per_set[next++ % per_set.size()](); }, &launches);
    return Row{pattern, dtype, calls, n, median(t), t.front(), launches};
}

/// Temporary storage of one CUB call, sized by a first call with no storage.
struct Temp {
    void* ptr = nullptr;
    size_t bytes = 0;
    Temp() = default;
    Temp(const Temp&) = delete;
    Temp& operator=(const Temp&) = delete;
    ~Temp() { if (ptr) cudaFree(ptr); }
    void reserve() { check(cudaMalloc(&ptr, std::max<size_t>(bytes, 1)), "cudaMalloc temporary storage"); }
};

/// Keep `call`, a CUB call, as one buffer set's timed call, after a first
/// call with no storage has sized `temp` and the storage is allocated.
void sized(Temp& temp, std::vector<std::function<void()>>& f, std::function<void()> call) {
    call();
    temp.reserve();
    f.push_back(std::move(call));
}

/// Whether `got` is the sum of `host` (of its squares with `squares`):
/// within 1e-3 relative for floats, exact modulo 2^32 for integers.
template <typename T>
bool agrees(T got, const std::vector<T>& host, bool squares) {
    if constexpr (std::is_floating_point_v<T>) {
        double want = 0;
        for (T v : host) want += squares ? double(v) * double(v) : double(v);
        return std::fabs(double(got) - want) <= 1e-3 * std::fabs(want) + 1e-6;
    } else {
        unsigned long long acc = 0;
        for (T v : host) acc += squares ? (unsigned long long)v * (unsigned long long)v : (unsigned long long)v;
        return (unsigned)got == (unsigned)acc;
    }
}

/// Throws unless `y`, a scan of `host` (not empty), ends where the host's
/// sum does: an inclusive scan's last value is the sum of all of `host`, an
/// exclusive scan's the sum of all but the last element (and its first is 0).
template <typename T>
void check_scan(const std::vector<T>& y, const std::vector<T>& host, bool exclusive) {
    if (exclusive && y.front() != T(0)) throw Failure{"the first prefix sum is " + std::to_string(y.front()) + ", not 0"};
    std::vector<T> summed(host.begin(), exclusive ? host.end() - 1 : host.end());
    if (!agrees(y.back(), summed, false))
        throw Failure{"the last prefix sum is " + std::to_string(y.back()) + ", not the host's"};
}

template <typename T>
bool parallel_case(const Options& o, const std::string& p, size_t n, std::vector<Row>& rows) {
    const std::string dt = o.dtype;
    T threshold = std::is_floating_point_v<T> ? T(1.25) : T(500);
    std::vector<T> host = bench_input<T>(n);
    if (p == "copy_d2d") {
        int sets = set_count(2 * n * sizeof(T));
        std::vector<DeviceArray<T>> x, y;
        std::vector<std::function<void()>> f;
        for (int s = 0; s < sets; ++s) {
            x.emplace_back(n), y.emplace_back(n);
            x.back().upload(host);
        }
        for (int s = 0; s < sets; ++s)
            f.push_back([&, s] { check(cudaMemcpyAsync(y[s].ptr, x[s].ptr, n * sizeof(T), cudaMemcpyDeviceToDevice), "copy"); });
        f[0]();
        if (y[0].download(n) != host) throw Failure{"the copy differs from its source"};
        rows.push_back(time_sets(o, p, dt, n, "cudaMemcpyAsync device to device", f));
        return true;
    }
    if (p == "reduce_sum" || p == "dot" || p == "user_sum_squares") {
        bool two = p == "dot";
        int sets = set_count((two ? 2 : 1) * n * sizeof(T));
        std::vector<DeviceArray<T>> x, y, out;
        std::vector<Temp> temp(sets);
        std::vector<std::function<void()>> f;
        for (int s = 0; s < sets; ++s) {
            x.emplace_back(n), y.emplace_back(two ? n : 1), out.emplace_back(1);
            x.back().upload(host);
            if (two) y.back().upload(host);
        }
        const char* calls = p == "reduce_sum" ? "cub::DeviceReduce::Sum" : "cub::DeviceReduce::TransformReduce";
        for (int s = 0; s < sets; ++s) {
            sized(temp[s], f, [&, s] {
                Temp& t = temp[s];
                if (p == "reduce_sum") {
                    check(cub::DeviceReduce::Sum(t.ptr, t.bytes, x[s].ptr, out[s].ptr, (long long)n), "DeviceReduce::Sum");
                } else {
                    Product<T> op{x[s].ptr, two ? y[s].ptr : x[s].ptr};
                    check(cub::DeviceReduce::TransformReduce(t.ptr, t.bytes, thrust::counting_iterator<long long>(0),
                                                             out[s].ptr, (long long)n, cuda::std::plus<T>{}, op, T(0)),
                          "DeviceReduce::TransformReduce");
                }
            });
        }
        f[0]();
        T got = out[0].download(1)[0];
        if (!agrees(got, host, p != "reduce_sum"))
            throw Failure{"the sum is " + std::to_string(got) + ", not the host's"};
        rows.push_back(time_sets(o, p, dt, n, calls, f));
        return true;
    }
    if (p == "scan_inclusive" || p == "user_scan" || p == "scan_exclusive") {
        bool exclusive = p == "scan_exclusive";
        int sets = set_count(2 * n * sizeof(T));
        std::vector<DeviceArray<T>> x, y;
        std::vector<Temp> temp(sets);
        std::vector<std::function<void()>> f;
        for (int s = 0; s < sets; ++s) {
            x.emplace_back(n), y.emplace_back(n);
            x.back().upload(host);
        }
        for (int s = 0; s < sets; ++s) {
            sized(temp[s], f, [&, s] {
                Temp& t = temp[s];
                if (exclusive) {
                    check(cub::DeviceScan::ExclusiveSum(t.ptr, t.bytes, x[s].ptr, y[s].ptr, (long long)n),
                          "DeviceScan::ExclusiveSum");
                } else {
                    check(cub::DeviceScan::InclusiveSum(t.ptr, t.bytes, x[s].ptr, y[s].ptr, (long long)n),
                          "DeviceScan::InclusiveSum");
                }
            });
        }
        f[0]();
        if (n > 0) check_scan(y[0].download(n), host, exclusive);
        rows.push_back(
            time_sets(o, p, dt, n, exclusive ? "cub::DeviceScan::ExclusiveSum" : "cub::DeviceScan::InclusiveSum", f));
        return true;
    }
    if (p == "compact") {
        int sets = set_count((n + n / 2) * sizeof(T));
        std::vector<DeviceArray<T>> x, y;
        std::vector<DeviceArray<long long>> count;
        std::vector<Temp> temp(sets);
        std::vector<std::function<void()>> f;
        for (int s = 0; s < sets; ++s) {
            x.emplace_back(n), y.emplace_back(n), count.emplace_back(1);
            x.back().upload(host);
        }
        for (int s = 0; s < sets; ++s) {
            sized(temp[s], f, [&, s] {
                check(cub::DeviceSelect::If(temp[s].ptr, temp[s].bytes, x[s].ptr, y[s].ptr, count[s].ptr, (long long)n,
                                            Above<T>{threshold}),
                      "DeviceSelect::If");
            });
        }
        f[0]();
        long long want = std::count_if(host.begin(), host.end(), [&](T v) { return v > threshold; });
        long long got = count[0].download(1)[0];
        if (got != want) throw Failure{"kept " + std::to_string(got) + " of the host's " + std::to_string(want)};
        rows.push_back(time_sets(o, p, dt, n, "cub::DeviceSelect::If (x > threshold)", f));
        return true;
    }
    return false;
}

/// A histogram case of `T` samples (int or float): 256 bins over [0, 1024),
/// the samples uniform over the range or all 7 (bin 1); the float samples on
/// an exact grid of step 2^-14, so the host's bins (v / 4, truncated) are exact.
template <typename T>
void histogram_samples(const Options& o, const std::string& p, const char* dt, bool skewed, size_t n,
                       std::vector<Row>& rows) {
    std::vector<T> host(n, T(7));
    if (!skewed) {
        if constexpr (std::is_floating_point_v<T>) {
            std::uniform_int_distribution<uint32_t> d(0, (1u << 24) - 1);
            for (auto& v : host) v = T(d(rng)) * T(1.0 / 16384);
        } else {
            std::uniform_int_distribution<int> d(0, 1023);
            for (auto& v : host) v = d(rng);
        }
    }
    int sets = set_count(sizeof(T) * n);
    std::vector<DeviceArray<T>> x;
    std::vector<DeviceArray<unsigned>> bins;
    std::vector<Temp> temp(sets);
    std::vector<std::function<void()>> f;
    for (int s = 0; s < sets; ++s) {
        x.emplace_back(n), bins.emplace_back(256);
        x.back().upload(host);
    }
    for (int s = 0; s < sets; ++s) {
        sized(temp[s], f, [&, s] {
            check(cub::DeviceHistogram::HistogramEven(temp[s].ptr, temp[s].bytes, x[s].ptr, bins[s].ptr, 257, T(0),
                                                      T(1024), (long long)n),
                  "DeviceHistogram::HistogramEven");
        });
    }
    f[0]();
    std::vector<unsigned> want(256, 0);
    for (T v : host) want[size_t(v / T(4))]++;
    if (bins[0].download(256) != want) throw Failure{"the counts differ from the host's"};
    const char* calls = std::is_floating_point_v<T>
                            ? "cub::DeviceHistogram::HistogramEven, float samples (256 bins over [0, 1024))"
                            : "cub::DeviceHistogram::HistogramEven (256 bins over [0, 1024))";
    rows.push_back(time_sets(o, p, dt, n, calls, f));
}

bool histogram_case(const Options& o, const std::string& p, size_t n, std::vector<Row>& rows) {
    if (p == "histogram_i32" || p == "histogram_i32_skewed")
        histogram_samples<int>(o, p, "i32", p == "histogram_i32_skewed", n, rows);
    else if (p == "histogram_f32" || p == "histogram_f32_skewed")
        histogram_samples<float>(o, p, "f32", p == "histogram_f32_skewed", n, rows);
    else
        return false;
    return true;
}

template <typename K>
std::vector<K> sort_keys(size_t n) {
    std::vector<K> h(n);
    if constexpr (std::is_floating_point_v<K>) {
        std::uniform_real_distribution<double> d(-1e6, 1e6);
        for (auto& v : h) v = K(d(rng));
    } else {
        std::uniform_int_distribution<long long> d(std::numeric_limits<K>::min(), std::numeric_limits<K>::max());
        for (auto& v : h) v = K(d(rng));
    }
    return h;
}

template <typename K>
void sort_case(const Options& o, const std::string& p, const std::string& label, bool pairs, size_t n,
               std::vector<Row>& rows) {
    std::vector<K> keys = sort_keys<K>(n);
    std::vector<unsigned> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = unsigned(i);
    int sets = set_count((pairs ? 4 : 2) * n * sizeof(K));
    std::vector<DeviceArray<K>> kin, kout;
    std::vector<DeviceArray<unsigned>> vin, vout;
    std::vector<Temp> temp(sets);
    std::vector<std::function<void()>> f;
    for (int s = 0; s < sets; ++s) {
        kin.emplace_back(n), kout.emplace_back(n), vin.emplace_back(pairs ? n : 1), vout.emplace_back(pairs ? n : 1);
        kin.back().upload(keys);
        if (pairs) vin.back().upload(values);
    }
    for (int s = 0; s < sets; ++s) {
        sized(temp[s], f, [&, s] {
            if (pairs)
                check(cub::DeviceRadixSort::SortPairs(temp[s].ptr, temp[s].bytes, kin[s].ptr, kout[s].ptr, vin[s].ptr,
                                                      vout[s].ptr, (long long)n),
                      "DeviceRadixSort::SortPairs");
            else
                check(cub::DeviceRadixSort::SortKeys(temp[s].ptr, temp[s].bytes, kin[s].ptr, kout[s].ptr, (long long)n),
                      "DeviceRadixSort::SortKeys");
        });
    }
    f[0]();
    std::vector<K> want = keys;
    std::sort(want.begin(), want.end());
    if (kout[0].download(n) != want) throw Failure{"the keys are not the host's sorted keys"};
    if (pairs) {
        auto v = vout[0].download(n);
        for (size_t i = 0; i < n; ++i)
            if (keys[v[i]] != want[i]) throw Failure{"a value does not ride with its key"};
    }
    rows.push_back(time_sets(o, p, label, n,
                             pairs ? "cub::DeviceRadixSort::SortPairs (out of place)"
                                   : "cub::DeviceRadixSort::SortKeys (out of place)",
                             f));
}

bool random_case(const Options& o, const std::string& p, size_t n, std::vector<Row>& rows) {
    if (p != "random_uniform" && p != "random_normal") return false;
    bool normal = p == "random_normal";
    const std::string& dt = o.dtype;
    if (dt != "f32" && dt != "f64" && !(dt == "u32" && !normal)) return true;  // cuRAND has no such fill
    size_t item = dt == "f64" ? 8 : 4;
    // cuRAND's normal fills take an even count.
    if (normal && n % 2) return true;
    curandGenerator_t gen;
    check(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curandCreateGenerator");
    // Destroyed on every way out, a failed check included.
    struct Destroy {
        curandGenerator_t gen;
        ~Destroy() { curandDestroyGenerator(gen); }
    } destroy{gen};
    check(curandSetPseudoRandomGeneratorSeed(gen, 0x6b696c6e), "curandSetPseudoRandomGeneratorSeed");
    int sets = set_count(n * item);
    std::vector<DeviceArray<char>> out;
    std::vector<std::function<void()>> f;
    for (int s = 0; s < sets; ++s) out.emplace_back(n * item);
    for (int s = 0; s < sets; ++s) {
        char* ptr = out[s].ptr;
        f.push_back([=] {
            if (dt == "f32" && normal) check(curandGenerateNormal(gen, (float*)ptr, n, 0.0f, 1.0f), "curandGenerateNormal");
            else if (dt == "f32") check(curandGenerateUniform(gen, (float*)ptr, n), "curandGenerateUniform");
            else if (dt == "f64" && normal)
                check(curandGenerateNormalDouble(gen, (double*)ptr, n, 0.0, 1.0), "curandGenerateNormalDouble");
            else if (dt == "f64") check(curandGenerateUniformDouble(gen, (double*)ptr, n), "curandGenerateUniformDouble");
            else check(curandGenerate(gen, (unsigned*)ptr, n), "curandGenerate");
        });
    }
    f[0]();
    if (dt == "f32" && n >= 1024) {
        std::vector<float> h(n);
        check(cudaMemcpy(h.data(), out[0].ptr, n * sizeof(float), cudaMemcpyDeviceToHost), "download");
        double mean = 0;
        for (float v : h) mean += v;
        mean /= double(n);
        if (std::fabs(mean - (normal ? 0.0 : 0.5)) > 0.05) throw Failure{"the mean is " + std::to_string(mean)};
    }
    std::string calls = std::string(normal ? "curandGenerateNormal" : "curandGenerateUniform") + " (Philox4x32-10)";
    rows.push_back(time_sets(o, p, dt, n, calls.c_str(), f));
    return true;
}

void launch_row(const Options& o, std::vector<Row>& rows) {
    DeviceArray<float> x(1), y(1);
    x.upload({3.0f});
    square_one<<<1, 1>>>(x.ptr, y.ptr);
    check(cudaGetLastError(), "launch");
    if (y.download(1)[0] != 9.0f) throw Failure{"3 squared is not 9"};
    std::vector<std::function<void()>> f{[&] { square_one<<<1, 1>>>(x.ptr, y.ptr); }};
    rows.push_back(time_sets(o, "launch_overhead", "f32", 1, "an empty-sized kernel through <<<>>> (the launch floor)", f));
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= s.size()) {
        size_t end = s.find(',', at);
        if (end == std::string::npos) end = s.size();
        if (end > at) out.push_back(s.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--cases") o.cases = split(v);
        else if (k == "--sizes") for (auto& s : split(v)) o.sizes.push_back(std::stoull(s));
        else if (k == "--dtype") o.dtype = v;
        else if (k == "--runs") o.runs = std::stoi(v);
        else if (k == "--warmup-ms") o.warmup_ms = std::stod(v);
        else if (k == "--sample-ms") o.sample_ms = std::stod(v);
        else if (k == "--json") o.json = v;
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "cub unavailable: no CUDA device\n");
        return 3;
    }
    if (o.json.empty()) {
        std::fprintf(stderr, "cub_bench: --json OUT is required\n");
        return 2;
    }
    std::vector<Row> rows;
    for (size_t n : o.sizes) {
        for (const auto& p : o.cases) {
            try {
                bool done = histogram_case(o, p, n, rows) || random_case(o, p, n, rows);
                if (!done) {
                    if (p == "sort_u32") sort_case<unsigned>(o, p, "u32", false, n, rows);
                    else if (p == "sort_i32") sort_case<int>(o, p, "i32", false, n, rows);
                    else if (p == "sort_f32") sort_case<float>(o, p, "f32", false, n, rows);
                    else if (p == "sort_pairs_u32") sort_case<unsigned>(o, p, "u32", true, n, rows);
                    else if (o.dtype == "f32") parallel_case<float>(o, p, n, rows);
                    else if (o.dtype == "f64") parallel_case<double>(o, p, n, rows);
                    else if (o.dtype == "i32") parallel_case<int>(o, p, n, rows);
                    else if (o.dtype == "u32") parallel_case<unsigned>(o, p, n, rows);
                }
            } catch (const Failure& f) {
                std::fprintf(stderr, "cub %s %zu: %s\n", p.c_str(), n, f.what.c_str());
                cudaGetLastError();
            }
        }
    }
    for (const auto& p : o.cases) {
        if (p != "launch_overhead") continue;
        try {
            launch_row(o, rows);
        } catch (const Failure& f) {
            std::fprintf(stderr, "cub launch_overhead: %s\n", f.what.c_str());
        }
    }
    int curand_version = 0;
    curandGetVersion(&curand_version);
    FILE* out = std::fopen(o.json.c_str(), "w");
    if (!out) {
        std::fprintf(stderr, "cub_bench: cannot write %s\n", o.json.c_str());
        return 1;
    }
    std::fprintf(out, "{\"peer\": \"cub\", \"version\": \"CUB %d.%d.%d, cuRAND %d\", \"rows\": [", CUB_MAJOR_VERSION,
                 CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, curand_version);
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::fprintf(out,
                     "%s{\"pattern\": \"%s\", \"dtype\": \"%s\", \"size\": %zu, \"median_ms\": %.9g, \"min_ms\": %.9g, "
                     "\"launches\": %d, \"calls\": \"%s\"}",
                     i ? ", " : "", r.pattern.c_str(), r.dtype.c_str(), r.size, r.median_ms, r.min_ms, r.launches,
                     escape(r.calls).c_str());
    }
    std::fprintf(out, "]}\n");
    std::fclose(out);
    return 0;
}
