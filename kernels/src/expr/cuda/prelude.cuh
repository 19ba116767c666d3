// Helpers of generated user kernels (CUDA C++), one overload per dtype.
// Semantics, shared with the WGSL and CPU forms: integers wrap; x / 0 == x,
// MIN / -1 == MIN, x % 0 == 0, MIN % -1 == 0; shift amounts are taken
// modulo the bit width; float min/max return the other operand for a NaN;
// float to integer conversions truncate and saturate, NaN giving 0.

// An integer passed through a move the optimiser cannot see through: what
// comes out has no range the compiler knows (see kx_index).
__device__ __forceinline__ int kx_opaque(int v) { int r; asm("mov.b32 %0, %1;" : "=r"(r) : "r"(v)); return r; }
__device__ __forceinline__ unsigned kx_opaque(unsigned v) { unsigned r; asm("mov.b32 %0, %1;" : "=r"(r) : "r"(v)); return r; }
__device__ __forceinline__ long long kx_opaque(long long v) { long long r; asm("mov.b64 %0, %1;" : "=l"(r) : "l"(v)); return r; }
__device__ __forceinline__ unsigned long long kx_opaque(unsigned long long v) { unsigned long long r; asm("mov.b64 %0, %1;" : "=l"(r) : "l"(v)); return r; }

// Integer abs is a multiply by the sign (+1 or -1), never `a < 0 ? -a : a`:
// NVVM turns that into PTX abs.s32, and ptxas (CUDA 12/13, sm_90, -O3)
// then takes the result as never negative and lowers a following signed
// remainder as unsigned, so abs(INT_MIN) % INT_MAX gave 1, not -1. The
// opaque sign keeps NVVM from rebuilding the abs.
// Integer min and max are a PTX compare and select, never C's `a < b ? b :
// a` (nor a bit trick, nor max()): ptxas (CUDA 13, sm_90, -O1 and above)
// folds nested ones into min/max instructions and loses the negation of a
// kernel scalar on the way: max(q, max(-c, x)) came out as max(q, max(c,
// x)) for about half of random inputs (the array/fused i32 case of
// conformance/results/h100-2026-11-25-array-fused-i32-mismatch-kernel.cu;
// -Xptxas -O0 gives the right value). Inline PTX keeps them apart.
#define KX_MIN_MAX(T, S, B, R)                                                                          \
    __device__ __forceinline__ T kx_min(T a, T b) {                                                    \
        T r; asm("{ .reg .pred p; setp.lt." S " p, %2, %1; selp." B " %0, %2, %1, p; }" : "=" R(r) : R(a), R(b)); \
        return r;                                                                                      \
    }                                                                                                  \
    __device__ __forceinline__ T kx_max(T a, T b) {                                                    \
        T r; asm("{ .reg .pred p; setp.lt." S " p, %1, %2; selp." B " %0, %2, %1, p; }" : "=" R(r) : R(a), R(b)); \
        return r;                                                                                      \
    }

#define KX_INT_OPS(T, U, MIN)                                                                          \
    __device__ __forceinline__ T kx_add(T a, T b) { return (T)((U)a + (U)b); }                         \
    __device__ __forceinline__ T kx_sub(T a, T b) { return (T)((U)a - (U)b); }                         \
    __device__ __forceinline__ T kx_mul(T a, T b) { return (T)((U)a * (U)b); }                         \
    __device__ __forceinline__ T kx_neg(T a) { return (T)((U)0 - (U)a); }                              \
    __device__ __forceinline__ T kx_div(T a, T b) { return (b == 0 || (a == MIN && b == (T)-1)) ? a : a / b; } \
    __device__ __forceinline__ T kx_rem(T a, T b) { return (b == 0 || (a == MIN && b == (T)-1)) ? (T)0 : a % b; } \
    __device__ __forceinline__ T kx_abs(T a) { return (T)((U)a * ((U)kx_opaque(a >> (8 * sizeof(T) - 1)) | (U)1)); } \
    __device__ __forceinline__ T kx_shl(T a, unsigned s) { return (T)((U)a << (s & (8 * sizeof(T) - 1))); } \
    __device__ __forceinline__ T kx_shr(T a, unsigned s) { return a >> (s & (8 * sizeof(T) - 1)); }

#define KX_UINT_OPS(T)                                                                                 \
    __device__ __forceinline__ T kx_add(T a, T b) { return a + b; }                                    \
    __device__ __forceinline__ T kx_sub(T a, T b) { return a - b; }                                    \
    __device__ __forceinline__ T kx_mul(T a, T b) { return a * b; }                                    \
    __device__ __forceinline__ T kx_neg(T a) { return (T)0 - a; }                                      \
    __device__ __forceinline__ T kx_div(T a, T b) { return b == 0 ? a : a / b; }                       \
    __device__ __forceinline__ T kx_rem(T a, T b) { return b == 0 ? (T)0 : a % b; }                    \
    __device__ __forceinline__ T kx_abs(T a) { return a; }                                             \
    __device__ __forceinline__ T kx_shl(T a, unsigned s) { return a << (s & (8 * sizeof(T) - 1)); }    \
    __device__ __forceinline__ T kx_shr(T a, unsigned s) { return a >> (s & (8 * sizeof(T) - 1)); }

KX_MIN_MAX(int, "s32", "b32", "r")
KX_MIN_MAX(long long, "s64", "b64", "l")
KX_MIN_MAX(unsigned, "u32", "b32", "r")
KX_MIN_MAX(unsigned long long, "u64", "b64", "l")
KX_INT_OPS(int, unsigned, (int)0x80000000u)
KX_INT_OPS(long long, unsigned long long, (long long)0x8000000000000000ull)
KX_UINT_OPS(unsigned)
KX_UINT_OPS(unsigned long long)

