// Single-pass scan building blocks, shared by scan and compaction: blocked
// loads and stores through shared memory, and decoupled look-back over
// per-tile status words (Merrill & Garland, "Single-pass Parallel Prefix
// Scan with Decoupled Look-back", NVIDIA 2016).
//
// A tile is KILN_SCAN_BLOCK threads x ITEMS consecutive elements each. Tiles
// are numbered in the order blocks start (an atomic counter), so a tile only
// ever waits for tiles whose blocks are already running, and those publish
// their aggregates without waiting for anything: no deadlock whatever the
// hardware's block order. Each tile publishes its aggregate as
// soon as it is known and its inclusive prefix once its look-back is done;
// a successor folds the published values of up to 32 predecessors per step
// (one warp, one lane per predecessor) until it meets an inclusive prefix.
//
// Memory order: where the value fits in the status word (see kiln_publish)
// it is published and read with the state in one 64-bit volatile access,
// single-copy atomic, so no fence is needed. Otherwise a publisher stores
// the value, fences (__threadfence), then stores the status word; a reader
// loads the status word (volatile, so the spin re-reads L2), fences, then
// loads the value: the PTX model's fence-fence synchronisation, so a value
// is never read older than its status. The status words (and the 32-bit
// tile counter after them) must be zero before each launch; aggs and incls
// need no initialisation.

#define KILN_SCAN_BLOCK 256
#define KILN_SCAN_WARPS (KILN_SCAN_BLOCK / 32)
// 16-byte vectors each thread loads per tile, from the host (which sizes
// the look-back state by the same tiles).
#ifndef KILN_SCAN_VPL
#error "KILN_SCAN_VPL must be defined"
#endif
#define KILN_FULL 0xffffffffu
// The transposition buffer of one warp, in 16-byte vectors: KILN_SCAN_VPL
// per lane, and one of padding after every 8 so that both the striped and
// the blocked access patterns are free of bank conflicts.
#define KILN_WARP_VECS (32 * KILN_SCAN_VPL + 32 * KILN_SCAN_VPL / 8)
#define KILN_PAD(v) ((v) + ((v) >> 3))

#define KILN_STATUS_NONE 0u
#define KILN_STATUS_AGGREGATE 1u
#define KILN_STATUS_PREFIX 2u

typedef unsigned long long kiln_u64;

// What the look-back needs of an operation on plain values of type S (no
// segment flags), but for its identity() and op(), which an operation
// deriving from it adds: each value is its own payload, moved across lanes
// by warp shuffles, and travels inside the status word when `Packed`
// (4-byte values do).
template <typename S, bool Packed = sizeof(S) == 4> struct KilnPlainOp {
    typedef S Payload;
    static constexpr bool PACKED = Packed;
    static __device__ __forceinline__ Payload payload(S s) { return s; }
    static __device__ __forceinline__ unsigned flag(S) { return 0u; }
    static __device__ __forceinline__ S make(Payload p, unsigned) { return p; }
    static __device__ __forceinline__ S shfl_up(S v, int d) { return __shfl_up_sync(KILN_FULL, v, d); }
    static __device__ __forceinline__ S shfl_down(S v, int d) { return __shfl_down_sync(KILN_FULL, v, d); }
    static __device__ __forceinline__ S shfl(S v, int lane) { return __shfl_sync(KILN_FULL, v, lane); }
};

// The sum of plain values (wrapping for integers), as the look-back sees it.
// A segmented scan brings its own operation on (value, flag) pairs.
template <typename S> struct KilnSum : KilnPlainOp<S> {
    static __device__ __forceinline__ S identity() { return (S)0; }
    static __device__ __forceinline__ S op(S earlier, S later) { return kiln_add(earlier, later); }
};

// The 16 bytes of one shared-memory vector seen as elements of U.
template <typename U> union KilnWords {
    uint4 w;
    U e[16 / sizeof(U)];
};

