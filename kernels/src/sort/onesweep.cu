// sort (CUDA): the onesweep LSD radix sort (Adinets & Merrill, "Onesweep: A
// Faster Least Significant Digit Radix Sort for GPUs", 2022) on 8-bit
// digits, in two kernels (STEP), or one for a single tile:
//
//   0 digit counts: one read of the caller's keys counts all four digit
//                   histograms at once: counts[pass * 256 + digit].
//   1 pass:         one launch per digit (pass 0..3). Each block takes the
//                   next tile of KILN_TILE keys, ranks them stably by digit,
//                   learns where each digit's run goes from the tiles before
//                   it (decoupled look-back, one thread per digit), and
//                   writes the tile in digit order.
//   2 one tile:     up to one tile of keys, sorted whole by one block in
//                   one launch (the host's choice for small sorts).
//
// So a pass reads every key once and writes it once: 8 bytes per key and
// pass for keys alone, 16 with values (the three-phase sort of kernel.cu
// reads keys twice), plus 4 bytes per key once for the digit counts.
//
// Stability: within a tile, a key's place counts the earlier keys of its
// digit (earlier warps, earlier rows of its warp, lower lanes of its row);
// across tiles, a digit's run in tile t starts after the same digit's keys
// of tiles 0..t-1. Each pass is a stable counting sort; LSD order makes the
// four a stable sort.
//
// Look-back state, per pass: one 32-bit status word per tile and digit,
// flag in the top two bits (0 none yet, AGGREGATE: the tile's count of the
// digit, PREFIX: the keys of the digit in this tile and every tile before
// it, plus the digit's start in the output), count in the low 30 bits.
//
// Memory order: flag and count travel in one aligned 32-bit volatile store
// (relaxed, single-copy atomic in the PTX memory model), so a reader that
// sees the flag sees the count written with it; a word only goes NONE ->
// AGGREGATE -> PREFIX, and both non-NONE values are true. Nothing else is
// published through the words (successors read no data of this tile; the
// next pass reads the keys after the launch ends), so no fence is needed:
// the scan's lookback.cuh publishes wider values apart from their flags,
// hence its fences. Spins read through volatile loads, which go to L2 each
// time rather than to the SM's incoherent L1.
//
// Tiles are numbered in the order blocks start (an atomic counter per
// pass), so a tile waits only on blocks that are already running: no
// deadlock whatever the hardware's block order. Tile 0 folds the digit's
// output start into its PREFIX, so a successor's sum is its global start.
// 30 bits hold up to 2^30 - 1 keys; the host runs kernel.cu for more. The
// status words and the counters after them must be zero before the first
// pass; counts must be zero before STEP 0.
//
// flags (STEP 1), as in kernel.cu: 1 map keys read, 2 unmap keys written, 4
// move values (vals_in to vals_out), 8 values are the input positions
// (argsort: vals_in unread), 16 write no keys (argsort's last pass).

typedef unsigned long long kiln_u64;

#define KILN_FULL 0xffffffffu

#if STEP == 0
// Blocks of 256 threads; each warp counts into its own copy of the four
// histograms (KILN_SUBS = 8 warps), so that warps never collide. Loads are
// 16-byte vectors, two in flight per thread. Bound: memory (4 bytes read
// per key) or the four shared-memory atomics per key, whichever is slower.
// Measured on the H100 (64 Mi random keys): 156 us, against 245 us with
// four copies and a warp vote per digit that turned a digit shared by the
// whole warp into one atomic.
#define KILN_COUNT_THREADS 256
#define KILN_SUBS 8
#define KILN_UNROLL 2

// Count the four digits of pattern `b` into `h` (four histograms of 256);
// lanes without a key pass valid = false.
__device__ __forceinline__ void kiln_count_digits(unsigned* h, unsigned b, bool valid) {
    if (!valid) return;
#pragma unroll
    for (int p = 0; p < 4; ++p) atomicAdd(&h[p * 256 + ((b >> (8 * p)) & 255u)], 1u);
}

