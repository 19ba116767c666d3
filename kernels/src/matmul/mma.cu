// matmul on the tensor cores (ALGO 3): C (m x n, f32 or f64) = A (m x k) .
// B (k x n) for each of `batch` products, with the parameters of kernel.cu's
// kernels (A's element (i, p) at a[i a_rs + p a_cs], the strides from the
// flags; B likewise; C's (i, j) at c[i ldc + j]; product z's matrices sa z,
// sb z, sc z elements in). blockIdx.y strides over the batch, blockIdx.x is
// the output tile. The text needs no header: 16-bit inputs are read as
// `unsigned short` bits, and every tensor-core, ldmatrix and cp.async
// instruction is inline PTX (sm_80 and later: MatrixUnits in kiln-core).
// benches/lab/mmalab.cu includes this file (without KERNEL) and times the
// same device functions against cuBLAS.
//
// Every kernel handles any m, n, k (k = 0 writes zeros): loads past the
// matrix edges fill zeros, stores outside C are skipped. VEC = 1 takes
// 16-byte cp.async loads, which need A and B not transposed, their leading
// dimensions and batch strides multiples of 16 bytes, ldc and sc even, and
// 16-byte aligned pointers; VEC = 0 loads element by element, any layout.
// 256 threads, dynamic shared memory KILN_*_SMEM bytes (the host computes
// the same figure from the same tile defines). Tiles go to blocks in groups
// of 8 tile rows (the blocks that run together share rows of A and columns
// of B in L2).
//
// MMA 0, 1 (f16, bf16): mma.m16n8k16 with f32 accumulators; block tile
//   128 x 256 x KILN_HM_BK, 8 warps of 64 x 64 (2 x 4); A fragments by
//   ldmatrix.x4, B (k-major in shared memory) by ldmatrix.x4.trans;
//   KILN_HM_STAGES-deep cp.async ring.
// MMA 2 (tf32, for f32 inputs under Precision::Tf32 or Bf16): f32 inputs
//   rounded by cvt.rna.tf32.f32 as the fragments are read, mma.m16n8k8;
//   block tile 128 x 256 x KILN_TM_BK, warps as above; A by ldmatrix.x4 (an
//   8x8 b16 matrix is 8 rows of 4 f32), B by 32-bit shared loads.
// MMA 3 (f64): the FP64 tensor cores (exact fp64 FMA), mma.m16n8k8 on
//   sm_90 (one instruction where m8n8k4 takes four, at twice its rate on
//   the H100 and H200) and mma.m8n8k4 before it; block tile 128 x 128 x
//   KILN_DM_BK, 8 warps of 32 x 64 (4 x 2). Within each k-step of 8 the
//   two m8n8k4's take k = 2t and 2t + 1 for lane quad t (m16n8k8's k slots
//   t and t + 4), so a lane's A operands for both are one 16-byte load; within a warp's 64
//   columns n8-tile j's column g is column 8 g + j, so a lane's B operands
//   of all 8 tiles are 4 16-byte loads and its 16 outputs of a row are 16
//   adjacent columns.
//
// Shared memory: rows padded so the 8 rows of an ldmatrix (or a quarter
// warp's 16-byte loads) fall in different banks; the f64 B tile, whose rows
// are read in pairs, is swizzled instead (16-byte chunk c of row r stored at
// c ^ ((r >> 1) & 3)).
//
// Bound: mma.sync issues from one block of 8 warps per SM (about 200
// registers a thread); on the H200 the 16-bit and TF32 kernels keep the
// tensor pipe 47% busy (ncu), about 0.44 of cuBLAS, whose Hopper kernels use
// wgmma and keep it 95% busy; the f64 kernel's m16n8k8 keeps the DMMA pipe
// 61% busy, about 0.72 of cuBLAS's DGEMM (m8n8k4: 79% busy at half the
// rate, 0.45). benches/lab/README.md and benches/results have the numbers.