// Load the warp's segment src[seg, seg + 32 * ITEMS), ITEMS = VPL * 16 /
// sizeof(U), into `items` blocked: lane l gets elements l * ITEMS + k, k <
// ITEMS. Global reads are coalesced (16-byte vectors when `vectors` and the
// segment is whole, else one element per lane per step); elements at or
// past n read as `fill`. `sm` is the warp's KILN_WARP_VECS vectors.
template <typename U, int VPL>
__device__ __forceinline__ void kiln_load_blocked(const U* src, kiln_u64 seg, kiln_u64 n, U fill, bool vectors,
                                                  uint4* sm, U* items) {
    constexpr int PER = 16 / sizeof(U);
    constexpr int ITEMS = VPL * PER;
    const int lane = threadIdx.x & 31;
    if (vectors && seg + 32 * ITEMS <= n) {
        const uint4* s = reinterpret_cast<const uint4*>(src + seg);
        uint4 w[VPL];
#pragma unroll
        for (int j = 0; j < VPL; ++j) w[j] = s[lane + 32 * j];
#pragma unroll
        for (int j = 0; j < VPL; ++j) sm[KILN_PAD(lane + 32 * j)] = w[j];
    } else {
        U* e = reinterpret_cast<U*>(sm);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = lane + 32 * k;
            e[KILN_PAD(i / PER) * PER + i % PER] = seg + i < n ? src[seg + i] : fill;
        }
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < VPL; ++j) {
        KilnWords<U> v;
        v.w = sm[KILN_PAD(lane * VPL + j)];
#pragma unroll
        for (int c = 0; c < PER; ++c) items[j * PER + c] = v.e[c];
    }
    __syncwarp();
}

// Store `items` (blocked, as kiln_load_blocked gives them) to the warp's
// segment dst[seg, seg + 32 * ITEMS), skipping elements at or past n.
template <typename U, int VPL>
__device__ __forceinline__ void kiln_store_blocked(U* dst, kiln_u64 seg, kiln_u64 n, bool vectors, uint4* sm,
                                                   const U* items) {
    constexpr int PER = 16 / sizeof(U);
    constexpr int ITEMS = VPL * PER;
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int j = 0; j < VPL; ++j) {
        KilnWords<U> v;
#pragma unroll
        for (int c = 0; c < PER; ++c) v.e[c] = items[j * PER + c];
        sm[KILN_PAD(lane * VPL + j)] = v.w;
    }
    __syncwarp();
    if (vectors && seg + 32 * ITEMS <= n) {
        uint4* d = reinterpret_cast<uint4*>(dst + seg);
#pragma unroll
        for (int j = 0; j < VPL; ++j) d[lane + 32 * j] = sm[KILN_PAD(lane + 32 * j)];
    } else {
        const U* e = reinterpret_cast<const U*>(sm);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = lane + 32 * k;
            if (seg + i < n) dst[seg + i] = e[KILN_PAD(i / PER) * PER + i % PER];
        }
    }
    __syncwarp();
}

// The tile this block scans, in the order blocks start; every thread calls it.
__device__ __forceinline__ unsigned kiln_next_tile(unsigned* counter) {
    __shared__ unsigned tile;
    if (threadIdx.x == 0) tile = atomicAdd(counter, 1u);
    __syncthreads();
    return tile;
}

// Inclusive scan of `v` across the warp (lane order is element order).
template <typename S, typename Op> __device__ __forceinline__ S kiln_warp_inclusive(S v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const S before = Op::shfl_up(v, o);
        if (lane >= o) v = Op::op(before, v);
    }
    return v;
}

// A tile's status word (64 bits, zero before the launch): bits 63-62 the
// state (NONE, AGGREGATE, PREFIX), bit 61 the segment flag of the published
// value; when the operator's payload is PACKED, bits 60-0 hold the value
// itself (a 4-byte payload, or a count below 2^61), so one 64-bit store
// publishes value and state together and one load reads both: no fence on
// either side, and one L2 round trip per look-back step. Otherwise the value
// goes to aggs or incls (one payload per tile) with the fences below.
#define KILN_STATE_SHIFT 62
#define KILN_FLAG_BIT (1ull << 61)
#define KILN_VALUE_MASK (KILN_FLAG_BIT - 1ull)

template <typename P> __device__ __forceinline__ kiln_u64 kiln_payload_bits(P p) {
    if constexpr (sizeof(P) == 4) {
        unsigned u;
        memcpy(&u, &p, 4);
        return u;
    } else {
        kiln_u64 u;
        memcpy(&u, &p, 8);
        return u;
    }
}

template <typename P> __device__ __forceinline__ P kiln_payload_from_bits(kiln_u64 bits) {
    P p;
    if constexpr (sizeof(P) == 4) {
        const unsigned u = (unsigned)bits;
        memcpy(&p, &u, 4);
    } else {
        memcpy(&p, &bits, 8);
    }
    return p;
}