extern "C" __global__ void __launch_bounds__(KILN_COUNT_THREADS)
KERNEL(const unsigned* __restrict__ keys, unsigned* __restrict__ counts, kiln_u64 n) {
    __shared__ unsigned hist[KILN_SUBS][4 * 256];
    for (unsigned j = threadIdx.x; j < KILN_SUBS * 4 * 256; j += KILN_COUNT_THREADS) (&hist[0][0])[j] = 0;
    __syncthreads();
    unsigned* h = hist[(threadIdx.x / 32) % KILN_SUBS];
    const unsigned lane = threadIdx.x & 31u;
    // Keys before the first 16-byte boundary, then whole vectors, then the rest.
    const kiln_u64 head_bytes = (16 - ((kiln_u64)keys & 15)) & 15;
    const kiln_u64 head = head_bytes / 4 < n ? head_bytes / 4 : n;
    const kiln_u64 nv = (n - head) / 4;
    const uint4* kv = reinterpret_cast<const uint4*>(keys + head);
    // Grid-stride over whole warps' worth of vectors.
    const kiln_u64 warp = ((kiln_u64)blockIdx.x * KILN_COUNT_THREADS + threadIdx.x) / 32;
    const kiln_u64 warps = (kiln_u64)gridDim.x * (KILN_COUNT_THREADS / 32);
    for (kiln_u64 start = warp * 32 * KILN_UNROLL; start < nv; start += warps * 32 * KILN_UNROLL) {
        uint4 v[KILN_UNROLL];
#pragma unroll
        for (int u = 0; u < KILN_UNROLL; ++u) {
            const kiln_u64 i = start + u * 32 + lane;
            v[u] = i < nv ? __ldg(kv + i) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < KILN_UNROLL; ++u) {
            const bool here = start + u * 32 + lane < nv;
            kiln_count_digits(h, kiln_map(v[u].x), here);
            kiln_count_digits(h, kiln_map(v[u].y), here);
            kiln_count_digits(h, kiln_map(v[u].z), here);
            kiln_count_digits(h, kiln_map(v[u].w), here);
        }
    }
    // The head (< 4 keys) and the tail (< 4): the first warp of block 0.
    if (blockIdx.x == 0 && threadIdx.x < 32) {
        const kiln_u64 t = head + nv * 4 + lane;
        kiln_count_digits(h, lane < head ? kiln_map(keys[lane]) : 0u, lane < head);
        kiln_count_digits(h, t < n ? kiln_map(keys[t]) : 0u, t < n);
    }
    __syncthreads();
    for (unsigned j = threadIdx.x; j < 4 * 256; j += KILN_COUNT_THREADS) {
        unsigned c = 0;
#pragma unroll
        for (int s = 0; s < KILN_SUBS; ++s) c += hist[s][j];
        if (c) atomicAdd(&counts[j], c);
    }
}

#else
// STEP 1 (a pass) and STEP 2 (a whole sort of one tile) rank alike.
// KILN_THREADS (384) threads x KILN_ITEMS keys a tile, at least
// KILN_MIN_BLOCKS blocks per SM (the register bound), all three from the
// host (sort/plan.rs): 16 keys in three blocks (56 registers) for keys
// alone, 20 in two (80 registers) with values, where three would spill.
// Several blocks on an SM overlap one block's look-back wait with the
// others' loads and stores. VALUES 0 compiles the keys-only sort (no values
// code, no slot_digit), 1 the sort that moves values when flag 4 says so.
#define KILN_WARPS (KILN_THREADS / 32)
#define KILN_WARP_TILE (32 * KILN_ITEMS)
#define KILN_TILE (KILN_THREADS * KILN_ITEMS)

#define KILN_AGGREGATE 0x40000000u
#define KILN_PREFIX 0x80000000u
#define KILN_COUNT_MASK 0x3fffffffu

