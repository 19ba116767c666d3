// Helpers of generated user kernels (CUDA C++), one overload per dtype.
// Semantics, shared with the WGSL and CPU forms: integers wrap; x / 0 == x,
// MIN / -1 == MIN, x % 0 == 0, MIN % -1 == 0; shift amounts are taken
// modulo the bit width; float min/max return the other operand for a NaN;
// float to integer conversions truncate and saturate, NaN giving 0.

#define KX_INT_OPS(T, U, MIN)                                                                          \
    __device__ __forceinline__ T kx_add(T a, T b) { return (T)((U)a + (U)b); }                         \
    __device__ __forceinline__ T kx_sub(T a, T b) { return (T)((U)a - (U)b); }                         \
    __device__ __forceinline__ T kx_mul(T a, T b) { return (T)((U)a * (U)b); }                         \
    __device__ __forceinline__ T kx_neg(T a) { return (T)((U)0 - (U)a); }                              \
    __device__ __forceinline__ T kx_div(T a, T b) { return (b == 0 || (a == MIN && b == (T)-1)) ? a : a / b; } \
    __device__ __forceinline__ T kx_rem(T a, T b) { return (b == 0 || (a == MIN && b == (T)-1)) ? (T)0 : a % b; } \
    __device__ __forceinline__ T kx_abs(T a) { return a < 0 ? kx_neg(a) : a; }                         \
    __device__ __forceinline__ T kx_min(T a, T b) { return b < a ? b : a; }                            \
    __device__ __forceinline__ T kx_max(T a, T b) { return a < b ? b : a; }                            \
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
    __device__ __forceinline__ T kx_min(T a, T b) { return b < a ? b : a; }                            \
    __device__ __forceinline__ T kx_max(T a, T b) { return a < b ? b : a; }                            \
    __device__ __forceinline__ T kx_shl(T a, unsigned s) { return a << (s & (8 * sizeof(T) - 1)); }    \
    __device__ __forceinline__ T kx_shr(T a, unsigned s) { return a >> (s & (8 * sizeof(T) - 1)); }

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

// Raw argument `a` of `n` elements at index `i`; zero outside it. The load
// is volatile so that the compiler cannot move it ahead of the bounds check
// (with a plain load, NVRTC was seen to read a[i] for negative i).
template <typename T, typename I> __device__ __forceinline__ T kx_at(const T* a, I i, unsigned long long n) {
    T r = (T)0;
    if (i >= (I)0 && (unsigned long long)i < n) r = *(const volatile T*)(a + i);
    return r;
}