// Publish `value` for tile `pos` in `state`, with segment `flag`.
template <typename Op>
__device__ __forceinline__ void kiln_publish(volatile kiln_u64* status, typename Op::Payload* aggs,
                                             typename Op::Payload* incls, long long pos, unsigned state,
                                             unsigned flag, typename Op::Payload value) {
    const kiln_u64 head = ((kiln_u64)state << KILN_STATE_SHIFT) | (flag ? KILN_FLAG_BIT : 0ull);
    if constexpr (Op::PACKED) {
        status[pos] = head | kiln_payload_bits(value);
    } else {
        volatile typename Op::Payload* slot = state == KILN_STATUS_PREFIX ? incls : aggs;
        slot[pos] = value;
        __threadfence();
        status[pos] = head;
    }
}

// Wait until tile `pos` has published; return its state, flag and value.
template <typename Op>
__device__ __forceinline__ unsigned kiln_await(volatile kiln_u64* status, typename Op::Payload* aggs,
                                               typename Op::Payload* incls, long long pos, unsigned* flag,
                                               typename Op::Payload* value) {
    kiln_u64 word;
    // Spin on L2 (volatile): the predecessor is running and publishes its
    // aggregate without waiting for anything.
    do {
        word = status[pos];
    } while ((word >> KILN_STATE_SHIFT) == KILN_STATUS_NONE);
    const unsigned state = (unsigned)(word >> KILN_STATE_SHIFT);
    *flag = (word & KILN_FLAG_BIT) ? 1u : 0u;
    if constexpr (Op::PACKED) {
        *value = kiln_payload_from_bits<typename Op::Payload>(word & KILN_VALUE_MASK);
    } else {
        __threadfence();
        volatile typename Op::Payload* slot = state == KILN_STATUS_PREFIX ? incls : aggs;
        *value = slot[pos];
    }
    return state;
}

// Decoupled look-back for `tile`, whose elements fold to `aggregate`. Every
// lane of one warp calls it; it publishes the tile's aggregate and then its
// inclusive prefix, and returns the tile's exclusive prefix in every lane.
template <typename S, typename Op>
__device__ __forceinline__ S kiln_lookback(unsigned tile, S aggregate, kiln_u64* status_words,
                                           typename Op::Payload* aggs, typename Op::Payload* incls) {
    typedef typename Op::Payload P;
    volatile kiln_u64* status = status_words;
    const int lane = threadIdx.x & 31;
    const unsigned flag = Op::flag(aggregate);
    if (tile == 0) {
        if (lane == 0) kiln_publish<Op>(status, aggs, incls, 0, KILN_STATUS_PREFIX, flag, Op::payload(aggregate));
        return Op::identity();
    }
    // A segment that starts inside the tile makes its aggregate its inclusive
    // prefix as well: successors need not wait for this tile's look-back.
    const bool closed = flag != 0;
    if (lane == 0)
        kiln_publish<Op>(status, aggs, incls, tile, closed ? KILN_STATUS_PREFIX : KILN_STATUS_AGGREGATE, flag,
                         Op::payload(aggregate));
    S exclusive = Op::identity();
    long long base = (long long)tile - 1;
    for (;;) {
        // Lane k looks at tile base - k; tiles before 0 count as an empty prefix.
        const long long pos = base - lane;
        unsigned st = KILN_STATUS_PREFIX, f = 0;
        P p = Op::payload(Op::identity());
        if (pos >= 0) st = kiln_await<Op>(status, aggs, incls, pos, &f, &p);
        const unsigned prefixes = __ballot_sync(KILN_FULL, st == KILN_STATUS_PREFIX);
        // Lanes past the nearest inclusive prefix are not needed.
        const int stop = prefixes ? __ffs(prefixes) - 1 : 31;
        S v = lane <= stop ? Op::make(p, f) : Op::identity();
        // Fold lanes stop..0 in tile order: a higher lane holds an earlier tile.
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const S earlier = Op::shfl_down(v, o);
            if (lane + o < 32) v = Op::op(earlier, v);
        }
        exclusive = Op::op(Op::shfl(v, 0), exclusive);
        if (prefixes) break;
        base -= 32;
    }
    if (lane == 0 && !closed)
        kiln_publish<Op>(status, aggs, incls, tile, KILN_STATUS_PREFIX, flag,
                         Op::payload(Op::op(exclusive, aggregate)));
    return exclusive;
}
