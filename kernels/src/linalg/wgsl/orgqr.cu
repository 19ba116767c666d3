// orgqr: the first q columns of Q from geqrf's k reflectors, one block
// per matrix, as orgqr.wgsl (LAPACK's org2r).
extern "C" __global__ void KERNEL(T* __restrict__ a, const T* __restrict__ tau, unsigned m, unsigned q,
                                  unsigned k, unsigned batch, unsigned gx) {
    unsigned g = blockIdx.x + blockIdx.y * gx;
    if (g >= batch) {
        return;
    }
    unsigned lid = threadIdx.x;
    unsigned long long base = (unsigned long long)g * m * q;
    for (unsigned c = k; c < q; ++c) {
        for (unsigned i = lid; i < m; i += blockDim.x) {
            a[base + (unsigned long long)c * m + i] = i == c ? T(1) : T(0);
        }
    }
    __syncthreads();
    for (unsigned s = 0; s < k; ++s) {
        unsigned j = k - 1 - s;
        T t = tau[(unsigned long long)g * k + j];
        unsigned long long col = base + (unsigned long long)j * m;
        if (t != 0) {
            for (unsigned c = j + 1 + lid; c < q; c += blockDim.x) {
                kiln_reflect(a, col, base + (unsigned long long)c * m, j, t, m);
            }
        }
        __syncthreads();
        for (unsigned i = lid; i < m; i += blockDim.x) {
            if (i < j) {
                a[col + i] = 0;
            } else if (i == j) {
                a[col + i] = 1 - t;
            } else {
                a[col + i] = -t * a[col + i];
            }
        }
        __syncthreads();
    }
}