typedef unsigned long long kiln_u64;

// Tile depth and pipeline depth of each kernel: the fastest the lab measured
// on the H200 within the shared memory of the A100 and H100 (plan.rs sizes
// the launch from the same figures; the lab's variants set others with -D;
// BK must be a multiple of 16 for f16/bf16 and of 8 otherwise).
#ifndef KILN_HM_BK
#define KILN_HM_BK 64
#endif
#ifndef KILN_TM_BK
#define KILN_TM_BK 32
#endif
#ifndef KILN_DM_BK
#define KILN_DM_BK 16
#endif
#ifndef KILN_HM_STAGES
#define KILN_HM_STAGES 3
#endif
#ifndef KILN_TM_STAGES
#define KILN_TM_STAGES 3
#endif
#ifndef KILN_DM_STAGES
#define KILN_DM_STAGES 3
#endif

// ---------------------------------------------------------------- helpers
__device__ __forceinline__ unsigned kiln_smem_u32(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}
// 16-byte global -> shared copy of which the first `bytes` are read, the
// rest zero-filled (bytes = 0 reads nothing).
__device__ __forceinline__ void kiln_cp16(unsigned dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void kiln_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void kiln_cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void kiln_ldsm4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void kiln_ldsm4t(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}
__device__ __forceinline__ unsigned kiln_tf32(float f) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(f));
    return r;
}
template <bool IS_BF16>
__device__ __forceinline__ void kiln_mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    if (IS_BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void kiln_mma1688_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void kiln_mma884_f64(double (&d)[2], double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}
#if __CUDA_ARCH__ >= 900
// sm_90's m16n8k8 f64: d0 the tile's rows g (columns 2t, 2t + 1), d1 its rows g + 8; A (g, t), (g + 8, t),
// (g, t + 4), (g + 8, t + 4); B (t, g), (t + 4, g).
__device__ __forceinline__ void kiln_mma1688_f64(double (&d0)[2], double (&d1)[2], double a0, double a1, double a2,
                                                 double a3, double b0, double b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+d"(d0[0]), "+d"(d0[1]), "+d"(d1[0]), "+d"(d1[1])
                 : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
}
#endif
// Block number -> (tile row, tile column), in groups of 8 tile rows.
__device__ __forceinline__ void kiln_tile_of(unsigned bid, unsigned tiles_m, unsigned tiles_n, unsigned& tm,
                                             unsigned& tn) {
    const unsigned per_group = 8u * tiles_n;
    const unsigned group = bid / per_group, first = group * 8u;
    const unsigned rows = tiles_m - first < 8u ? tiles_m - first : 8u;
    const unsigned r = bid - group * per_group;
    tm = first + r % rows;
    tn = r / rows;
}
__device__ __forceinline__ unsigned kiln_min_u64(kiln_u64 x, unsigned y) { return x < y ? (unsigned)x : y; }

extern __shared__ __align__(16) unsigned char kiln_mma_smem[];

// ------------------------------------------------------------ f16 / bf16
#define KILN_HM_BM 128
#define KILN_HM_BN 256
#define KILN_HM_AS (KILN_HM_BK + 8)  // rows of 16 (2 BK / 16 + 1) bytes: the 8 rows of an ldmatrix hit 8 distinct 16-byte bank groups
#define KILN_HM_BS (KILN_HM_BN + 8)  // 528-byte rows, likewise
#define KILN_HM_STAGE (KILN_HM_BM * KILN_HM_AS + KILN_HM_BK * KILN_HM_BS)  // elements
#define KILN_HM_SMEM (KILN_HM_STAGES * KILN_HM_STAGE * 2)

template <bool IS_BF16, bool V16>
__device__ __forceinline__ void kiln_hmma(const unsigned short* __restrict__ a, const unsigned short* __restrict__ b,
                                          float* __restrict__ c, kiln_u64 m, kiln_u64 n, kiln_u64 k, kiln_u64 a_rs,
                                          kiln_u64 a_cs, kiln_u64 b_rs, kiln_u64 b_cs, kiln_u64 ldc) {
    unsigned short* sm = (unsigned short*)kiln_mma_smem;
    const unsigned sbase = kiln_smem_u32(sm);
    const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned wm = warp >> 2, wn = warp & 3;
    const unsigned tiles_m = (unsigned)((m + KILN_HM_BM - 1) / KILN_HM_BM);
    const unsigned tiles_n = (unsigned)((n + KILN_HM_BN - 1) / KILN_HM_BN);
    unsigned tm, tn;
    kiln_tile_of(blockIdx.x, tiles_m, tiles_n, tm, tn);
    const kiln_u64 row0 = (kiln_u64)tm * KILN_HM_BM, col0 = (kiln_u64)tn * KILN_HM_BN;
    const unsigned ktiles = (unsigned)((k + KILN_HM_BK - 1) / KILN_HM_BK);

    // Stage st of tile kt: A 128 x BK (BK / 8 16-byte chunks a row), B BK x 256 (32 a row).
    auto load = [&](unsigned kt, unsigned st) {
        const kiln_u64 k0 = (kiln_u64)kt * KILN_HM_BK;
        if (V16) {
            const unsigned sa = sbase + st * KILN_HM_STAGE * 2, sb = sa + KILN_HM_BM * KILN_HM_AS * 2;
#pragma unroll
            for (int i = 0; i < KILN_HM_BM * KILN_HM_BK / 8 / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / (KILN_HM_BK / 8), ch = id % (KILN_HM_BK / 8);
                const kiln_u64 gr = row0 + r, gc = k0 + ch * 8;
                const unsigned bytes = (gr < m && gc < k) ? kiln_min_u64(k - gc, 8) * 2 : 0;
                kiln_cp16(sa + (r * KILN_HM_AS + ch * 8) * 2, bytes ? a + gr * a_rs + gc : a, bytes);
            }
#pragma unroll
            for (int i = 0; i < KILN_HM_BK * KILN_HM_BN / 8 / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / (KILN_HM_BN / 8), ch = id % (KILN_HM_BN / 8);
                const kiln_u64 gr = k0 + r, gc = col0 + ch * 8;
                const unsigned bytes = (gr < k && gc < n) ? kiln_min_u64(n - gc, 8) * 2 : 0;
                kiln_cp16(sb + (r * KILN_HM_BS + ch * 8) * 2, bytes ? b + gr * b_rs + gc : b, bytes);
            }
        } else {
            unsigned short* as = sm + st * KILN_HM_STAGE;
            unsigned short* bs = as + KILN_HM_BM * KILN_HM_AS;
#pragma unroll 4
            for (int i = 0; i < KILN_HM_BM * KILN_HM_BK / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / KILN_HM_BK, q = id % KILN_HM_BK;
                const kiln_u64 gr = row0 + r, gc = k0 + q;
                as[r * KILN_HM_AS + q] = (gr < m && gc < k) ? a[gr * a_rs + gc * a_cs] : (unsigned short)0;
            }
#pragma unroll 4
            for (int i = 0; i < KILN_HM_BK * KILN_HM_BN / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / KILN_HM_BN, q = id % KILN_HM_BN;
                const kiln_u64 gr = k0 + r, gc = col0 + q;
                bs[r * KILN_HM_BS + q] = (gr < k && gc < n) ? b[gr * b_rs + gc * b_cs] : (unsigned short)0;
            }
        }
    };

    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    // ldmatrix addresses: lane l gives row l & 15, column 8 (l >> 4) of a 16 x 16 block.
    const unsigned a_off = ((wm * 64 + (lane & 15)) * KILN_HM_AS + (lane >> 4) * 8) * 2;
    const unsigned b_off = KILN_HM_BM * KILN_HM_AS * 2 + ((lane & 15) * KILN_HM_BS + wn * 64 + (lane >> 4) * 8) * 2;

#pragma unroll
    for (int s = 0; s < KILN_HM_STAGES - 1; ++s) {
        if ((unsigned)s < ktiles) load(s, s);
        kiln_cp_commit();
    }
    unsigned st = 0;
    for (unsigned kt = 0; kt < ktiles; ++kt) {
        kiln_cp_wait<KILN_HM_STAGES - 2>();
        // Tile kt is in; every warp is done with stage (kt - 1) % STAGES, which the next load refills.
        __syncthreads();
        {
            const unsigned nk = kt + KILN_HM_STAGES - 1;
            if (nk < ktiles) load(nk, st == 0 ? KILN_HM_STAGES - 1 : st - 1);
            kiln_cp_commit();
        }
        const unsigned sa = sbase + st * KILN_HM_STAGE * 2;
#pragma unroll
        for (int kk = 0; kk < KILN_HM_BK / 16; ++kk) {
            unsigned af[4][4], bf[8][2];
#pragma unroll
            for (int i = 0; i < 4; ++i) kiln_ldsm4(af[i], sa + a_off + (i * 16 * KILN_HM_AS + kk * 16) * 2);
#pragma unroll
            for (int j = 0; j < 4; ++j)
                kiln_ldsm4t(bf[2 * j][0], bf[2 * j][1], bf[2 * j + 1][0], bf[2 * j + 1][1],
                            sa + b_off + (kk * 16 * KILN_HM_BS + j * 16) * 2);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) kiln_mma16816<IS_BF16>(acc[i][j], af[i], bf[j][0], bf[j][1]);
        }
        st = st + 1 == KILN_HM_STAGES ? 0 : st + 1;
    }

    // Accumulator (i, j): rows g and g + 8, columns 2t and 2t + 1 of its 16 x 8 block.
    const unsigned g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const kiln_u64 row = row0 + wm * 64 + i * 16 + h * 8 + g;
            if (row >= m) continue;
            float* crow = c + row * ldc;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const kiln_u64 col = col0 + wn * 64 + j * 8 + 2 * t;
                if (V16 && col + 1 < n) {
                    *(float2*)(crow + col) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (col < n) crow[col] = acc[i][j][2 * h];
                    if (col + 1 < n) crow[col + 1] = acc[i][j][2 * h + 1];
                }
            }
        }
    }
}


