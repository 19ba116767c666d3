// The CUDA twins of householder.wgsl, qr.wgsl and orgqr.wgsl for batches
// of small matrices (the host takes them for orders up to 64): one block
// per matrix, column-major, the same reflectors, scalars and order of
// operations as the WGSL kernels. cuSOLVER has no batched orgqr, and one
// geqrf/orgqr pair per matrix costs about 0.1 ms of calls.

// The sum (or, with `take_max`, the largest) of every thread's `v`, the
// same value on each; the whole block calls it.
__device__ T kiln_block_reduce(T v, T* red, bool take_max) {
    unsigned lid = threadIdx.x;
    red[lid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (lid < s) {
            T o = red[lid + s];
            red[lid] = take_max ? (o > red[lid] ? o : red[lid]) : red[lid] + o;
        }
        __syncthreads();
    }
    T r = red[0];
    __syncthreads();
    return r;
}

// Column j's reflector, as householder.wgsl's `householder`: returns tau
// (the same on every thread), v scaled into the column below the
// diagonal and beta on it.
__device__ T kiln_householder(T* a, unsigned long long col, unsigned j, unsigned m, T* red) {
    unsigned lid = threadIdx.x;
    T alpha = a[col + j];
    T big = 0;
    for (unsigned i = j + 1 + lid; i < m; i += blockDim.x) {
        T v = kiln_abs(a[col + i]);
        big = v > big ? v : big;
    }
    T amax = kiln_block_reduce(big, red, true);
    T ss = 0;
    if (amax > 0) {
        for (unsigned i = j + 1 + lid; i < m; i += blockDim.x) {
            T v = a[col + i] / amax;
            ss = ss + v * v;
        }
    }
    T xnorm = amax * kiln_sqrt(kiln_block_reduce(ss, red, false));
    T tau = 0;
    T beta = alpha;
    if (xnorm != 0) {
        T big2 = kiln_abs(alpha) > xnorm ? kiln_abs(alpha) : xnorm;
        T ra = alpha / big2;
        T rx = xnorm / big2;
        T h = big2 * kiln_sqrt(ra * ra + rx * rx);
        beta = alpha >= 0 ? -h : h;
        tau = (beta - alpha) / beta;
    }
    __syncthreads();
    if (tau != 0) {
        T d = alpha - beta;
        for (unsigned i = j + 1 + lid; i < m; i += blockDim.x) {
            a[col + i] = a[col + i] / d;
        }
    }
    if (lid == 0) {
        a[col + j] = beta;
    }
    return tau;
}

// H = I - t v v^T applied to the column at `cc`, v = [1; a[col + j + 1 ..]].
__device__ void kiln_reflect(T* a, unsigned long long col, unsigned long long cc, unsigned j, T t, unsigned m) {
    T w = a[cc + j];
    for (unsigned i = j + 1; i < m; ++i) {
        w = w + a[col + i] * a[cc + i];
    }
    w = w * t;
    a[cc + j] = a[cc + j] - w;
    for (unsigned i = j + 1; i < m; ++i) {
        a[cc + i] = a[cc + i] - w * a[col + i];
    }
}