// Exclusive prefix sums over the 256 digits of two counts per digit, thread
// d holding digit d's (threads past 255 pass zeros and get garbage).
// `scratch` holds 16 words. Contains a barrier: every thread calls it.
__device__ __forceinline__ uint2 kiln_digit_scan(uint2 v, unsigned* scratch) {
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x / 32;
    uint2 x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned a = __shfl_up_sync(KILN_FULL, x.x, o), b = __shfl_up_sync(KILN_FULL, x.y, o);
        if (lane >= (unsigned)o) {
            x.x += a;
            x.y += b;
        }
    }
    if (warp < 8 && lane == 31) {
        scratch[warp] = x.x;
        scratch[8 + warp] = x.y;
    }
    __syncthreads();
    uint2 before = make_uint2(0, 0);
#pragma unroll
    for (int w = 0; w < 8; ++w) {
        if (w < (int)warp) {
            before.x += scratch[w];
            before.y += scratch[8 + w];
        }
    }
    return make_uint2(before.x + x.x - v.x, before.y + x.y - v.y);
}

// The keys of `digit` in the tiles before `tile` plus the digit's output
// start: the sum of their status words back to the nearest PREFIX. Tile 0
// always publishes a PREFIX, so the walk ends there at the latest. The walk
// reads KILN_LOOK words at once (a word still zero is read again when the
// walk reaches it), so a long walk waits on one L2 round trip per
// KILN_LOOK tiles. Measured on the H200 (64 Mi random u32 keys): 0.414 ms a
// pass with 4, against 0.432 with 1, 0.423 with 8 and 0.441 with 16; 0.364
// with no look-back at all (a wrong order), the rest of the gap to CUB.
#define KILN_LOOK 4
__device__ __forceinline__ unsigned kiln_look_back(const unsigned* status, unsigned tile, unsigned digit) {
    const volatile unsigned* s = status;
    unsigned sum = 0;
    for (int t = (int)tile - 1;; t -= KILN_LOOK) {
        unsigned w[KILN_LOOK];
#pragma unroll
        for (int j = 0; j < KILN_LOOK; ++j) w[j] = t - j >= 0 ? s[(kiln_u64)(t - j) * 256 + digit] : 0u;
        // Tiles below 0 are never reached: tile 0's word is a PREFIX.
#pragma unroll
        for (int j = 0; j < KILN_LOOK; ++j) {
            unsigned v = w[j];
            // The tile is running (it took its number first) and publishes
            // its count without waiting for anything.
            while (v == 0) v = s[(kiln_u64)(t - j) * 256 + digit];
            sum += v & KILN_COUNT_MASK;
            if (v & KILN_PREFIX) return sum;
        }
    }
}


// The lanes whose 8-bit digit equals this lane's: eight ballots (CUB's
// MatchAny<8>). Measured on the H100 (64 Mi random u32 keys), a pass took
// 486 us this way against 736 us with __match_any_sync.
__device__ __forceinline__ unsigned kiln_match_digit(unsigned d) {
    unsigned m = KILN_FULL;
#pragma unroll
    for (int b = 0; b < 8; ++b) {
        const unsigned bit = (d >> b) & 1u;
        const unsigned vote = __ballot_sync(KILN_FULL, bit);
        m &= bit ? vote : ~vote;
    }
    return m;
}

// Rank a warp's keys by the digit at `shift`: a key's place among its
// warp's keys of its digit is the count of them in earlier rows (the warp's
// counter) plus those in lower lanes of its row (match + popc). The last
// lane of each group of equal digits advances the counter (one shared
// atomic gives the old value and stores the new: measured 474 us a pass
// against 486 for a load and a store). `counts` (the warp's 256 counters)
// starts at zero and ends as the warp's count of each digit.
__device__ __forceinline__ void kiln_rank_warp(const unsigned (&key)[KILN_ITEMS], unsigned (&place)[KILN_ITEMS],
                                               unsigned* counts, unsigned shift) {
    const unsigned lane = threadIdx.x & 31u;
    const unsigned lanes_upto = (2u << lane) - 1u;
#pragma unroll
    for (int i = 0; i < KILN_ITEMS; ++i) {
        const unsigned d = (key[i] >> shift) & 255u;
        const unsigned peers = kiln_match_digit(d);
        const unsigned last = 31 - __clz(peers);
        const unsigned upto = __popc(peers & lanes_upto);
        unsigned before = 0;
        if (lane == last) before = atomicAdd(&counts[d], upto);
        before = __shfl_sync(KILN_FULL, before, last);
        place[i] = before + upto - 1;
        // The next row's leader of this digit may be another lane.
        __syncwarp();
    }
}

