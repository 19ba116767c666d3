// image: RGB/RGBA to gray, and small 2D convolutions (box and Gaussian
// blurs are convolutions with fixed weights) with border modes.
//
// T is the pixel type of a convolution (unsigned char or float). Sums are
// accumulated in float in raster order of the filter and divided once by
// the filter's divisor; u8 results are rounded as floor(v + 0.5) and
// clamped to [0, 255], exactly as the CPU reference does, so filters with
// integer weights (every built-in blur) give identical bytes everywhere.

typedef unsigned long long kiln_u64;
typedef long long kiln_i64;

#if GRAY
// gray = (299 r + 587 g + 114 b) / 1000, truncated: the seed's weights in
// exact integer arithmetic. CHANNELS is 3 (RGB) or 4 (RGBA, alpha ignored).
//
// Memory-bound at CHANNELS + 1 bytes per pixel. Where both pointers are
// 16-byte aligned, a thread converts 16 pixels: CHANNELS 16-byte loads (48
// or 64 bytes in flight per thread) and one 16-byte store. Where they are
// only 4-byte aligned, 4 pixels with 4-byte accesses; otherwise, and for
// the last few pixels, byte by byte. The host sizes the grid for the widest
// path the pointers allow; every loop is grid-stride.
__device__ __forceinline__ unsigned kiln_gray(unsigned r, unsigned g, unsigned b) {
    return (299u * r + 587u * g + 114u * b) / 1000u;
}
__device__ __forceinline__ unsigned kiln_byte(unsigned w, int i) { return (w >> (8 * i)) & 0xffu; }

// The gray bytes of PX pixels held in w[PX * CHANNELS / 4] (byte j of the
// group is byte j % 4 of word j / 4), packed into PX / 4 words.
template <int PX>
__device__ __forceinline__ void kiln_gray_words(const unsigned* w, unsigned* out) {
#pragma unroll
    for (int q = 0; q < PX / 4; ++q) out[q] = 0;
#pragma unroll
    for (int p = 0; p < PX; ++p) {
        const int j = p * CHANNELS;
        const unsigned r = kiln_byte(w[j / 4], j % 4);
        const unsigned g = kiln_byte(w[(j + 1) / 4], (j + 1) % 4);
        const unsigned b = kiln_byte(w[(j + 2) / 4], (j + 2) % 4);
        out[p / 4] |= kiln_gray(r, g, b) << (8 * (p % 4));
    }
}