// ------------------------------------------------------------------ tf32
#define KILN_TM_BM 128
#define KILN_TM_BN 256
#define KILN_TM_AS (KILN_TM_BK + 4)  // an odd number of 16-byte units a row, for ldmatrix
#define KILN_TM_BS (KILN_TM_BN + 8)  // = 8 mod 32 words: lanes (t, g) read word 8 t + g
#define KILN_TM_STAGE (KILN_TM_BM * KILN_TM_AS + KILN_TM_BK * KILN_TM_BS)
#define KILN_TM_SMEM (KILN_TM_STAGES * KILN_TM_STAGE * 4)

template <bool V16>
__device__ __forceinline__ void kiln_tmma(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, kiln_u64 m, kiln_u64 n, kiln_u64 k, kiln_u64 a_rs,
                                          kiln_u64 a_cs, kiln_u64 b_rs, kiln_u64 b_cs, kiln_u64 ldc) {
    float* sm = (float*)kiln_mma_smem;
    const unsigned sbase = kiln_smem_u32(sm);
    const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned wm = warp >> 2, wn = warp & 3;
    const unsigned g = lane >> 2, t = lane & 3;
    const unsigned tiles_m = (unsigned)((m + KILN_TM_BM - 1) / KILN_TM_BM);
    const unsigned tiles_n = (unsigned)((n + KILN_TM_BN - 1) / KILN_TM_BN);
    unsigned tm, tn;
    kiln_tile_of(blockIdx.x, tiles_m, tiles_n, tm, tn);
    const kiln_u64 row0 = (kiln_u64)tm * KILN_TM_BM, col0 = (kiln_u64)tn * KILN_TM_BN;
    const unsigned ktiles = (unsigned)((k + KILN_TM_BK - 1) / KILN_TM_BK);

    // A 128 x BK (BK / 4 chunks a row), B BK x 256 (64 a row).
    auto load = [&](unsigned kt, unsigned st) {
        const kiln_u64 k0 = (kiln_u64)kt * KILN_TM_BK;
        if (V16) {
            const unsigned sa = sbase + st * KILN_TM_STAGE * 4, sb = sa + KILN_TM_BM * KILN_TM_AS * 4;
#pragma unroll
            for (int i = 0; i < KILN_TM_BM * KILN_TM_BK / 4 / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / (KILN_TM_BK / 4), ch = id % (KILN_TM_BK / 4);
                const kiln_u64 gr = row0 + r, gc = k0 + ch * 4;
                const unsigned bytes = (gr < m && gc < k) ? kiln_min_u64(k - gc, 4) * 4 : 0;
                kiln_cp16(sa + (r * KILN_TM_AS + ch * 4) * 4, bytes ? a + gr * a_rs + gc : a, bytes);
            }
#pragma unroll
            for (int i = 0; i < KILN_TM_BK * KILN_TM_BN / 4 / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / (KILN_TM_BN / 4), ch = id % (KILN_TM_BN / 4);
                const kiln_u64 gr = k0 + r, gc = col0 + ch * 4;
                const unsigned bytes = (gr < k && gc < n) ? kiln_min_u64(n - gc, 4) * 4 : 0;
                kiln_cp16(sb + (r * KILN_TM_BS + ch * 4) * 4, bytes ? b + gr * b_rs + gc : b, bytes);
            }
        } else {
            float* as = sm + st * KILN_TM_STAGE;
            float* bs = as + KILN_TM_BM * KILN_TM_AS;
#pragma unroll 4
            for (int i = 0; i < KILN_TM_BM * KILN_TM_BK / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / KILN_TM_BK, q = id % KILN_TM_BK;
                const kiln_u64 gr = row0 + r, gc = k0 + q;
                as[r * KILN_TM_AS + q] = (gr < m && gc < k) ? a[gr * a_rs + gc * a_cs] : 0.f;
            }
#pragma unroll 4
            for (int i = 0; i < KILN_TM_BK * KILN_TM_BN / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / KILN_TM_BN, q = id % KILN_TM_BN;
                const kiln_u64 gr = k0 + r, gc = col0 + q;
                bs[r * KILN_TM_BS + q] = (gr < k && gc < n) ? b[gr * b_rs + gc * b_cs] : 0.f;
            }
        }
    };

    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    // A by ldmatrix: lane l gives row l & 15, f32 column 4 (l >> 4) of a 16 x 8 block, and
    // receives (row g, column t) of each 8 x 4 quarter: a0..a3 of the m16n8k8 fragment.
    const unsigned a_off = ((wm * 64 + (lane & 15)) * KILN_TM_AS + (lane >> 4) * 4) * 4;
    // B: b0 = B[t][g], b1 = B[t + 4][g] of each n8 tile.
    const unsigned b_off = KILN_TM_BM * KILN_TM_AS + t * KILN_TM_BS + wn * 64 + g;  // elements

#pragma unroll
    for (int s = 0; s < KILN_TM_STAGES - 1; ++s) {
        if ((unsigned)s < ktiles) load(s, s);
        kiln_cp_commit();
    }
    unsigned st = 0;
    for (unsigned kt = 0; kt < ktiles; ++kt) {
        kiln_cp_wait<KILN_TM_STAGES - 2>();
        __syncthreads();
        {
            const unsigned nk = kt + KILN_TM_STAGES - 1;
            if (nk < ktiles) load(nk, st == 0 ? KILN_TM_STAGES - 1 : st - 1);
            kiln_cp_commit();
        }
        const unsigned sa = sbase + st * KILN_TM_STAGE * 4;
        const float* bs = sm + st * KILN_TM_STAGE + b_off;
#pragma unroll
        for (int kk = 0; kk < KILN_TM_BK / 8; ++kk) {
            unsigned af[4][4], bf[8][2];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                kiln_ldsm4(af[i], sa + a_off + (i * 16 * KILN_TM_AS + kk * 8) * 4);
#pragma unroll
                for (int e = 0; e < 4; ++e) af[i][e] = kiln_tf32(__uint_as_float(af[i][e]));
            }
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                bf[j][0] = kiln_tf32(bs[(kk * 8) * KILN_TM_BS + j * 8]);
                bf[j][1] = kiln_tf32(bs[(kk * 8 + 4) * KILN_TM_BS + j * 8]);
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) kiln_mma1688_tf32(acc[i][j], af[i], bf[j][0], bf[j][1]);
        }
        st = st + 1 == KILN_TM_STAGES ? 0 : st + 1;
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const kiln_u64 row = row0 + wm * 64 + i * 16 + h * 8 + g;
            if (row >= m) continue;
            float* crow = c + row * ldc;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const kiln_u64 col = col0 + wn * 64 + j * 8 + 2 * t;
                if (V16 && col + 1 < n) {
                    *(float2*)(crow + col) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (col < n) crow[col] = acc[i][j][2 * h];
                    if (col + 1 < n) crow[col + 1] = acc[i][j][2 * h + 1];
                }
            }
        }
    }
}


