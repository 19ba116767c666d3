// Reductions: a whole array (sum, product, min, max, dot), argmin/argmax, and
// along either axis of a row-major rows x cols array.
//
// MODE 0 (fold) and 1 (dot), a whole array: one pass in a grid of a few
// blocks per SM. Each thread keeps UNROLL 16-byte loads in flight and folds
// them into UNROLL x KILN_LANES independent accumulators; the block then folds its
// threads with warp shuffles and writes one partial per block, and the host
// folds the partials with a one-block launch of MODE 0. Memory-bound at
// sizeof(T) bytes read per element (twice that for dot).
// MODE 2 / 3: argmin or argmax (ARG 0 / 1) over x, and over the (value,
// index) partials of a first pass. Scalar loads: not a bandwidth target.
// MODE 4: along axis 1, one warp per row (grid-stride over rows).
// MODE 5: along axis 0, 32 columns x 8 row stripes per block, the rows split
// in chunks along grid.y so tall arrays fill the device; chunk c writes row c
// of the output, which the host folds again while there is more than one.
//
// OP: 0 sum, 1 product, 2 min, 3 max. Sums and products of integers wrap;
// min and max propagate NaN (the first NaN met wins); argmin/argmax give the
// first NaN if there is one, else the first index of the extreme. `identity`
// is the fold's neutral value (0, 1, +inf / MAX for min, -inf / MIN for max).
//
// Every kernel is launched with blockDim = (BLOCK, 1, 1), except MODE 5: (32, 8, 1).

#define BLOCK 256
// UNROLL (loads in flight per thread) comes from reduce/mod.rs, which sizes the grid by it.
#ifndef UNROLL
#error "UNROLL must be defined"
#endif
#define FULL_MASK 0xffffffffu

typedef unsigned long long u64;

template <typename U> struct KilnVec16;
template <> struct KilnVec16<float> { typedef float4 type; };
template <> struct KilnVec16<double> { typedef double2 type; };
template <> struct KilnVec16<int> { typedef int4 type; };
template <> struct KilnVec16<unsigned> { typedef uint4 type; };
typedef KilnVec16<T>::type V;
static constexpr int KILN_LANES = 16 / sizeof(T);
// The elements of one 16-byte vector.
union KilnLanes {
    V v;
    T e[KILN_LANES];
};

__device__ __forceinline__ bool kiln_isnan(float v) { return v != v; }
__device__ __forceinline__ bool kiln_isnan(double v) { return v != v; }
__device__ __forceinline__ bool kiln_isnan(int) { return false; }
__device__ __forceinline__ bool kiln_isnan(unsigned) { return false; }

__device__ __forceinline__ T kiln_fold(T a, T b) {
#if OP == 0
    return kiln_add(a, b);
#elif OP == 1
    return kiln_mul(a, b);
#elif OP == 2
    return (kiln_isnan(a) || a < b) ? a : b;
#elif OP == 3
    return (kiln_isnan(a) || a > b) ? a : b;
#else
#error "unknown OP"
#endif
}

// Elements before the first 16-byte boundary of `p`, at most n.
__device__ __forceinline__ u64 kiln_head(const T* p, u64 n) {
    const u64 bytes = (16 - ((u64)p & 15)) & 15;
    const u64 head = bytes / sizeof(T);
    return head < n ? head : n;
}

// The fold of every lane of the warp, in every lane. Butterfly order: both
// partners combine the same two values, so every lane gets the same bits.
template <typename U, typename F> __device__ __forceinline__ U kiln_warp_all(U v, F fold) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fold(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

#if MODE == 0 || MODE == 1 || MODE == 4

struct KilnFold {
    __device__ __forceinline__ T operator()(T a, T b) const { return kiln_fold(a, b); }
};

// The fold of every thread's `v` in thread 0 (the others get partial values).
// Every thread of the block must call it.
__device__ __forceinline__ T kiln_block_fold(T v, T identity) {
    __shared__ T warp_part[BLOCK / 32];
    v = kiln_warp_all(v, KilnFold());
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < BLOCK / 32 ? warp_part[lane] : identity;
        v = kiln_warp_all(v, KilnFold());
    }
    return v;
}
#endif

#if MODE == 0 || MODE == 1