// Each key's slot in the tile's digit order (pads: count and after): its
// place among its warp's keys of its digit plus the digit's start in the
// tile (`local_start`) and the warp's start within the digit's run
// (`warp_starts`, its row of the counters after kiln_warp_starts).
__device__ __forceinline__ void kiln_add_starts(const unsigned (&key)[KILN_ITEMS], unsigned (&place)[KILN_ITEMS],
                                                unsigned shift, const unsigned* local_start,
                                                const unsigned* warp_starts) {
#pragma unroll
    for (int i = 0; i < KILN_ITEMS; ++i) {
        const unsigned d = (key[i] >> shift) & 255u;
        place[i] += local_start[d] + warp_starts[d];
    }
}

// items[place[i]] = v[i], then a barrier: the tile in slot order. Every
// thread calls it.
__device__ __forceinline__ void kiln_scatter(const unsigned (&v)[KILN_ITEMS], const unsigned (&place)[KILN_ITEMS],
                                             unsigned* items) {
#pragma unroll
    for (int i = 0; i < KILN_ITEMS; ++i) items[place[i]] = v[i];
    __syncthreads();
}

// Per digit (thread d < 256; the others get 0): the warps' counts become
// each warp's start within the digit's run of the tile, and the sum, the
// tile's count of the digit (pads left out of digit 255's), is returned.
__device__ __forceinline__ unsigned kiln_warp_starts(unsigned (*warp_counts)[256], unsigned count) {
    const unsigned tid = threadIdx.x;
    unsigned tile_count = 0;
    if (tid < 256) {
#pragma unroll
        for (int w = 0; w < KILN_WARPS; ++w) {
            const unsigned c = warp_counts[w][tid];
            warp_counts[w][tid] = tile_count;
            tile_count += c;
        }
        if (tid == 255) tile_count -= KILN_TILE - count;
    }
    return tile_count;
}

