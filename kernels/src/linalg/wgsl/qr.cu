// geqrf of each m x n matrix of the batch, one block per matrix, as
// qr.wgsl: each column's reflector, then its application to the columns
// right of it, one thread per column.
extern "C" __global__ void KERNEL(T* __restrict__ a, T* __restrict__ tau_out, unsigned m, unsigned n,
                                  unsigned batch, unsigned gx) {
    __shared__ T red[256];
    unsigned g = blockIdx.x + blockIdx.y * gx;
    if (g >= batch) {
        return;
    }
    unsigned k = min(m, n);
    unsigned long long base = (unsigned long long)g * m * n;
    for (unsigned j = 0; j < k; ++j) {
        unsigned long long col = base + (unsigned long long)j * m;
        T tau = kiln_householder(a, col, j, m, red);
        if (threadIdx.x == 0) {
            tau_out[(unsigned long long)g * k + j] = tau;
        }
        __syncthreads();
        if (tau != 0) {
            for (unsigned c = j + 1 + threadIdx.x; c < n; c += blockDim.x) {
                kiln_reflect(a, col, base + (unsigned long long)c * m, j, tau, m);
            }
        }
        __syncthreads();
    }
}