// The term element j contributes. Dot: the product and the sum may fuse into one rounding.
#if MODE == 0
#define KILN_TERM(j) x[j]
#elif OP == 0
#define KILN_TERM(j) kiln_mul(x[j], y[j])
#else
#error "dot is a sum"
#endif

// MODE 0: out[blockIdx.x] = fold of x[0..n). MODE 1: out[blockIdx.x] = sum of x[i] * y[i].
// The fold: FOLD_MIN_BLOCKS (six) blocks an SM, in 40 registers without
// spills, the grid the host sizes for it: 75% occupancy, where 48
// registers allowed five. (The dot would spill in 40.)
#if MODE == 0
extern "C" __global__ void __launch_bounds__(BLOCK, FOLD_MIN_BLOCKS)
    KERNEL(const T* __restrict__ x, T* __restrict__ out, T identity, u64 n) {
    const bool vectors = true;
#else
extern "C" __global__ void __launch_bounds__(BLOCK)
    KERNEL(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, u64 n) {
    const T identity = (T)0;
    // 16-byte loads need x and y equally misaligned; else every load is scalar.
    const bool vectors = (((u64)x ^ (u64)y) & 15) == 0;
#endif
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 threads = (u64)gridDim.x * BLOCK;
    const u64 head = vectors ? kiln_head(x, n) : n;
    const u64 nv = (n - head) / KILN_LANES;
    const V* xv = reinterpret_cast<const V*>(x + head);
#if MODE == 1
    const V* yv = reinterpret_cast<const V*>(y + head);
#endif

    T acc[UNROLL][KILN_LANES];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int c = 0; c < KILN_LANES; ++c) acc[u][c] = identity;

    u64 i = tid;
    for (; i + (UNROLL - 1) * threads < nv; i += UNROLL * threads) {
        KilnLanes a[UNROLL];
#if MODE == 1
        KilnLanes b[UNROLL];
#endif
        // Every load issued before the first use: UNROLL x 16 bytes in flight per thread.
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            a[u].v = __ldg(xv + i + u * threads);
#if MODE == 1
            b[u].v = __ldg(yv + i + u * threads);
#endif
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int c = 0; c < KILN_LANES; ++c) {
#if MODE == 1
                acc[u][c] = kiln_fold(acc[u][c], kiln_mul(a[u].e[c], b[u].e[c]));
#else
                acc[u][c] = kiln_fold(acc[u][c], a[u].e[c]);
#endif
            }
    }
    for (; i < nv; i += threads) {
        KilnLanes a;
        a.v = __ldg(xv + i);
#if MODE == 1
        KilnLanes b;
        b.v = __ldg(yv + i);
#pragma unroll
        for (int c = 0; c < KILN_LANES; ++c) acc[0][c] = kiln_fold(acc[0][c], kiln_mul(a.e[c], b.e[c]));
#else
#pragma unroll
        for (int c = 0; c < KILN_LANES; ++c) acc[0][c] = kiln_fold(acc[0][c], a.e[c]);
#endif
    }
    // The scalar elements before the first and after the last whole vector.
    for (u64 j = tid; j < head; j += threads) acc[1][0] = kiln_fold(acc[1][0], KILN_TERM(j));
    for (u64 j = head + nv * KILN_LANES + tid; j < n; j += threads) acc[2][0] = kiln_fold(acc[2][0], KILN_TERM(j));

    T v = identity;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int c = 0; c < KILN_LANES; ++c) v = kiln_fold(v, acc[u][c]);
    v = kiln_block_fold(v, identity);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
#undef KILN_TERM

#elif MODE == 2 || MODE == 3

// Whether (a, ia) comes before (b, ib): a NaN before any number (the first
// NaN wins), then the smaller (argmin) or larger (argmax) value, then the
// smaller index. A total order, so the result does not depend on the order
// of folding; the sentinel (identity, ~0) comes after every element.
__device__ __forceinline__ bool kiln_before(T a, u64 ia, T b, u64 ib) {
    const bool an = kiln_isnan(a), bn = kiln_isnan(b);
    if (an || bn) return an && (!bn || ia < ib);
#if ARG == 0
    if (a != b) return a < b;
#else
    if (a != b) return a > b;
#endif
    return ia < ib;
}

// (best, at) becomes the first of the warp's pairs under kiln_before, in
// every lane.
__device__ __forceinline__ void kiln_warp_first(T& best, u64& at) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const T ov = __shfl_xor_sync(FULL_MASK, best, o);
        const u64 ok = __shfl_xor_sync(FULL_MASK, at, o);
        if (kiln_before(ov, ok, best, at)) {
            best = ov;
            at = ok;
        }
    }
}

