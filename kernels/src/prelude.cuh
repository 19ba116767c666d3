// kiln's CUDA prelude, prepended to every kernel source after `typedef ... T;`.
//
// Integer arithmetic goes through unsigned types so that overflow wraps
// (signed overflow is undefined behaviour in C++, and the optimiser exploits
// it); integer division follows WGSL's definition, which every kiln backend
// shares: x / 0 == x and INT_MIN / -1 == INT_MIN.

__device__ __forceinline__ int kiln_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int kiln_sub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ int kiln_mul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ int kiln_div(int a, int b) {
    return (b == 0 || (a == (int)0x80000000 && b == -1)) ? a : a / b;
}
__device__ __forceinline__ int kiln_neg(int a) { return (int)(0u - (unsigned)a); }
__device__ __forceinline__ int kiln_abs(int a) { return a < 0 ? kiln_neg(a) : a; }
__device__ __forceinline__ int kiln_sqrt(int a) { return a; }

__device__ __forceinline__ unsigned kiln_add(unsigned a, unsigned b) { return a + b; }
__device__ __forceinline__ unsigned kiln_sub(unsigned a, unsigned b) { return a - b; }
__device__ __forceinline__ unsigned kiln_mul(unsigned a, unsigned b) { return a * b; }
__device__ __forceinline__ unsigned kiln_div(unsigned a, unsigned b) { return b == 0 ? a : a / b; }
__device__ __forceinline__ unsigned kiln_neg(unsigned a) { return 0u - a; }
__device__ __forceinline__ unsigned kiln_abs(unsigned a) { return a; }
__device__ __forceinline__ unsigned kiln_sqrt(unsigned a) { return a; }

__device__ __forceinline__ float kiln_add(float a, float b) { return a + b; }
__device__ __forceinline__ float kiln_sub(float a, float b) { return a - b; }
__device__ __forceinline__ float kiln_mul(float a, float b) { return a * b; }
__device__ __forceinline__ float kiln_div(float a, float b) { return a / b; }
__device__ __forceinline__ float kiln_neg(float a) { return -a; }
__device__ __forceinline__ float kiln_abs(float a) { return fabsf(a); }
__device__ __forceinline__ float kiln_sqrt(float a) { return sqrtf(a); }

__device__ __forceinline__ double kiln_add(double a, double b) { return a + b; }
__device__ __forceinline__ double kiln_sub(double a, double b) { return a - b; }
__device__ __forceinline__ double kiln_mul(double a, double b) { return a * b; }
__device__ __forceinline__ double kiln_div(double a, double b) { return a / b; }
__device__ __forceinline__ double kiln_neg(double a) { return -a; }
__device__ __forceinline__ double kiln_abs(double a) { return fabs(a); }
__device__ __forceinline__ double kiln_sqrt(double a) { return sqrt(a); }

// The 16-bit floats: each operation in f32, rounded once by FROM.
#define KILN_HALF_OPS(H, FROM) \
    __device__ __forceinline__ H kiln_add(H a, H b) { return FROM(kiln_to_float(a) + kiln_to_float(b)); } \
    __device__ __forceinline__ H kiln_sub(H a, H b) { return FROM(kiln_to_float(a) - kiln_to_float(b)); } \
    __device__ __forceinline__ H kiln_mul(H a, H b) { return FROM(__fmul_rn(kiln_to_float(a), kiln_to_float(b))); } \
    __device__ __forceinline__ H kiln_div(H a, H b) { return FROM(kiln_to_float(a) / kiln_to_float(b)); } \
    __device__ __forceinline__ H kiln_neg(H a) { H r; r.bits = a.bits ^ 0x8000; return r; } \
    __device__ __forceinline__ H kiln_abs(H a) { H r; r.bits = a.bits & 0x7fff; return r; } \
    __device__ __forceinline__ H kiln_sqrt(H a) { return FROM(sqrtf(kiln_to_float(a))); }
KILN_HALF_OPS(kiln_half, kiln_half_from_float)
KILN_HALF_OPS(kiln_bf16, kiln_bf16_from_float)
#undef KILN_HALF_OPS

// Conversion of an element index to T (modulo 2^32 for integers, rounded for floats).
template <typename U> __device__ __forceinline__ U kiln_from_index(unsigned long long i) { return (U)i; }
template <> __device__ __forceinline__ kiln_half kiln_from_index<kiln_half>(unsigned long long i) {
    return kiln_half_from_float((float)i);
}
template <> __device__ __forceinline__ kiln_bf16 kiln_from_index<kiln_bf16>(unsigned long long i) {
    return kiln_bf16_from_float((float)i);
}

// Exact (never fused) multiply and add, for results the CPU must reproduce bit for bit.
__device__ __forceinline__ int kiln_mul_rn(int a, int b) { return kiln_mul(a, b); }
__device__ __forceinline__ int kiln_add_rn(int a, int b) { return kiln_add(a, b); }
__device__ __forceinline__ unsigned kiln_mul_rn(unsigned a, unsigned b) { return a * b; }
__device__ __forceinline__ unsigned kiln_add_rn(unsigned a, unsigned b) { return a + b; }
__device__ __forceinline__ float kiln_mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float kiln_add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double kiln_mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double kiln_add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ kiln_half kiln_mul_rn(kiln_half a, kiln_half b) { return kiln_mul(a, b); }
__device__ __forceinline__ kiln_half kiln_add_rn(kiln_half a, kiln_half b) { return kiln_add(a, b); }
__device__ __forceinline__ kiln_bf16 kiln_mul_rn(kiln_bf16 a, kiln_bf16 b) { return kiln_mul(a, b); }
__device__ __forceinline__ kiln_bf16 kiln_add_rn(kiln_bf16 a, kiln_bf16 b) { return kiln_add(a, b); }

// 16 bytes of T, for 128-bit loads and stores (LDG.128 / STG.128): the
// memory-bound kernels move whole packs where every pointer is 16-byte aligned.
#define KILN_PACK ((int)(16 / sizeof(T)))
struct __align__(16) kiln_pack { T v[KILN_PACK]; };
__device__ __forceinline__ bool kiln_aligned16(const void* p) { return ((unsigned long long)p & 15ull) == 0; }

// Grid-stride loop over [0, n): one thread per element while the grid is
// large enough, each thread looping when the grid was capped.
#define KILN_FOR_EACH(i, n) \
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (unsigned long long)gridDim.x * blockDim.x)

// The same loop in 16-byte packs: VEC(i) runs for each pack index while
// ALIGNED holds (every pointer 16-byte aligned), then SCALAR(i) for the
// elements left over (all of them when not aligned). The host sizes the grid
// for one pack per thread.
#define KILN_FOR_EACH_PACKED(n, ALIGNED, VEC, SCALAR) \
    do { \
        unsigned long long kiln_start_ = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; \
        unsigned long long kiln_stride_ = (unsigned long long)gridDim.x * blockDim.x; \
        unsigned long long kiln_done_ = 0; \
        if (ALIGNED) { \
            unsigned long long kiln_packs_ = (n) / KILN_PACK; \
            for (unsigned long long i = kiln_start_; i < kiln_packs_; i += kiln_stride_) { VEC; } \
            kiln_done_ = kiln_packs_ * KILN_PACK; \
        } \
        for (unsigned long long i = kiln_done_ + kiln_start_; i < (n); i += kiln_stride_) { SCALAR; } \
    } while (0)
