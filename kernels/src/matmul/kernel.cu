// matmul: C (m x n) = A (m x k) . B (k x n) for each of `batch` products,
// all row-major: A's element (i, p) at a[i lda + p], or a[p lda + i] where
// A is stored transposed (flags bit 0; B likewise with bit 1), C's (i, j)
// at c[i ldc + j]; product z's matrices start sa z, sb z and sc z elements
// in (a stride 0 shares one matrix). blockIdx.z strides over the batch.
//
// T is A's and B's element type, ACC the accumulator (float for f32, f16
// and bf16 inputs; double for f64; unsigned for i32 and u32, so integer
// products wrap modulo 2^32) and OUT the type of C. Every kernel handles any
// m, n, k: edge tiles load zeros past the matrix and store only inside it.
//
// ALGO 0, naive: one thread per element of C, k multiply-adds from global
//   memory (the seed's first matmul; 2 loads per FMA, memory-bound).
// ALGO 1, tiled: 64 x 64 tiles of C per 256-thread block, 4 x 4 outputs per
//   thread, A and B staged through shared memory 16 columns of k at a time:
//   every element loaded from global memory serves 64 multiply-adds.
// ALGO 2, sgemm (f32): 128 x 128 tiles per 256-thread block, 8 x 8 outputs
//   per thread (64 FFMA per 4 shared loads of 16 bytes), k in steps of 8,
//   double-buffered shared memory (the next step's tile is loaded into
//   registers while this one is computed; one barrier per step), 16-byte
//   global loads and stores when VEC = 1 (neither operand transposed; k, n,
//   the leading dimensions and the batch strides multiples of 4; pointers
//   16-byte aligned). Bound: the FP32 pipes (~60 TFLOP/s on the H100);
//   no tensor cores, so the result has plain fp32 accuracy.

__device__ __forceinline__ float kiln_widen(float v) { return v; }
__device__ __forceinline__ double kiln_widen(double v) { return v; }
__device__ __forceinline__ float kiln_widen(kiln_half v) { return kiln_to_float(v); }
__device__ __forceinline__ float kiln_widen(kiln_bf16 v) { return kiln_to_float(v); }
__device__ __forceinline__ unsigned kiln_widen(int v) { return (unsigned)v; }
__device__ __forceinline__ unsigned kiln_widen(unsigned v) { return v; }

typedef unsigned long long kiln_u64;

// The parameters every kernel takes after its three matrices.
#define KILN_PARAMS                                                                                    \
    kiln_u64 m, kiln_u64 n, kiln_u64 k, kiln_u64 batch, kiln_u64 lda, kiln_u64 ldb, kiln_u64 ldc,      \
        kiln_u64 sa, kiln_u64 sb, kiln_u64 sc, unsigned flags
// The row and column strides of A and B, declared once per kernel.
#define KILN_STRIDES                                                                                   \
    const kiln_u64 a_rs = (flags & 1u) ? 1 : lda, a_cs = (flags & 1u) ? lda : 1;                       \
    const kiln_u64 b_rs = (flags & 2u) ? 1 : ldb, b_cs = (flags & 2u) ? ldb : 1;                       \
    (void)a_rs, (void)a_cs, (void)b_rs, (void)b_cs;
// Element (i, p) of A and (p, j) of B of the current product.
#define KILN_A(i, p) a[(kiln_u64)(i) * a_rs + (kiln_u64)(p) * a_cs]
#define KILN_B(p, j) b[(kiln_u64)(p) * b_rs + (kiln_u64)(j) * b_cs]
// Opens the loop over the batch (closed by a brace): a, b and c point at
// product z's matrices inside it.
#define KILN_BATCH                                                                                     \
    for (kiln_u64 z = blockIdx.z; z < batch; z += gridDim.z) {                                         \
        const auto* __restrict__ a = a0 + z * sa;                                                      \
        const auto* __restrict__ b = b0 + z * sb;                                                      \
        auto* __restrict__ c = c0 + z * sc;

#if ALGO == 0
extern "C" __global__ void KERNEL(const T* __restrict__ a0, const T* __restrict__ b0, OUT* __restrict__ c0,
                                  KILN_PARAMS) {
    KILN_STRIDES
    KILN_BATCH
        for (kiln_u64 row = (kiln_u64)blockIdx.y * blockDim.y + threadIdx.y; row < m;
             row += (kiln_u64)gridDim.y * blockDim.y) {
            for (kiln_u64 col = (kiln_u64)blockIdx.x * blockDim.x + threadIdx.x; col < n;
                 col += (kiln_u64)gridDim.x * blockDim.x) {
                ACC acc = (ACC)0;
                for (kiln_u64 p = 0; p < k; ++p) acc += kiln_widen(KILN_A(row, p)) * kiln_widen(KILN_B(p, col));
                c[row * ldc + col] = (OUT)acc;
            }
        }
    }
}

