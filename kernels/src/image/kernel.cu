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
// One thread per 4 pixels: 12 or 16 bytes in (three 4-byte loads, or one
// 16-byte load) and one 4-byte store out, when the pointers allow; byte by
// byte otherwise and for the last n % 4 pixels. Memory-bound at
// CHANNELS + 1 bytes per pixel.
__device__ __forceinline__ unsigned kiln_gray(unsigned r, unsigned g, unsigned b) {
    return (299u * r + 587u * g + 114u * b) / 1000u;
}
__device__ __forceinline__ unsigned kiln_byte(unsigned w, int i) { return (w >> (8 * i)) & 0xffu; }

extern "C" __global__ void KERNEL(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                  kiln_u64 pixels) {
    const kiln_u64 start = (kiln_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const kiln_u64 stride = (kiln_u64)gridDim.x * blockDim.x;
    const kiln_u64 groups = pixels / 4;
    const bool aligned = ((kiln_u64)out & 3) == 0 && ((kiln_u64)in & (CHANNELS == 4 ? 15 : 3)) == 0;
    kiln_u64 done = 0;
    if (aligned) {
        for (kiln_u64 g = start; g < groups; g += stride) {
            unsigned w[CHANNELS];
#if CHANNELS == 4
            const uint4 v = ((const uint4*)in)[g];
            w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
#else
            const unsigned* src = (const unsigned*)in + 3 * g;
            w[0] = src[0]; w[1] = src[1]; w[2] = src[2];
#endif
            unsigned result = 0;
#pragma unroll
            for (int p = 0; p < 4; ++p) {
                // Byte j of the group is byte j % 4 of word j / 4.
                const int j = p * CHANNELS;
                const unsigned r = kiln_byte(w[j / 4], j % 4);
                const unsigned gr = kiln_byte(w[(j + 1) / 4], (j + 1) % 4);
                const unsigned b = kiln_byte(w[(j + 2) / 4], (j + 2) % 4);
                result |= kiln_gray(r, gr, b) << (8 * p);
            }
            ((unsigned*)out)[g] = result;
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
// One 32 x 8 block computes a 128 x 32 output tile, each thread 4
// consecutive pixels in each of 4 rows. The input tile plus its halo
// (FH - 1 rows, FW - 1 columns) is staged once in shared memory as float,
// so each input pixel is read from global memory about once (the halo of
// neighbouring tiles hits L2). The compute reuses each shared row segment
// across the 4 outputs along x, and stores 16 (f32) or 4 (u8) bytes at a
// time where the row and pointer alignment allow. Bound: memory, at
// sizeof(T) in and out per pixel.
#define KILN_RX (FW / 2)
#define KILN_RY (FH / 2)
#define KILN_TW 128
#define KILN_TH 32
#define KILN_SW (KILN_TW + 2 * KILN_RX)
#define KILN_SH (KILN_TH + 2 * KILN_RY)

__device__ __forceinline__ float kiln_pixel(float v) { return v; }
__device__ __forceinline__ float kiln_pixel(unsigned char v) { return (float)v; }
__device__ __forceinline__ void kiln_put(float* dst, float v) { *dst = v; }
__device__ __forceinline__ unsigned kiln_round_u8(float v) {
    return (unsigned)fminf(fmaxf(floorf(v + 0.5f), 0.f), 255.f);
}
__device__ __forceinline__ void kiln_put(unsigned char* dst, float v) { *dst = (unsigned char)kiln_round_u8(v); }

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
    __shared__ float tile[KILN_SH][KILN_SW];
    const unsigned tid = threadIdx.y * 32 + threadIdx.x;
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
    const kiln_u64 tiles_x = (width + KILN_TW - 1) / KILN_TW, tiles_y = (height + KILN_TH - 1) / KILN_TH;
    const kiln_i64 W = (kiln_i64)width, H = (kiln_i64)height;
    for (kiln_u64 by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        for (kiln_u64 bx = blockIdx.x; bx < tiles_x; bx += gridDim.x) {
            const kiln_i64 x0 = (kiln_i64)(bx * KILN_TW) - KILN_RX, y0 = (kiln_i64)(by * KILN_TH) - KILN_RY;
            const bool inside = x0 >= 0 && y0 >= 0 && x0 + KILN_SW <= W && y0 + KILN_SH <= H;
            if (inside) {
#pragma unroll 4
                for (unsigned idx = tid; idx < KILN_SH * KILN_SW; idx += 256) {
                    const unsigned sy = idx / KILN_SW, sx = idx % KILN_SW;
                    tile[sy][sx] = kiln_pixel(in[(kiln_u64)(y0 + sy) * width + (kiln_u64)(x0 + sx)]);
                }
            } else {
                for (unsigned idx = tid; idx < KILN_SH * KILN_SW; idx += 256) {
                    const unsigned sy = idx / KILN_SW, sx = idx % KILN_SW;
                    const kiln_i64 gy = kiln_border(y0 + sy, H, border), gx = kiln_border(x0 + sx, W, border);
                    tile[sy][sx] = (gy < 0 || gx < 0) ? 0.f : kiln_pixel(in[(kiln_u64)gy * width + (kiln_u64)gx]);
                }
            }
            __syncthreads();
            const unsigned lx = threadIdx.x * 4;
            const kiln_u64 ox = bx * KILN_TW + lx;
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const unsigned ly = threadIdx.y + 8 * r;
                const kiln_u64 oy = by * KILN_TH + ly;
                float acc[4] = {0.f, 0.f, 0.f, 0.f};
                KILN_ROWS_UNROLL
                for (int i = 0; i < FH; ++i) {
                    float seg[FW + 3];
#pragma unroll
                    for (int s = 0; s < FW + 3; ++s) seg[s] = tile[ly + i][lx + s];
#pragma unroll
                    for (int j = 0; j < FW; ++j)
#pragma unroll
                        for (int e = 0; e < 4; ++e) acc[e] += KILN_W(i, j) * seg[j + e];
                }
                if (oy >= height || ox >= width) continue;
                T* dst = out + oy * width + ox;
                const bool full = ox + 4 <= width;
#if PIXEL_U8
                if (full && ((kiln_u64)dst & 3) == 0) {
                    *(unsigned*)dst = kiln_round_u8(acc[0] / divisor) | (kiln_round_u8(acc[1] / divisor) << 8) |
                                      (kiln_round_u8(acc[2] / divisor) << 16) |
                                      (kiln_round_u8(acc[3] / divisor) << 24);
                    continue;
                }
#else
                if (full && ((kiln_u64)dst & 15) == 0) {
                    *(float4*)dst = make_float4(acc[0] / divisor, acc[1] / divisor, acc[2] / divisor, acc[3] / divisor);
                    continue;
                }
#endif
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (ox + e < width) kiln_put(dst + e, acc[e] / divisor);
            }
            // The next tile overwrites `tile`.
            __syncthreads();
        }
    }
#undef KILN_W
#undef KILN_ROWS_UNROLL
}
#endif