extern "C" __global__ void KERNEL(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                  kiln_u64 pixels) {
    const kiln_u64 start = (kiln_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const kiln_u64 stride = (kiln_u64)gridDim.x * blockDim.x;
    const kiln_u64 in_addr = (kiln_u64)in, out_addr = (kiln_u64)out;
    kiln_u64 done = 0;
    if (((in_addr | out_addr) & 15) == 0) {
        const kiln_u64 groups = pixels / 16;
        for (kiln_u64 g = start; g < groups; g += stride) {
            unsigned w[4 * CHANNELS], o[4];
            const uint4* src = (const uint4*)in + CHANNELS * g;
#pragma unroll
            for (int q = 0; q < CHANNELS; ++q) {
                const uint4 v = src[q];
                w[4 * q] = v.x;
                w[4 * q + 1] = v.y;
                w[4 * q + 2] = v.z;
                w[4 * q + 3] = v.w;
            }
            kiln_gray_words<16>(w, o);
            ((uint4*)out)[g] = make_uint4(o[0], o[1], o[2], o[3]);
        }
        done = groups * 16;
    } else if (((in_addr | out_addr) & 3) == 0) {
        const kiln_u64 groups = pixels / 4;
        for (kiln_u64 g = start; g < groups; g += stride) {
            unsigned w[CHANNELS], o[1];
            const unsigned* src = (const unsigned*)in + CHANNELS * g;
#pragma unroll
            for (int q = 0; q < CHANNELS; ++q) w[q] = src[q];
            kiln_gray_words<4>(w, o);
            ((unsigned*)out)[g] = o[0];
        }
        done = groups * 4;
    }
    for (kiln_u64 i = done + start; i < pixels; i += stride) {
        const unsigned char* p = in + i * CHANNELS;
        out[i] = (unsigned char)kiln_gray(p[0], p[1], p[2]);
    }
}

#else
// Convolution with an FW x FH filter (odd sides), weights row-major in
// `weights`, result = sum(w * p) / divisor. BORDER: 0 clamp (repeat the
// edge pixel), 1 zero (pixels outside are 0), 2 reflect (half-sample
// symmetric: ... c b a | a b c ... | c b a ..., with period 2 n, so any
// filter works on any image, even one narrower than the filter).
//
// One 32 x 8 block computes a 128 x 32 output tile; thread (tx, ty) the 16
// pixels (tx + 32 e, ty + 8 r), so a warp's shared-memory reads are 32
// consecutive words (no bank conflicts) and its global stores coalesced.
// The input tile and its halo (FW - 1 columns, FH - 1 rows) are staged once
// in shared memory as float, so each input pixel is read from global memory
// about once (the halo of neighbouring tiles comes from L2): for f32 images
// of a width divisible by 4, the tile's 128 core columns with 16-byte loads
// (shared rows are offset by KILN_PAD so those land 16-byte aligned) and
// the halo columns one by one. Bound: memory, at sizeof(T) in and out per
// pixel; the FW x FH multiply-adds per pixel read shared memory only.
#define KILN_RX (FW / 2)
#define KILN_RY (FH / 2)
#define KILN_TW 128
#define KILN_TH 32
#define KILN_SW (KILN_TW + 2 * KILN_RX)
#define KILN_SH (KILN_TH + 2 * KILN_RY)
#define KILN_PAD ((4 - KILN_RX % 4) % 4)
#define KILN_SWA ((KILN_PAD + KILN_SW + 3) / 4 * 4)

__device__ __forceinline__ float kiln_pixel(float v) { return v; }
__device__ __forceinline__ float kiln_pixel(unsigned char v) { return (float)v; }
__device__ __forceinline__ void kiln_put(float* dst, float v) { *dst = v; }
__device__ __forceinline__ void kiln_put(unsigned char* dst, float v) {
    *dst = (unsigned char)fminf(fmaxf(floorf(v + 0.5f), 0.f), 255.f);
}

// The source index for coordinate i of an axis of n pixels, or -1 for a zero pixel.
__device__ __forceinline__ kiln_i64 kiln_border(kiln_i64 i, kiln_i64 n, unsigned mode) {
    if (i >= 0 && i < n) return i;
    if (mode == 0) return i < 0 ? 0 : n - 1;
    if (mode == 1) return -1;
    const kiln_i64 period = 2 * n;
    kiln_i64 r = i % period;
    if (r < 0) r += period;
    return r < n ? r : period - 1 - r;
}

extern "C" __global__ void __launch_bounds__(256)
KERNEL(const T* __restrict__ in, const float* __restrict__ weights, T* __restrict__ out, kiln_u64 width,
       kiln_u64 height, unsigned filter_w, unsigned filter_h, unsigned border, float divisor) {
    // The filter's sides are compiled in (FW x FH); the host passes them too
    // (the CPU kernel reads them) and picks the program that matches.
    (void)filter_w;
    (void)filter_h;
    // Pixel (y0 + sy, x0 + sx) of the tile is tile[sy][KILN_PAD + sx].
    __shared__ __align__(16) float tile[KILN_SH][KILN_SWA];
    const unsigned tx = threadIdx.x, ty = threadIdx.y, tid = ty * 32 + tx;
#if FW * FH <= 25
    // Small filters live in registers (indexed by unrolled constants only).
    float w[FH][FW];
#pragma unroll
    for (int i = 0; i < FH; ++i)
#pragma unroll
        for (int j = 0; j < FW; ++j) w[i][j] = weights[i * FW + j];
#define KILN_W(i, j) w[i][j]
#define KILN_ROWS_UNROLL _Pragma("unroll")
#else
    // Larger ones in shared memory: every thread reads the same weight at
    // once (a broadcast), and the registers stay free for the outputs.
    __shared__ float sw[FH * FW];
    for (unsigned i = tid; i < FH * FW; i += 256) sw[i] = weights[i];
#define KILN_W(i, j) sw[(i) * FW + (j)]
#define KILN_ROWS_UNROLL _Pragma("unroll 1")
#endif
#if PIXEL_U8
    const bool vector_rows = false;
#else
    const bool vector_rows = width % 4 == 0 && ((kiln_u64)in & 15) == 0;
#endif
    const kiln_u64 tiles_x = (width + KILN_TW - 1) / KILN_TW, tiles_y = (height + KILN_TH - 1) / KILN_TH;
    const kiln_i64 W = (kiln_i64)width, H = (kiln_i64)height;
    for (kiln_u64 by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        for (kiln_u64 bx = blockIdx.x; bx < tiles_x; bx += gridDim.x) {
            const kiln_i64 x0 = (kiln_i64)(bx * KILN_TW) - KILN_RX, y0 = (kiln_i64)(by * KILN_TH) - KILN_RY;
            const bool inside = x0 >= 0 && y0 >= 0 && x0 + KILN_SW <= W && y0 + KILN_SH <= H;
            if (inside && vector_rows) {
                // The 128 core columns start at pixel bx * 128: 16-byte aligned in
                // global memory (width % 4 == 0) and, by KILN_PAD, in the tile.
#pragma unroll 4
                for (unsigned idx = tid; idx < KILN_SH * (KILN_TW / 4); idx += 256) {
                    const unsigned sy = idx / (KILN_TW / 4), q = idx % (KILN_TW / 4);
                    const kiln_u64 src = (kiln_u64)(y0 + sy) * width + bx * KILN_TW + 4 * q;
                    *(float4*)&tile[sy][KILN_PAD + KILN_RX + 4 * q] = *(const float4*)((const float*)in + src);
                }
#if KILN_RX > 0
                for (unsigned idx = tid; idx < KILN_SH * 2 * KILN_RX; idx += 256) {
                    const unsigned sy = idx / (2 * KILN_RX), h = idx % (2 * KILN_RX);
                    const unsigned sx = h < KILN_RX ? h : KILN_TW + h;
                    tile[sy][KILN_PAD + sx] = kiln_pixel(in[(kiln_u64)(y0 + sy) * width + (kiln_u64)(x0 + sx)]);
                }
#endif
            } else if (inside) {
#pragma unroll 4
                for (unsigned idx = tid; idx < KILN_SH * KILN_SW; idx += 256) {
                    const unsigned sy = idx / KILN_SW, sx = idx % KILN_SW;
                    tile[sy][KILN_PAD + sx] = kiln_pixel(in[(kiln_u64)(y0 + sy) * width + (kiln_u64)(x0 + sx)]);
                }
            } else {
                for (unsigned idx = tid; idx < KILN_SH * KILN_SW; idx += 256) {
                    const unsigned sy = idx / KILN_SW, sx = idx % KILN_SW;
                    const kiln_i64 gy = kiln_border(y0 + sy, H, border), gx = kiln_border(x0 + sx, W, border);
                    tile[sy][KILN_PAD + sx] =
                        (gy < 0 || gx < 0) ? 0.f : kiln_pixel(in[(kiln_u64)gy * width + (kiln_u64)gx]);
                }
            }
            __syncthreads();
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const unsigned ly = ty + 8 * r;
                const kiln_u64 oy = by * KILN_TH + ly;
                float acc[4] = {0.f, 0.f, 0.f, 0.f};
                KILN_ROWS_UNROLL
                for (int i = 0; i < FH; ++i) {
                    const float* row = &tile[ly + i][KILN_PAD + tx];
#pragma unroll
                    for (int e = 0; e < 4; ++e)
#pragma unroll
                        for (int j = 0; j < FW; ++j) acc[e] += KILN_W(i, j) * row[32 * e + j];
                }
                if (oy >= height) continue;
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const kiln_u64 ox = bx * KILN_TW + tx + 32 * e;
                    if (ox < width) kiln_put(out + oy * width + ox, acc[e] / divisor);
                }
            }
            // The next tile overwrites `tile`.
            __syncthreads();
        }
    }
#undef KILN_W
#undef KILN_ROWS_UNROLL
}
#endif