#elif ALGO == 1
#define KILN_BM 64
#define KILN_BN 64
#define KILN_BK 16

extern "C" __global__ void __launch_bounds__(256)
KERNEL(const T* __restrict__ a0, const T* __restrict__ b0, OUT* __restrict__ c0, KILN_PARAMS) {
    // As is stored k-major (As[p][row]) so the compute loop reads a column of
    // A; the extra column spreads the transposing stores over the banks.
    __shared__ ACC as[KILN_BK][KILN_BM + 1];
    __shared__ ACC bs[KILN_BK][KILN_BN];
    const unsigned tid = threadIdx.x;
    const unsigned tx = tid % 16, ty = tid / 16;
    const kiln_u64 tiles_m = (m + KILN_BM - 1) / KILN_BM, tiles_n = (n + KILN_BN - 1) / KILN_BN;
    KILN_STRIDES
    KILN_BATCH
        for (kiln_u64 bm = blockIdx.y; bm < tiles_m; bm += gridDim.y) {
            for (kiln_u64 bn = blockIdx.x; bn < tiles_n; bn += gridDim.x) {
                const kiln_u64 row0 = bm * KILN_BM, col0 = bn * KILN_BN;
                // Thread (tx, ty) owns rows ty + 16 i and columns tx + 16 j: the
                // 16 threads of a half-warp read 16 consecutive words of bs and
                // one (broadcast) word of as.
                ACC acc[4][4];
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) acc[i][j] = (ACC)0;
                for (kiln_u64 p0 = 0; p0 < k; p0 += KILN_BK) {
#pragma unroll
                    for (int l = 0; l < 4; ++l) {
                        const unsigned idx = tid + 256 * l;
                        const unsigned r = idx / KILN_BK, q = idx % KILN_BK;
                        const kiln_u64 gr = row0 + r, gq = p0 + q;
                        as[q][r] = (gr < m && gq < k) ? kiln_widen(KILN_A(gr, gq)) : (ACC)0;
                        const unsigned br = idx / KILN_BN, bc = idx % KILN_BN;
                        const kiln_u64 gbr = p0 + br, gbc = col0 + bc;
                        bs[br][bc] = (gbr < k && gbc < n) ? kiln_widen(KILN_B(gbr, gbc)) : (ACC)0;
                    }
                    __syncthreads();
#pragma unroll
                    for (int q = 0; q < KILN_BK; ++q) {
                        ACC ra[4], rb[4];
#pragma unroll
                        for (int i = 0; i < 4; ++i) ra[i] = as[q][ty + 16 * i];
#pragma unroll
                        for (int j = 0; j < 4; ++j) rb[j] = bs[q][tx + 16 * j];
#pragma unroll
                        for (int i = 0; i < 4; ++i)
#pragma unroll
                            for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
                    }
                    // The next step overwrites the tiles.
                    __syncthreads();
                }
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const kiln_u64 row = row0 + ty + 16 * i;
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const kiln_u64 col = col0 + tx + 16 * j;
                        if (row < m && col < n) c[row * ldc + col] = (OUT)acc[i][j];
                    }
                }
            }
        }
    }
}

#elif ALGO == 2
#define KILN_BM 128
#define KILN_BN 128
#define KILN_BK 8
// As rows are padded by 4 floats: the transposing stores of a warp then hit
// 32 different banks, and rows stay 16-byte aligned for the float4 reads.
#define KILN_AS_STRIDE (KILN_BM + 4)