#if MODE == 2
// Pass 1: out_val/out_idx[blockIdx.x] = the first extreme of x[0..n).
extern "C" __global__ void __launch_bounds__(BLOCK)
    KERNEL(const T* __restrict__ x, T* __restrict__ out_val, u64* __restrict__ out_idx, T identity, u64 n) {
#else
// Pass 2: the same over n (value, index) partials.
extern "C" __global__ void __launch_bounds__(BLOCK)
    KERNEL(const T* __restrict__ vals, const u64* __restrict__ idxs, T* __restrict__ out_val,
           u64* __restrict__ out_idx, T identity, u64 n) {
#endif
    T best = identity;
    u64 at = ~0ull;
    for (u64 j = (u64)blockIdx.x * BLOCK + threadIdx.x; j < n; j += (u64)gridDim.x * BLOCK) {
#if MODE == 2
        const T v = __ldg(x + j);
        const u64 k = j;
#else
        const T v = vals[j];
        const u64 k = idxs[j];
#endif
        if (kiln_before(v, k, best, at)) {
            best = v;
            at = k;
        }
    }
    kiln_warp_first(best, at);
    __shared__ T warp_val[BLOCK / 32];
    __shared__ u64 warp_idx[BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        warp_val[warp] = best;
        warp_idx[warp] = at;
    }
    __syncthreads();
    if (warp == 0) {
        best = lane < BLOCK / 32 ? warp_val[lane] : identity;
        at = lane < BLOCK / 32 ? warp_idx[lane] : ~0ull;
        kiln_warp_first(best, at);
        if (lane == 0) {
            out_val[blockIdx.x] = best;
            out_idx[blockIdx.x] = at;
        }
    }
}

#elif MODE == 4

// out[r] = fold of row r, r < rows; one warp per row, lanes striding the
// columns. The last parameter (MODE 5's rows_per_chunk) is unused here.
extern "C" __global__ void __launch_bounds__(BLOCK)
    KERNEL(const T* __restrict__ x, T* __restrict__ out, T identity, u64 rows, u64 cols, u64) {
    const int lane = threadIdx.x & 31;
    const u64 warps = (u64)gridDim.x * (BLOCK / 32);
    // The loop bound is the same for the 32 lanes of a warp, so the shuffles see full warps.
    for (u64 r = (u64)blockIdx.x * (BLOCK / 32) + (threadIdx.x >> 5); r < rows; r += warps) {
        const T* row = x + r * cols;
        T acc = identity;
        for (u64 c = lane; c < cols; c += 32) acc = kiln_fold(acc, __ldg(row + c));
        acc = kiln_warp_all(acc, KilnFold());
        if (lane == 0) out[r] = acc;
    }
}

#elif MODE == 5

// out[chunk * cols + c] = fold of x[r][c] over the rows r of chunk `blockIdx.y`
// (rows_per_chunk of them). Threads (tx, ty) read row stripe ty of column
// tile + tx: each warp reads 32 adjacent columns of one row, coalesced.
extern "C" __global__ void __launch_bounds__(BLOCK)
    KERNEL(const T* __restrict__ x, T* __restrict__ out, T identity, u64 rows, u64 cols, u64 rows_per_chunk) {
    __shared__ T part[8][33];
    const u64 r0 = (u64)blockIdx.y * rows_per_chunk;
    const u64 r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
    for (u64 tile = blockIdx.x; tile * 32 < cols; tile += gridDim.x) {
        const u64 c = tile * 32 + threadIdx.x;
        T acc = identity;
        if (c < cols)
            for (u64 r = r0 + threadIdx.y; r < r1; r += 8) acc = kiln_fold(acc, __ldg(x + r * cols + c));
        part[threadIdx.y][threadIdx.x] = acc;
        __syncthreads();
        if (threadIdx.y == 0) {
            // Stripes folded in row order, so products and sums round the same way on every run.
#pragma unroll
            for (int s = 1; s < 8; ++s) acc = kiln_fold(acc, part[s][threadIdx.x]);
            if (c < cols) out[(u64)blockIdx.y * cols + c] = acc;
        }
        __syncthreads();
    }
}

#else
#error "unknown MODE"
#endif