#define KX_FLOAT_OPS(T, S)                                                                             \
    __device__ __forceinline__ T kx_add(T a, T b) { return a + b; }                                    \
    __device__ __forceinline__ T kx_sub(T a, T b) { return a - b; }                                    \
    __device__ __forceinline__ T kx_mul(T a, T b) { return a * b; }                                    \
    __device__ __forceinline__ T kx_div(T a, T b) { return a / b; }                                    \
    __device__ __forceinline__ T kx_neg(T a) { return -a; }                                            \
    __device__ __forceinline__ T kx_abs(T a) { return fabs##S(a); }                                    \
    __device__ __forceinline__ T kx_min(T a, T b) { return fmin##S(a, b); }                            \
    __device__ __forceinline__ T kx_max(T a, T b) { return fmax##S(a, b); }                            \
    __device__ __forceinline__ T kx_pow(T a, T b) { return pow##S(a, b); }                             \
    __device__ __forceinline__ T kx_sqrt(T a) { return sqrt##S(a); }                                   \
    __device__ __forceinline__ T kx_rsqrt(T a) { return (T)1 / sqrt##S(a); }                           \
    __device__ __forceinline__ T kx_exp(T a) { return exp##S(a); }                                     \
    __device__ __forceinline__ T kx_log(T a) { return log##S(a); }                                     \
    __device__ __forceinline__ T kx_sin(T a) { return sin##S(a); }                                     \
    __device__ __forceinline__ T kx_cos(T a) { return cos##S(a); }                                     \
    __device__ __forceinline__ T kx_tanh(T a) { return tanh##S(a); }                                   \
    __device__ __forceinline__ T kx_floor(T a) { return floor##S(a); }                                 \
    __device__ __forceinline__ T kx_ceil(T a) { return ceil##S(a); }                                   \
    __device__ __forceinline__ T kx_fma(T a, T b, T c) { return fma##S(a, b, c); }

KX_FLOAT_OPS(float, f)
KX_FLOAT_OPS(double, )

// Conversions: kx_cast<To>(from).
template <typename To, typename From> __device__ __forceinline__ To kx_cast(From a) { return (To)a; }
#define KX_F2I(From, To, F)                                                                            \
    template <> __device__ __forceinline__ To kx_cast<To, From>(From a) { return a != a ? (To)0 : F(a); }
KX_F2I(float, int, __float2int_rz)
KX_F2I(float, unsigned, __float2uint_rz)
KX_F2I(float, long long, __float2ll_rz)
KX_F2I(float, unsigned long long, __float2ull_rz)
KX_F2I(double, int, __double2int_rz)
KX_F2I(double, unsigned, __double2uint_rz)
KX_F2I(double, long long, __double2ll_rz)
KX_F2I(double, unsigned long long, __double2ull_rz)

// A raw argument's index as a 64-bit two's-complement value, passed
// through an opaque move first. NVRTC (CUDA 12/13, sm_90) was seen to
// miscompile the sign extension of an index such as `x ^ INT_MIN` feeding a
// bounds-checked load in a large kernel (the address came out 2^32 elements
// low while the check saw the right value); the optimiser cannot rewrite
// across the move, so the check and the address use one value.
__device__ __forceinline__ unsigned long long kx_index(int i) { return (unsigned long long)(long long)kx_opaque(i); }
__device__ __forceinline__ unsigned long long kx_index(unsigned i) { return (unsigned long long)kx_opaque(i); }
__device__ __forceinline__ unsigned long long kx_index(long long i) { return (unsigned long long)kx_opaque(i); }
__device__ __forceinline__ unsigned long long kx_index(unsigned long long i) { return kx_opaque(i); }

// Raw argument `a` of `n` elements at index `i`; zero outside it (a
// negative index wraps to a value no length reaches).
template <typename T, typename I> __device__ __forceinline__ T kx_at(const T* a, I i, unsigned long long n) {
    unsigned long long k = kx_index(i);
    return k < n ? a[k] : (T)0;
}
// The same for the 16-bit floats, widened to the f32 the body computes on.
template <typename I> __device__ __forceinline__ float kx_at(const kiln_half* a, I i, unsigned long long n) {
    unsigned long long k = kx_index(i);
    return k < n ? kiln_to_float(a[k]) : 0.0f;
}
template <typename I> __device__ __forceinline__ float kx_at(const kiln_bf16* a, I i, unsigned long long n) {
    unsigned long long k = kx_index(i);
    return k < n ? kiln_to_float(a[k]) : 0.0f;
}

// A value rounded once to f16 or bf16 (nearest, ties to even), as the f32
// the body computes on. Doubles convert in one rounding to f16; integers
// and doubles reach bf16 through f32 (exact below 2^24 in magnitude).
__device__ __forceinline__ float kx_round_f16(float v) { return kiln_to_float(kiln_half_from_float(v)); }
__device__ __forceinline__ float kx_round_f16(double v) {
    kiln_half h;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.bits) : "d"(v));
    return kiln_to_float(h);
}
template <typename U> __device__ __forceinline__ float kx_round_f16(U v) { return kx_round_f16((double)v); }
__device__ __forceinline__ float kx_round_bf16(float v) { return kiln_to_float(kiln_bf16_from_float(v)); }
template <typename U> __device__ __forceinline__ float kx_round_bf16(U v) { return kx_round_bf16((float)v); }
