// sort: one pass of an LSD radix sort on 8-bit digits (four passes sort
// 32-bit keys), in three kernels (PHASE):
//
//   0 upsweep:   each tile of KILN_TILE keys counts its digits:
//                hist[digit * tiles + tile].
//   1 scan:      each digit's row of hist becomes its exclusive prefix sum
//                over tiles (in place), and totals[digit] the row's sum.
//   2 downsweep: each tile ranks its keys stably by digit, gathers them in
//                shared memory in digit order, and writes each digit's run
//                to base[digit] + hist[digit * tiles + tile] + (position in
//                the run), where base is the exclusive scan of totals.
//
// The CUDA backend runs these only for more keys than the onesweep sort
// (onesweep.cu) can count; WGSL and the CPU always run them.
//
// Stability: within a tile, keys of one digit keep their order (the rank of
// a key counts the earlier keys of its digit); across tiles, the scan puts
// earlier tiles first. So each pass is a stable counting sort, and LSD
// order makes the four passes a stable sort.
//
// Keys are moved as 32-bit patterns (kiln_map and kiln_unmap, keys.cuh,
// which the host prepends): the first pass maps the keys it reads (flag 1),
// the last maps back what it writes (flag 2).
//
// flags: 1 map keys read, 2 unmap keys written, 4 move values (vals_in to
// vals_out), 8 values are the input positions (argsort: vals_in unread),
// 16 write no keys (argsort's last pass).
//
// Bound: memory. Per pass the upsweep reads every key once and the
// downsweep reads and writes every key (and value) once: 12 bytes per key
// and pass for keys alone, 20 with values.

typedef unsigned long long kiln_u64;

#define KILN_THREADS 256
#define KILN_ITEMS 16
#define KILN_TILE (KILN_THREADS * KILN_ITEMS)
#define KILN_WARPS (KILN_THREADS / 32)
#define KILN_NO_DIGIT 256u

__device__ __forceinline__ unsigned kiln_lane() { return threadIdx.x & 31u; }

// Exclusive prefix sum of one value per thread over the block (256
// threads), with the block's total; `scratch` holds KILN_WARPS words.
// Contains barriers: every thread of the block must call it.
__device__ __forceinline__ unsigned kiln_block_scan(unsigned v, unsigned* scratch, unsigned* total) {
    const unsigned lane = kiln_lane(), warp = threadIdx.x / 32;
    unsigned x = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= (unsigned)d) x += y;
    }
    if (lane == 31) scratch[warp] = x;
    __syncthreads();
    unsigned before = 0, sum = 0;
#pragma unroll
    for (int w = 0; w < KILN_WARPS; ++w) {
        const unsigned s = scratch[w];
        before += (w < (int)warp) ? s : 0u;
        sum += s;
    }
    *total = sum;
    // `scratch` is reused by the next call.
    __syncthreads();
    return before + x - v;
}

#if PHASE == 0
extern "C" __global__ void __launch_bounds__(KILN_THREADS)
KERNEL(const unsigned* __restrict__ keys_in, const unsigned* __restrict__ vals_in, unsigned* __restrict__ keys_out,
       unsigned* __restrict__ vals_out, unsigned* __restrict__ hist, unsigned* __restrict__ totals, kiln_u64 n,
       unsigned tiles, unsigned shift, unsigned flags) {
    (void)vals_in; (void)keys_out; (void)vals_out; (void)totals;
    __shared__ unsigned counts[256];
    const unsigned tid = threadIdx.x, lane = kiln_lane();
    for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        counts[tid] = 0;
        __syncthreads();
        const kiln_u64 base = (kiln_u64)tile * KILN_TILE;
        unsigned bits[KILN_ITEMS];
        // All loads first, so that KILN_ITEMS of them are in flight.
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) {
            const kiln_u64 idx = base + (unsigned)i * KILN_THREADS + tid;
            bits[i] = idx < n ? keys_in[idx] : 0u;
        }
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) {
            const kiln_u64 idx = base + (unsigned)i * KILN_THREADS + tid;
            const unsigned b = (flags & 1u) ? kiln_map(bits[i]) : bits[i];
            const unsigned d = idx < n ? (b >> shift) & 255u : KILN_NO_DIGIT;
            // One shared atomic per distinct digit in the warp.
            const unsigned peers = __match_any_sync(0xffffffffu, d);
            if (d != KILN_NO_DIGIT && lane == (unsigned)(__ffs(peers) - 1)) atomicAdd(&counts[d], __popc(peers));
        }
        __syncthreads();
        hist[(kiln_u64)tid * tiles + tile] = counts[tid];
        // The next tile clears `counts`.
        __syncthreads();
    }
}

#elif PHASE == 1
// One block per digit: the row's exclusive scan, 1024 counts per step.
extern "C" __global__ void __launch_bounds__(KILN_THREADS)
KERNEL(const unsigned* __restrict__ keys_in, const unsigned* __restrict__ vals_in, unsigned* __restrict__ keys_out,
       unsigned* __restrict__ vals_out, unsigned* __restrict__ hist, unsigned* __restrict__ totals, kiln_u64 n,
       unsigned tiles, unsigned shift, unsigned flags) {
    (void)keys_in; (void)vals_in; (void)keys_out; (void)vals_out; (void)n; (void)shift; (void)flags;
    __shared__ unsigned scratch[KILN_WARPS];
    const unsigned tid = threadIdx.x;
    for (unsigned d = blockIdx.x; d < 256; d += gridDim.x) {
        unsigned* row = hist + (kiln_u64)d * tiles;
        unsigned carry = 0;
        for (unsigned start = 0; start < tiles; start += 4 * KILN_THREADS) {
            unsigned v[4];
            unsigned sum = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const unsigned t = start + 4 * tid + j;
                v[j] = t < tiles ? row[t] : 0u;
                sum += v[j];
            }
            unsigned total;
            unsigned before = carry + kiln_block_scan(sum, scratch, &total);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const unsigned t = start + 4 * tid + j;
                if (t < tiles) row[t] = before;
                before += v[j];
            }
            carry += total;
        }
        if (tid == 0) totals[d] = carry;
    }
}