#if STEP == 1
extern "C" __global__ void __launch_bounds__(KILN_THREADS, KILN_MIN_BLOCKS)
KERNEL(const unsigned* __restrict__ keys_in, const unsigned* __restrict__ vals_in, unsigned* __restrict__ keys_out,
       unsigned* __restrict__ vals_out, const unsigned* __restrict__ counts, unsigned* __restrict__ status, kiln_u64 n,
       unsigned tiles, unsigned pass, unsigned flags) {
    // Each warp's digit counters while ranking; then the tile in digit
    // order, keys and after them values.
    __shared__ union {
        unsigned warp_counts[KILN_WARPS][256];
        unsigned items[KILN_TILE];
    } sm;
    // The digit of each slot of `items`, kept for the values.
    __shared__ unsigned char slot_digit[KILN_TILE];
    // Per digit: the start of its run in the tile, and its global start minus that (modulo 2^32).
    __shared__ unsigned local_start[256];
    __shared__ unsigned to_global[256];
    __shared__ unsigned scratch[16];
    __shared__ unsigned tile_index;

    const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid / 32;
    const unsigned shift = 8 * pass;
    unsigned* pass_status = status + (kiln_u64)pass * tiles * 256;
    if (tid == 0) tile_index = atomicAdd(&status[(kiln_u64)4 * tiles * 256 + pass], 1u);
    for (unsigned j = tid; j < KILN_WARPS * 256; j += KILN_THREADS) (&sm.warp_counts[0][0])[j] = 0;
    __syncthreads();
    const unsigned tile = tile_index;
    const kiln_u64 base = (kiln_u64)tile * KILN_TILE;
    const unsigned count = (unsigned)min((kiln_u64)KILN_TILE, n - base);
    // Tile 0 turns the pass's digit counts into output starts.
    const unsigned digit_total = (tile == 0 && tid < 256) ? counts[pass * 256 + tid] : 0u;

    // Warp w holds keys w * KILN_WARP_TILE + 32 i + lane of the tile (i <
    // KILN_ITEMS): each row one 128-byte line, and the warp's keys in order
    // row by row, lane by lane.
    const unsigned first = warp * KILN_WARP_TILE + lane;
    // Past the last key, the tile is padded with the pattern whose every
    // digit is 255: pads rank after every key (they come last, and 255 is
    // the last digit), so they take the slots from `count` on and move no
    // key. So ranking and scattering need no bounds checks (which would
    // cost registers); only digit 255's published count leaves them out.
    unsigned key[KILN_ITEMS], place[KILN_ITEMS];
    const unsigned* src = keys_in + base + first;
#pragma unroll
    for (int i = 0; i < KILN_ITEMS; ++i) {
        if (first + 32 * i < count) {
            const unsigned raw = src[32 * i];
            key[i] = (flags & 1u) ? kiln_map(raw) : raw;
        } else {
            key[i] = 0xffffffffu;
        }
    }

    // Rank within the warp, then per digit (thread d) the warps' counts
    // become each warp's start within the digit's run; their sum is the
    // tile's count, published at once so that successors need not wait for
    // this tile's look-back.
    kiln_rank_warp(key, place, sm.warp_counts[warp], shift);
    __syncthreads();

    const unsigned tile_count = kiln_warp_starts(sm.warp_counts, count);
    if (tid < 256) {
        if (tile != 0) *(volatile unsigned*)&pass_status[(kiln_u64)tile * 256 + tid] = KILN_AGGREGATE | tile_count;
    }
    const uint2 starts = kiln_digit_scan(make_uint2(tile_count, digit_total), scratch);
    if (tid < 256) {
        // Tile 0's exclusive sum of the digit counts is each digit's output start.
        const unsigned before = tile == 0 ? starts.y : kiln_look_back(pass_status, tile, tid);
        *(volatile unsigned*)&pass_status[(kiln_u64)tile * 256 + tid] = KILN_PREFIX | (before + tile_count);
        local_start[tid] = starts.x;
        to_global[tid] = before - starts.x;
    }
    __syncthreads();

    kiln_add_starts(key, place, shift, local_start, sm.warp_counts[warp]);
    // Every warp's starts are read before `items` overwrites them.
    __syncthreads();
    kiln_scatter(key, place, sm.items);

    const bool with_vals = VALUES && (flags & 4u) != 0;
    unsigned val[KILN_ITEMS];
    if (with_vals) {
        // In flight while the keys are written.
        const unsigned* vsrc = vals_in + base + first;
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) {
            const unsigned local = first + 32 * i;
            val[i] = local < count ? ((flags & 8u) ? (unsigned)base + local : vsrc[32 * i]) : 0u;
        }
    }
    // Consecutive threads write consecutive keys of a digit's run.