// ------------------------------------------------------------------- f64
#define KILN_DM_BM 128
#define KILN_DM_BN 128
#define KILN_DM_AS (KILN_DM_BK + 8)  // = 4 mod 8 16-byte units a row: a quarter warp's loads of rows g, g + 1 differ by 4 bank groups
#define KILN_DM_BS KILN_DM_BN        // swizzled, not padded
#define KILN_DM_STAGE (KILN_DM_BM * KILN_DM_AS + KILN_DM_BK * KILN_DM_BS)
#define KILN_DM_SMEM (KILN_DM_STAGES * KILN_DM_STAGE * 8)

template <bool V16>
__device__ __forceinline__ void kiln_dmma(const double* __restrict__ a, const double* __restrict__ b,
                                          double* __restrict__ c, kiln_u64 m, kiln_u64 n, kiln_u64 k, kiln_u64 a_rs,
                                          kiln_u64 a_cs, kiln_u64 b_rs, kiln_u64 b_cs, kiln_u64 ldc) {
    double* sm = (double*)kiln_mma_smem;
    const unsigned sbase = kiln_smem_u32(sm);
    const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned wm = warp >> 1, wn = warp & 1;
    const unsigned g = lane >> 2, t = lane & 3;
    const unsigned tiles_m = (unsigned)((m + KILN_DM_BM - 1) / KILN_DM_BM);
    const unsigned tiles_n = (unsigned)((n + KILN_DM_BN - 1) / KILN_DM_BN);
    unsigned tm, tn;
    kiln_tile_of(blockIdx.x, tiles_m, tiles_n, tm, tn);
    const kiln_u64 row0 = (kiln_u64)tm * KILN_DM_BM, col0 = (kiln_u64)tn * KILN_DM_BN;
    const unsigned ktiles = (unsigned)((k + KILN_DM_BK - 1) / KILN_DM_BK);

    // A 128 x BK (BK / 2 chunks a row), B BK x 128 (64 chunks a row, chunk c of row r at c ^ ((r >> 1) & 3)).
    auto load = [&](unsigned kt, unsigned st) {
        const kiln_u64 k0 = (kiln_u64)kt * KILN_DM_BK;
        if (V16) {
            const unsigned sa = sbase + st * KILN_DM_STAGE * 8, sb = sa + KILN_DM_BM * KILN_DM_AS * 8;
#pragma unroll
            for (int i = 0; i < KILN_DM_BM * KILN_DM_BK / 2 / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / (KILN_DM_BK / 2), ch = id % (KILN_DM_BK / 2);
                const kiln_u64 gr = row0 + r, gc = k0 + ch * 2;
                const unsigned bytes = (gr < m && gc < k) ? kiln_min_u64(k - gc, 2) * 8 : 0;
                kiln_cp16(sa + (r * KILN_DM_AS + ch * 2) * 8, bytes ? a + gr * a_rs + gc : a, bytes);
            }
#pragma unroll
            for (int i = 0; i < KILN_DM_BK * KILN_DM_BN / 2 / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / (KILN_DM_BN / 2), ch = id % (KILN_DM_BN / 2);
                const kiln_u64 gr = k0 + r, gc = col0 + ch * 2;
                const unsigned bytes = (gr < k && gc < n) ? kiln_min_u64(n - gc, 2) * 8 : 0;
                kiln_cp16(sb + (r * KILN_DM_BS + (ch ^ ((r >> 1) & 3)) * 2) * 8, bytes ? b + gr * b_rs + gc : b,
                          bytes);
            }
        } else {
            double* as = sm + st * KILN_DM_STAGE;
            double* bs = as + KILN_DM_BM * KILN_DM_AS;
#pragma unroll 4
            for (int i = 0; i < KILN_DM_BM * KILN_DM_BK / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / KILN_DM_BK, q = id % KILN_DM_BK;
                const kiln_u64 gr = row0 + r, gc = k0 + q;
                as[r * KILN_DM_AS + q] = (gr < m && gc < k) ? a[gr * a_rs + gc * a_cs] : 0.0;
            }
#pragma unroll 4
            for (int i = 0; i < KILN_DM_BK * KILN_DM_BN / 256; ++i) {
                const unsigned id = tid + 256 * i, r = id / KILN_DM_BN, q = id % KILN_DM_BN;
                const kiln_u64 gr = k0 + r, gc = col0 + q;
                bs[r * KILN_DM_BS + (((q >> 1) ^ ((r >> 1) & 3)) << 1) + (q & 1)] =
                    (gr < k && gc < n) ? b[gr * b_rs + gc * b_cs] : 0.0;
            }
        }
    };

    double acc[4][8][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j][0] = acc[i][j][1] = 0.0;

    // A: lane (g, t) reads A[row g][2t, 2t + 1] of each k-step of 8.
    const unsigned a_off = (wm * 32 + g) * KILN_DM_AS + 2 * t;  // elements
    // B: rows 2t and 2t + 1 of each k-step; logical chunks wn * 32 + 4 g + q, stored at ... ^ t
    // (row 8 kk + 2t + h has (row >> 1) & 3 = t).
    const unsigned b_off = KILN_DM_BM * KILN_DM_AS + (2 * t) * KILN_DM_BS + (wn * 32 + 4 * g) * 2;

#pragma unroll
    for (int s = 0; s < KILN_DM_STAGES - 1; ++s) {
        if ((unsigned)s < ktiles) load(s, s);
        kiln_cp_commit();
    }
    unsigned st = 0;
    for (unsigned kt = 0; kt < ktiles; ++kt) {
        kiln_cp_wait<KILN_DM_STAGES - 2>();
        __syncthreads();
        {
            const unsigned nk = kt + KILN_DM_STAGES - 1;
            if (nk < ktiles) load(nk, st == 0 ? KILN_DM_STAGES - 1 : st - 1);
            kiln_cp_commit();
        }
        const double* as = sm + st * KILN_DM_STAGE + a_off;
        const double* bs = sm + st * KILN_DM_STAGE + b_off;
#pragma unroll
        for (int kk = 0; kk < KILN_DM_BK / 8; ++kk) {
            double2 av[4], bv[2][4];
#pragma unroll
            for (int i = 0; i < 4; ++i) av[i] = *(const double2*)(as + i * 8 * KILN_DM_AS + kk * 8);
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    bv[h][q] = *(const double2*)(bs + (kk * 8 + h) * KILN_DM_BS + ((q ^ t) << 1));
#if __CUDA_ARCH__ >= 900
            // One m16n8k8 a 16 x 8 tile (m8 tiles i, i + 1): its k slots t and t + 4 are this lane's
            // k = 2t and 2t + 1, which av and bv hold as they do for the m8n8k4 pair below.
#pragma unroll
            for (int i = 0; i < 4; i += 2)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    kiln_mma1688_f64(acc[i][j], acc[i + 1][j], av[i].x, av[i + 1].x, av[i].y, av[i + 1].y,
                                     (j & 1) ? bv[0][j >> 1].y : bv[0][j >> 1].x,
                                     (j & 1) ? bv[1][j >> 1].y : bv[1][j >> 1].x);
#else
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j)
                        kiln_mma884_f64(acc[i][j], h ? av[i].y : av[i].x,
                                        (j & 1) ? bv[h][j >> 1].y : bv[h][j >> 1].x);
#endif
        }
        st = st + 1 == KILN_DM_STAGES ? 0 : st + 1;
    }

    // Lane (g, t) holds row g of each m8 tile i at warp columns 16 t + e, e < 16:
    // e < 8 is acc[i][e][0] (tile e, column 2t), e >= 8 acc[i][e - 8][1] (column 2t + 1).
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const kiln_u64 row = row0 + wm * 32 + i * 8 + g;
        if (row >= m) continue;
        double* crow = c + row * ldc;
        const kiln_u64 cb = col0 + wn * 64 + 16 * t;
