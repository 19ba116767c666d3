# Random inputs through min and max of a quotient or remainder and a
# negated operand: C's signed / and % (as kiln generated them before) and
# kiln's prelude now, against the host.
import cupy as cp
import numpy as np

prelude = open("kernels/src/expr/prelude.cuh").read()
old_ops = """
__device__ __forceinline__ int bt_max(int a, int b) { unsigned m = 0u - (unsigned)(a < b); return (int)(((unsigned)a & ~m) | ((unsigned)b & m)); }
__device__ __forceinline__ int bt_min(int a, int b) { unsigned m = 0u - (unsigned)(b < a); return (int)(((unsigned)a & ~m) | ((unsigned)b & m)); }
__device__ __forceinline__ int nt_neg(int a) { return (int)(~(unsigned)kx_opaque(a) + 1u); }
__device__ __forceinline__ int sel_max(int a, int b) { int r; asm("{ .reg .pred p; setp.lt.s32 p, %1, %2; selp.b32 %0, %2, %1, p; }" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ int sel_min(int a, int b) { int r; asm("{ .reg .pred p; setp.lt.s32 p, %2, %1; selp.b32 %0, %2, %1, p; }" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ int old_div(int a, int b) { return (b == 0 || (a == (int)0x80000000u && b == -1)) ? a : a / b; }
__device__ __forceinline__ int old_rem(int a, int b) { return (b == 0 || (a == (int)0x80000000u && b == -1)) ? 0 : a % b; }
"""
shapes = {
    "max(q, max(-c, x))": "kx_max(Q, kx_max(kx_neg(c), x))",
    "min(q, min(-c, x))": "kx_min(Q, kx_min(kx_neg(c), x))",
    "max(max(-c, x), q)": "kx_max(kx_max(kx_neg(c), x), Q)",
    "min(q, -c)": "kx_min(Q, kx_neg(c))",
    "max(q, -x)": "kx_max(Q, kx_neg(x))",
}
rng = np.random.default_rng(7)
n = 1 << 16
def draw():
    v = rng.integers(-2**31, 2**31, n, dtype=np.int64)
    small = rng.integers(-1000, 1000, n, dtype=np.int64)
    pick = rng.random(n) < 0.5
    v = np.where(pick, small, v)
    v[:8] = [0, -1, 1, -2**31, 2**31 - 1, -2**31, 3, -3]
    return v
A, B, X = draw(), draw(), draw()
c = -272
def tdiv(a, b):
    q = np.where(b == 0, a, 0)
    ok = (b != 0) & ~((a == -2**31) & (b == -1))
    qq = np.zeros_like(a)
    qq[ok] = np.abs(a[ok]) // np.abs(b[ok]) * np.sign(a[ok]) * np.sign(b[ok])
    return np.where(ok, qq, a)
def trem(a, b):
    ok = (b != 0) & ~((a == -2**31) & (b == -1))
    r = np.zeros_like(a)
    r[ok] = a[ok] - tdiv(a, b)[ok] * b[ok]
    return r
wrap = lambda v: ((v + 2**31) % 2**32) - 2**31
host_q = {"div": tdiv(A, B), "rem": trem(A, B)}
dA, dB, dX = (cp.asarray(v.astype(np.int32)) for v in (A, B, X))
for op in ("div", "rem"):
    for impl in ("kiln", "bt", "sel", "negnt", "nodiv"):
        for name, expr in shapes.items():
            q = f"kx_{op}(a, b)" if impl != "nodiv" else "kx_add(a, b)"
            body = expr.replace("Q", q)
            if impl in ("bt", "sel"):
                body = body.replace("kx_max", impl + "_max").replace("kx_min", impl + "_min")
            if impl == "negnt":
                body = body.replace("kx_neg", "nt_neg")
            src = prelude + old_ops + f"""
extern "C" __global__ void k(int* out, const int* A, const int* B, const int* X, int c, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = A[i], b = B[i], x = X[i];
    out[i] = {body};
}}"""
            k = cp.RawKernel(src, "k", options=("--std=c++17",))
            out = cp.full(n, 12345, dtype=cp.int32)
            k(((n + 255) // 256,), (256,), (out, dA, dB, dX, np.int32(c), np.int32(n)))
            got = cp.asnumpy(out).astype(np.int64)
            qh = host_q[op] if impl != "nodiv" else wrap(A + B)
            nc = wrap(np.int64(-c))
            nx = wrap(-X)
            want = {
                "max(q, max(-c, x))": np.maximum(qh, np.maximum(nc, X)),
                "min(q, min(-c, x))": np.minimum(qh, np.minimum(nc, X)),
                "max(max(-c, x), q)": np.maximum(np.maximum(nc, X), qh),
                "min(q, -c)": np.minimum(qh, nc),
                "max(q, -x)": np.maximum(qh, nx),
            }[name]
            bad = int((got != want).sum())
            print(f"{op} {impl:5s} {name:22s} wrong: {bad} of {n}" + (f" (first at {int(np.argmax(got != want))}: got {got[got != want][0]}, host {want[got != want][0]})" if bad else ""))
