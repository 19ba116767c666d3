// Stream compaction (copy_if): out[j] = the j-th element of x that satisfies
// the predicate (INDICES defined: its index, as a u32), in order, and
// count[0] = how many there are; out[count..] is not written.
//
// One pass with decoupled look-back on the counts (lookback.cuh): each block
// loads a tile of x as 16-byte vectors through a shared-memory transpose,
// counts its selected elements, learns from the look-back how many earlier
// tiles selected, stages its own selected elements contiguously in shared
// memory and writes them out with coalesced stores. Memory-bound at
// sizeof(T) bytes read per element and sizeof(out) written per selected one.
//
// PRED: 0 x > value, 1 x < value, 2 x == value, 3 x != value, 4 x != 0.
// Comparisons are IEEE: a NaN satisfies only != and nonzero; -0.0 == 0.0.
// status: tiles + 1 64-bit words, zero before the launch (the low half of
// the last is the tile counter); aggs and incls: unused (the counts travel
// inside the status words). One block per tile.

// Elements per thread: KILN_SCAN_VPL 16-byte vectors, defined by the host
// (which sizes the look-back state by the same tiles).
#ifndef KILN_ITEMS
#error "KILN_ITEMS must be defined"
#endif
static_assert(KILN_ITEMS == KILN_SCAN_VPL * 16 / sizeof(T), "a thread holds KILN_SCAN_VPL 16-byte vectors of T");
static_assert(KILN_ITEMS <= 32, "a thread's selection is a 32-bit mask");
// Resident blocks per SM the registers must allow, from the host.
#ifndef KILN_SCAN_MIN_BLOCKS
#error "KILN_SCAN_MIN_BLOCKS must be defined"
#endif
#define TILE_ITEMS ((kiln_u64)KILN_SCAN_BLOCK * KILN_ITEMS)

// Counts past 2^32 are possible on large arrays: the look-back sums u64
// (below 2^61, so they travel inside the status words).
struct KilnCount : KilnPlainOp<kiln_u64, true> {
    static __device__ __forceinline__ kiln_u64 identity() { return 0ull; }
    static __device__ __forceinline__ kiln_u64 op(kiln_u64 earlier, kiln_u64 later) { return earlier + later; }
};

#ifdef INDICES
typedef unsigned O;
#else
typedef T O;
#endif

__device__ __forceinline__ bool kiln_select(T v, T p) {
#if PRED == 0
    return v > p;
#elif PRED == 1
    return v < p;
#elif PRED == 2
    return v == p;
#elif PRED == 3
    return v != p;
#elif PRED == 4
    return v != (T)0;
#else
#error "unknown PRED"
#endif
}

extern "C" __global__ void __launch_bounds__(KILN_SCAN_BLOCK, KILN_SCAN_MIN_BLOCKS)
    KERNEL(const T* __restrict__ x, O* __restrict__ out, kiln_u64* __restrict__ count, kiln_u64* status,
           kiln_u64* aggs, kiln_u64* incls, T value, kiln_u64 n) {
    // The warps' transpose buffers, then (after a barrier) the tile's
    // selected elements: TILE_ITEMS x sizeof(O) fits.
    __shared__ uint4 sm_all[KILN_SCAN_WARPS * KILN_WARP_VECS];
    __shared__ unsigned warp_total[KILN_SCAN_WARPS];
    __shared__ kiln_u64 tile_base;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const kiln_u64 tiles = (n + TILE_ITEMS - 1) / TILE_ITEMS;
    const unsigned tile = kiln_next_tile(reinterpret_cast<unsigned*>(status + tiles));
    const kiln_u64 seg = tile * TILE_ITEMS + (kiln_u64)warp * 32 * KILN_ITEMS;

    T items[KILN_ITEMS];
    kiln_load_blocked<T, KILN_SCAN_VPL>(x, seg, n, (T)0, ((kiln_u64)x & 15) == 0, sm_all + warp * KILN_WARP_VECS, items);
    const kiln_u64 first = seg + (kiln_u64)lane * KILN_ITEMS;
    unsigned selected = 0;  // bit k: element first + k is kept
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
        if (first + k < n && kiln_select(items[k], value)) selected |= 1u << k;
    const unsigned mine = __popc(selected);

    // Offsets within the tile: across the warp, then across the warps.
    unsigned incl = mine;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned before = __shfl_up_sync(KILN_FULL, incl, o);
        if (lane >= o) incl += before;
    }
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();  // also: every warp is done with its transpose buffer
    unsigned warp_excl = 0, tile_count = 0;
#pragma unroll
    for (int w = 0; w < KILN_SCAN_WARPS; ++w) {
        if (w == warp) warp_excl = tile_count;
        tile_count += warp_total[w];
    }
    if (warp == 0) {
        const kiln_u64 p = kiln_lookback<kiln_u64, KilnCount>(tile, tile_count, status, aggs, incls);
        if (lane == 0) tile_base = p;
    }

    // Stage the kept elements contiguously, in order, then write them out coalesced.
    O* stage = reinterpret_cast<O*>(sm_all);
    unsigned at = warp_excl + incl - mine;
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k) {
        if ((selected >> k) & 1u) {
#ifdef INDICES
            stage[at++] = (unsigned)(first + k);
#else
            stage[at++] = items[k];
#endif
        }
    }
    __syncthreads();
    const kiln_u64 base = tile_base;
    for (unsigned j = threadIdx.x; j < tile_count; j += KILN_SCAN_BLOCK) out[base + j] = stage[j];
    if (tile == tiles - 1 && threadIdx.x == 0) count[0] = base + tile_count;
}