#pragma unroll
    for (int j = 0; j < KILN_ITEMS; ++j) {
        const unsigned slot = j * KILN_THREADS + tid;
        if (slot < count) {
            const unsigned b = sm.items[slot];
            const unsigned d = (b >> shift) & 255u;
            if (!(flags & 16u)) keys_out[to_global[d] + slot] = (flags & 2u) ? kiln_unmap(b) : b;
            if (with_vals) slot_digit[slot] = (unsigned char)d;
        }
    }
    if (with_vals) {
        // Every key is read out of `items` before the values overwrite it.
        __syncthreads();
        kiln_scatter(val, place, sm.items);
#pragma unroll
        for (int j = 0; j < KILN_ITEMS; ++j) {
            const unsigned slot = j * KILN_THREADS + tid;
            if (slot < count) vals_out[to_global[slot_digit[slot]] + slot] = sm.items[slot];
        }
    }
}
#elif STEP == 2
// The sort of n <= KILN_TILE keys in one launch of one block (CUB's
// single-tile sort): the four passes of STEP 1, where the tile's own digit
// starts are the output starts, so there is no digit count and no
// look-back; between passes the keys (and values) stay on the chip. A
// small sort costs one launch instead of five and two memsets.
// flags as in STEP 1, plus 32: sort in place (keys and values are read
// from keys_out and vals_out; keys_in and vals_in are unread). No pointer
// is __restrict__: in place, the block reads all it sorts before its first
// barrier and writes after its last.
extern "C" __global__ void __launch_bounds__(KILN_THREADS, 1)
KERNEL(const unsigned* keys_in, const unsigned* vals_in, unsigned* keys_out, unsigned* vals_out, kiln_u64 n,
       unsigned flags) {
    __shared__ union {
        unsigned warp_counts[KILN_WARPS][256];
        unsigned items[KILN_TILE];
    } sm;
    __shared__ unsigned local_start[256];
    __shared__ unsigned scratch[16];

    const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid / 32;
    const unsigned count = (unsigned)n;
    const unsigned first = warp * KILN_WARP_TILE + lane;
    const unsigned* ksrc = (flags & 32u) ? keys_out : keys_in;
    const unsigned* vsrc = (flags & 32u) ? vals_out : vals_in;
    const bool with_vals = VALUES && (flags & 4u) != 0;
    // Pads past the last key, as in STEP 1: every digit 255, so they rank
    // last in every pass and stay in slots count.. of the tile.
    unsigned key[KILN_ITEMS], place[KILN_ITEMS], val[KILN_ITEMS];
#pragma unroll
    for (int i = 0; i < KILN_ITEMS; ++i) {
        const unsigned local = first + 32 * i;
        key[i] = local < count ? ((flags & 1u) ? kiln_map(ksrc[local]) : ksrc[local]) : 0xffffffffu;
        if (with_vals) val[i] = local < count ? ((flags & 8u) ? local : vsrc[local]) : 0u;
    }

    for (unsigned pass = 0; pass < 4; ++pass) {
        const unsigned shift = 8 * pass;
        for (unsigned j = tid; j < KILN_WARPS * 256; j += KILN_THREADS) (&sm.warp_counts[0][0])[j] = 0;
        __syncthreads();
        kiln_rank_warp(key, place, sm.warp_counts[warp], shift);
        __syncthreads();
        const unsigned tile_count = kiln_warp_starts(sm.warp_counts, count);
        const uint2 starts = kiln_digit_scan(make_uint2(tile_count, 0u), scratch);
        if (tid < 256) local_start[tid] = starts.x;
        __syncthreads();
        kiln_add_starts(key, place, shift, local_start, sm.warp_counts[warp]);
        // The last pass's slots are the output positions.
        if (pass == 3) break;
        // Every warp's starts are read before `items` overwrites them.
        __syncthreads();
        kiln_scatter(key, place, sm.items);
        // The tile in this pass's order, held as it was loaded: the next
        // pass's ranking keeps this order among equal digits.
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) key[i] = sm.items[first + 32 * i];
        if (with_vals) {
            __syncthreads();
            kiln_scatter(val, place, sm.items);
#pragma unroll
            for (int i = 0; i < KILN_ITEMS; ++i) val[i] = sm.items[first + 32 * i];
        }
        // Every slot is read before the counters (which share the memory) are zeroed.
        __syncthreads();
    }

    // Each key (and value) straight from its registers to its slot; pads
    // hold slots count.. . Measured on the H200, staging the tile in `items`
    // for coalesced stores instead was faster: 1 Ki keys 8.7 us against
    // 9.1, with values 12.7 against 14.6.
#pragma unroll
    for (int i = 0; i < KILN_ITEMS; ++i) {
        if (place[i] < count) {
            if (!(flags & 16u)) keys_out[place[i]] = (flags & 2u) ? kiln_unmap(key[i]) : key[i];
            if (with_vals) vals_out[place[i]] = val[i];
        }
    }
}
#else
#error "STEP must be 0 (digit counts), 1 (pass) or 2 (one tile)"
#endif
#endif
