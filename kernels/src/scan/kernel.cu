// Scan (prefix sum), inclusive or exclusive, optionally segmented, in one
// pass: each block scans one tile of KILN_SCAN_BLOCK x KILN_ITEMS consecutive
// elements in registers (loaded and stored as 16-byte vectors through a
// shared-memory transpose) and gets the sum of every earlier tile by
// decoupled look-back (lookback.cuh). Memory-bound at one read and one
// write of sizeof(T) bytes per element (plus 4 bytes of flags, segmented).
//
// EXCLUSIVE 0: y[i] = x[0] + ... + x[i]; 1: y[i] = x[0] + ... + x[i - 1].
// SEGMENTED (defined): a nonzero flags[i] starts a segment at i, where the
// sums restart (exclusive: y[i] = 0 at a segment start).
// IN_PLACE (defined): the kernel reads and writes y; there is no x.
// status: tiles + 1 64-bit words, zero before the launch (the low half of
// the last is the tile counter); aggs and incls: one T per tile (used by
// 8-byte T only). Launch: one block of KILN_SCAN_BLOCK threads per tile.

// Elements per thread: KILN_SCAN_VPL 16-byte vectors, defined by the host
// (which sizes the look-back state by the same tiles).
#ifndef KILN_ITEMS
#error "KILN_ITEMS must be defined"
#endif
static_assert(KILN_ITEMS == KILN_SCAN_VPL * 16 / sizeof(T), "a thread holds KILN_SCAN_VPL 16-byte vectors of T");
#define TILE_ITEMS ((kiln_u64)KILN_SCAN_BLOCK * KILN_ITEMS)
// Resident blocks per SM the registers must allow, from the host.
#ifndef KILN_SCAN_MIN_BLOCKS
#error "KILN_SCAN_MIN_BLOCKS must be defined"
#endif

#ifdef SEGMENTED
// A segmented sum is the plain sum over (value, flag) pairs with this
// operator (associative, not commutative): a flag in the later operand
// discards the earlier value.
struct KilnSeg {
    T v;
    unsigned f;
};
struct KilnSegSum {
    typedef T Payload;
    static constexpr bool PACKED = sizeof(T) == 4;
    static __device__ __forceinline__ KilnSeg make(T v, unsigned f) {
        KilnSeg s;
        s.v = v;
        s.f = f & 1u;
        return s;
    }
    static __device__ __forceinline__ KilnSeg identity() { return make((T)0, 0u); }
    static __device__ __forceinline__ KilnSeg op(KilnSeg earlier, KilnSeg later) {
        return make(later.f ? later.v : kiln_add(earlier.v, later.v), earlier.f | later.f);
    }
    static __device__ __forceinline__ T payload(KilnSeg s) { return s.v; }
    static __device__ __forceinline__ unsigned flag(KilnSeg s) { return s.f; }
    static __device__ __forceinline__ KilnSeg shfl_up(KilnSeg s, int d) {
        return make(__shfl_up_sync(KILN_FULL, s.v, d), __shfl_up_sync(KILN_FULL, s.f, d));
    }
    static __device__ __forceinline__ KilnSeg shfl_down(KilnSeg s, int d) {
        return make(__shfl_down_sync(KILN_FULL, s.v, d), __shfl_down_sync(KILN_FULL, s.f, d));
    }
    static __device__ __forceinline__ KilnSeg shfl(KilnSeg s, int lane) {
        return make(__shfl_sync(KILN_FULL, s.v, lane), __shfl_sync(KILN_FULL, s.f, lane));
    }
};
typedef KilnSeg S;
typedef KilnSegSum Op;
#define KILN_FLAGS_PARAM const unsigned* __restrict__ flags,
#else
typedef T S;
typedef KilnSum<T> Op;
#define KILN_FLAGS_PARAM
#endif

__device__ __forceinline__ T kiln_value(KilnSum<T>::Payload s) { return s; }
#ifdef SEGMENTED
__device__ __forceinline__ T kiln_value(KilnSeg s) { return s.v; }
#endif

