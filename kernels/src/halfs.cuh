// 16-bit float types for kiln's kernels, with no dependency on the toolkit's
// cuda_fp16.h / cuda_bf16.h (NVRTC does not ship them, and kiln compiles
// where only the driver and NVRTC are installed). Values are converted with
// single PTX instructions; arithmetic happens in f32 and is rounded once,
// which for +, -, *, / and sqrt equals the correctly rounded 16-bit result.
struct kiln_half { unsigned short bits; };
struct kiln_bf16 { unsigned short bits; };

__device__ __forceinline__ float kiln_to_float(kiln_half h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
__device__ __forceinline__ kiln_half kiln_half_from_float(float f) {
    kiln_half h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    return h;
}
__device__ __forceinline__ float kiln_to_float(kiln_bf16 h) {
    return __uint_as_float(((unsigned)h.bits) << 16);
}
// Rounded to nearest, ties to even, on the bits (PTX's cvt.rn.bf16.f32
// needs sm_80; this runs on every architecture): NaN stays a quiet NaN of
// its sign, as the CPU's and WGSL's conversions give.
__device__ __forceinline__ kiln_bf16 kiln_bf16_from_float(float f) {
    const unsigned b = __float_as_uint(f);
    kiln_bf16 h;
    h.bits = (b & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((b >> 16) | 0x40u)
                                             : (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    return h;
}