#elif PHASE == 2
extern "C" __global__ void __launch_bounds__(KILN_THREADS)
KERNEL(const unsigned* __restrict__ keys_in, const unsigned* __restrict__ vals_in, unsigned* __restrict__ keys_out,
       unsigned* __restrict__ vals_out, unsigned* __restrict__ hist, unsigned* __restrict__ totals, kiln_u64 n,
       unsigned tiles, unsigned shift, unsigned flags) {
    __shared__ unsigned s_keys[KILN_TILE];
    __shared__ unsigned s_vals[KILN_TILE];
    // warp_counts[w][d]: keys of digit d in warp w this round, then their
    // first rank; kept zero between rounds (each leader clears its entry).
    __shared__ unsigned warp_counts[KILN_WARPS][256];
    __shared__ unsigned tile_count[256];
    __shared__ unsigned local_start[256];
    __shared__ unsigned global_start[256];
    __shared__ unsigned digit_base[256];
    __shared__ unsigned scratch[KILN_WARPS];
    const unsigned tid = threadIdx.x, lane = kiln_lane(), warp = tid / 32;
    const unsigned lanes_before = (1u << lane) - 1u;
    const bool with_vals = (flags & 4u) != 0, gen_index = (flags & 8u) != 0;

#pragma unroll
    for (int w = 0; w < KILN_WARPS; ++w) warp_counts[w][tid] = 0;
    {
        unsigned total;
        digit_base[tid] = kiln_block_scan(totals[tid], scratch, &total);
    }

    for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const kiln_u64 base = (kiln_u64)tile * KILN_TILE;
        const unsigned count = (unsigned)min((kiln_u64)KILN_TILE, n - base);
        unsigned bits[KILN_ITEMS], vals[KILN_ITEMS], rank[KILN_ITEMS];
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) {
            const unsigned local = (unsigned)i * KILN_THREADS + tid;
            const kiln_u64 idx = base + local;
            bits[i] = local < count ? keys_in[idx] : 0u;
            vals[i] = (with_vals && !gen_index && local < count) ? vals_in[idx] : (unsigned)idx;
        }
        tile_count[tid] = 0;
        global_start[tid] = digit_base[tid] + hist[(kiln_u64)tid * tiles + tile];
        __syncthreads();
        // Rank: in round i the block's threads hold keys base + i * 256 + tid,
        // consecutive, so a key's rank is the count of its digit in earlier
        // rounds (tile_count) plus earlier warps of this round (the scan
        // below) plus earlier lanes of its warp (match + popc).
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) {
            const unsigned local = (unsigned)i * KILN_THREADS + tid;
            if (flags & 1u) bits[i] = kiln_map(bits[i]);
            const unsigned d = local < count ? (bits[i] >> shift) & 255u : KILN_NO_DIGIT;
            const unsigned peers = __match_any_sync(0xffffffffu, d);
            const bool leader = lane == (unsigned)(__ffs(peers) - 1);
            if (d != KILN_NO_DIGIT && leader) warp_counts[warp][d] = __popc(peers);
            __syncthreads();
            {
                unsigned running = tile_count[tid];
#pragma unroll
                for (int w = 0; w < KILN_WARPS; ++w) {
                    const unsigned c = warp_counts[w][tid];
                    if (c) {
                        warp_counts[w][tid] = running;
                        running += c;
                    }
                }
                tile_count[tid] = running;
            }
            __syncthreads();
            if (d != KILN_NO_DIGIT) rank[i] = warp_counts[warp][d] + __popc(peers & lanes_before);
            __syncwarp();
            if (d != KILN_NO_DIGIT && leader) warp_counts[warp][d] = 0;
        }
        {
            unsigned total;
            local_start[tid] = kiln_block_scan(tile_count[tid], scratch, &total);
        }
        // Every thread reads every digit's start below.
        __syncthreads();
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) {
            const unsigned local = (unsigned)i * KILN_THREADS + tid;
            if (local < count) {
                const unsigned pos = local_start[(bits[i] >> shift) & 255u] + rank[i];
                s_keys[pos] = bits[i];
                s_vals[pos] = vals[i];
            }
        }
        __syncthreads();
        // Consecutive threads write consecutive positions of a digit's run.
#pragma unroll
        for (int i = 0; i < KILN_ITEMS; ++i) {
            const unsigned local = (unsigned)i * KILN_THREADS + tid;
            if (local < count) {
                const unsigned b = s_keys[local];
                const unsigned d = (b >> shift) & 255u;
                const kiln_u64 dst = (kiln_u64)global_start[d] + (local - local_start[d]);
                if (!(flags & 16u)) keys_out[dst] = (flags & 2u) ? kiln_unmap(b) : b;
                if (with_vals) vals_out[dst] = s_vals[local];
            }
        }
        // The next tile overwrites the shared arrays.
        __syncthreads();
    }
}
#else
#error "PHASE must be 0 (upsweep), 1 (scan) or 2 (downsweep)"
#endif