#ifdef IN_PLACE
extern "C" __global__ void __launch_bounds__(KILN_SCAN_BLOCK, KILN_SCAN_MIN_BLOCKS)
    KERNEL(T* y, KILN_FLAGS_PARAM kiln_u64* status, T* aggs, T* incls, kiln_u64 n) {
    // x aliases y: each tile reads its elements before it writes them, and no
    // other tile touches them.
    const T* x = y;
#else
extern "C" __global__ void __launch_bounds__(KILN_SCAN_BLOCK, KILN_SCAN_MIN_BLOCKS)
    KERNEL(const T* __restrict__ x, KILN_FLAGS_PARAM T* __restrict__ y, kiln_u64* status, T* aggs, T* incls,
           kiln_u64 n) {
#endif
    __shared__ uint4 sm_all[KILN_SCAN_WARPS * KILN_WARP_VECS];
    __shared__ S warp_total[KILN_SCAN_WARPS];
    __shared__ S tile_prefix;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint4* sm = sm_all + warp * KILN_WARP_VECS;
    const kiln_u64 tiles = (n + TILE_ITEMS - 1) / TILE_ITEMS;
    const unsigned tile = kiln_next_tile(reinterpret_cast<unsigned*>(status + tiles));
    const kiln_u64 seg = tile * TILE_ITEMS + (kiln_u64)warp * 32 * KILN_ITEMS;

    T items[KILN_ITEMS];
    kiln_load_blocked<T, KILN_SCAN_VPL>(x, seg, n, (T)0, ((kiln_u64)x & 15) == 0, sm, items);
#ifdef SEGMENTED
    unsigned fl[KILN_ITEMS];
    kiln_load_blocked<unsigned, KILN_ITEMS / 4>(flags, seg, n, 0u, ((kiln_u64)flags & 15) == 0, sm, fl);
#endif

    // Thread-local inclusive scan, in place.
#ifdef SEGMENTED
    unsigned any = fl[0];
#pragma unroll
    for (int k = 1; k < KILN_ITEMS; ++k) {
        items[k] = fl[k] ? items[k] : kiln_add(items[k - 1], items[k]);
        any |= fl[k];
    }
    const S total = Op::make(items[KILN_ITEMS - 1], any != 0);
#else
#pragma unroll
    for (int k = 1; k < KILN_ITEMS; ++k) items[k] = kiln_add(items[k - 1], items[k]);
    const S total = items[KILN_ITEMS - 1];
#endif

    // Across the warp, then across the block's warps.
    const S incl = kiln_warp_inclusive<S, Op>(total);
    S lane_excl = Op::shfl_up(incl, 1);
    if (lane == 0) lane_excl = Op::identity();
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();
    S warp_excl = Op::identity();
    S aggregate = Op::identity();
#pragma unroll
    for (int w = 0; w < KILN_SCAN_WARPS; ++w) {
        if (w == warp) warp_excl = aggregate;
        aggregate = Op::op(aggregate, warp_total[w]);
    }

    // Across tiles.
    if (warp == 0) {
        const S p = kiln_lookback<S, Op>(tile, aggregate, status, aggs, incls);
        if (lane == 0) tile_prefix = p;
    }
    __syncthreads();
    const T prefix = kiln_value(Op::op(Op::op(tile_prefix, warp_excl), lane_excl));

    // items[k] becomes the scan at element k: the prefix counts until the
    // first segment start at or before it.
#if EXCLUSIVE
    T before = prefix;
#endif
#ifdef SEGMENTED
    unsigned started = 0;
#endif
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k) {
#ifdef SEGMENTED
        started |= fl[k];
        const T inclusive = started ? items[k] : kiln_add(prefix, items[k]);
#else
        const T inclusive = kiln_add(prefix, items[k]);
#endif
#if EXCLUSIVE
#ifdef SEGMENTED
        items[k] = fl[k] ? (T)0 : before;
#else
        items[k] = before;
#endif
        before = inclusive;
#else
        items[k] = inclusive;
#endif
    }
    kiln_store_blocked<T, KILN_SCAN_VPL>(y, seg, n, ((kiln_u64)y & 15) == 0, sm, items);
}