extern "C" __global__ void __launch_bounds__(256, 2)
KERNEL(const float* __restrict__ a0, const float* __restrict__ b0, float* __restrict__ c0, KILN_PARAMS) {
    __shared__ __align__(16) float as[2][KILN_BK][KILN_AS_STRIDE];
    __shared__ __align__(16) float bs[2][KILN_BK][KILN_BN];
    const unsigned tid = threadIdx.x;
    const unsigned tx = tid % 16, ty = tid / 16;
    // Global -> shared mapping: A's 128 x 8 tile is one float4 per thread
    // (row tid / 2, columns 4 (tid % 2) + 0..3); B's 8 x 128 tile likewise
    // (row tid / 32, columns 4 (tid % 32) + 0..3).
    const unsigned a_row = tid / 2, a_col = (tid % 2) * 4;
    const unsigned b_row = tid / 32, b_col = (tid % 32) * 4;
    const kiln_u64 tiles_m = (m + KILN_BM - 1) / KILN_BM, tiles_n = (n + KILN_BN - 1) / KILN_BN;
    const kiln_u64 steps = (k + KILN_BK - 1) / KILN_BK;
    KILN_STRIDES
    KILN_BATCH
        for (kiln_u64 bm = blockIdx.y; bm < tiles_m; bm += gridDim.y) {
            for (kiln_u64 bn = blockIdx.x; bn < tiles_n; bn += gridDim.x) {
                const kiln_u64 row0 = bm * KILN_BM, col0 = bn * KILN_BN;
                const kiln_u64 ga_row = row0 + a_row, gb_col = col0 + b_col;
                float4 la, lb;
                // Load step `s` of A and B into registers (zeros outside the matrices).
#if VEC
#define KILN_LOAD(s)                                                                                   \
        do {                                                                                               \
            const kiln_u64 q = (kiln_u64)(s) * KILN_BK;                                                    \
            la = (ga_row < m && q + a_col < k) ? *(const float4*)(a + ga_row * lda + q + a_col)              \
                                               : make_float4(0.f, 0.f, 0.f, 0.f);                          \
            lb = (q + b_row < k && gb_col < n) ? *(const float4*)(b + (q + b_row) * ldb + gb_col)            \
                                               : make_float4(0.f, 0.f, 0.f, 0.f);                          \
        } while (0)
#else
#define KILN_LOAD(s)                                                                                   \
        do {                                                                                               \
            const kiln_u64 q = (kiln_u64)(s) * KILN_BK;                                                    \
            float va[4], vb[4];                                                                            \
            _Pragma("unroll") for (int e = 0; e < 4; ++e) {                                                \
                va[e] = (ga_row < m && q + a_col + e < k) ? KILN_A(ga_row, q + a_col + e) : 0.f;           \
                vb[e] = (q + b_row < k && gb_col + e < n) ? KILN_B(q + b_row, gb_col + e) : 0.f;           \
            }                                                                                              \
            la = make_float4(va[0], va[1], va[2], va[3]);                                                  \
            lb = make_float4(vb[0], vb[1], vb[2], vb[3]);                                                  \
        } while (0)
#endif
#define KILN_STORE(buf)                                                                                \
        do {                                                                                               \
            as[buf][a_col + 0][a_row] = la.x;                                                              \
            as[buf][a_col + 1][a_row] = la.y;                                                              \
            as[buf][a_col + 2][a_row] = la.z;                                                              \
            as[buf][a_col + 3][a_row] = la.w;                                                              \
            *(float4*)&bs[buf][b_row][b_col] = lb;                                                         \
        } while (0)

                float acc[8][8];
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

                if (steps > 0) {
                    KILN_LOAD(0);
                    KILN_STORE(0);
                }
                __syncthreads();
                for (kiln_u64 s = 0; s < steps; ++s) {
                    const int cur = (int)(s & 1);
                    if (s + 1 < steps) KILN_LOAD(s + 1);
#pragma unroll
                    for (int q = 0; q < KILN_BK; ++q) {
                        // Rows ty*4 + 0..3 and 64 + ty*4 + 0..3; columns likewise with tx.
                        const float4 a0 = *(const float4*)&as[cur][q][ty * 4];
                        const float4 a1 = *(const float4*)&as[cur][q][64 + ty * 4];
                        const float4 b0 = *(const float4*)&bs[cur][q][tx * 4];
                        const float4 b1 = *(const float4*)&bs[cur][q][64 + tx * 4];
                        const float ra[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
                        const float rb[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
                        for (int i = 0; i < 8; ++i)
#pragma unroll
                            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
                    }
                    // Buffer cur ^ 1 was last read in step s - 1, which every
                    // thread finished before the barrier that ended it.
                    if (s + 1 < steps) KILN_STORE(cur ^ 1);
                    __syncthreads();
                }
#undef KILN_LOAD
#undef KILN_STORE

#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const kiln_u64 row = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
                    if (row >= m) continue;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const kiln_u64 col = col0 + h * 64 + tx * 4;
                        float* dst = c + row * ldc + col;
#if VEC
                        if (col < n)
                            *(float4*)dst = make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
#else
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            if (col + e < n) dst[e] = acc[i][4 * h + e];
#endif
                    }
                }
            }
        }
    }
}
#else
#error "ALGO must be 0 (naive), 1 (tiled) or 2 (sgemm)"
#endif