#pragma unroll
        for (int p = 0; p < 8; ++p) {
            const kiln_u64 col = cb + 2 * p;
            const double v0 = acc[i][(2 * p) & 7][p >> 2], v1 = acc[i][(2 * p + 1) & 7][p >> 2];
            if (V16 && col + 1 < n) {
                *(double2*)(crow + col) = make_double2(v0, v1);
            } else {
                if (col < n) crow[col] = v0;
                if (col + 1 < n) crow[col + 1] = v1;
            }
        }
    }
}


#ifdef KERNEL
extern "C" __global__ void __launch_bounds__(256, 1)
KERNEL(const T* __restrict__ a0, const T* __restrict__ b0, OUT* __restrict__ c0, kiln_u64 m, kiln_u64 n, kiln_u64 k,
       kiln_u64 batch, kiln_u64 lda, kiln_u64 ldb, kiln_u64 ldc, kiln_u64 sa, kiln_u64 sb, kiln_u64 sc,
       unsigned flags) {
    const kiln_u64 a_rs = (flags & 1u) ? 1 : lda, a_cs = (flags & 1u) ? lda : 1;
    const kiln_u64 b_rs = (flags & 2u) ? 1 : ldb, b_cs = (flags & 2u) ? ldb : 1;
    for (kiln_u64 z = blockIdx.y; z < batch; z += gridDim.y) {
        const T* a = a0 + z * sa;
        const T* b = b0 + z * sb;
        OUT* c = c0 + z * sc;
#if MMA == 0 || MMA == 1
        kiln_hmma<MMA == 1, VEC == 1>((const unsigned short*)a, (const unsigned short*)b, c, m, n, k, a_rs, a_cs,
                                      b_rs, b_cs, ldc);
#elif MMA == 2
        kiln_tmma<VEC == 1>(a, b, c, m, n, k, a_rs, a_cs, b_rs, b_cs, ldc);
#else
        kiln_dmma<VEC == 1>(a, b, c, m, n, k, a_rs, a_cs, b_rs, b_cs, ldc);
#endif
        // The next product's first loads refill the stages this one read last.
        kiln_cp_wait<0>();
        __syncthreads();
    }
}
#endif
