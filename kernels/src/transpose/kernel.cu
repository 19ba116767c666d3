// transpose: out (cols x rows) = in (rows x cols)^T, both row-major.
//
// Memory-bound: each element is read once and written once (2 x ELEM_BYTES
// per element). Elements are moved as raw bits of ELEM_BYTES, so one kernel
// serves every dtype of that size.
//
// ALGO 0, tiled: the coalesced transpose. A 32 x 8 block moves a 32 x 32
// tile, each thread 4 rows of it (TILE / ROWS): reads are coalesced along
// the input's rows, the tile goes through shared memory, and writes are
// coalesced along the output's rows. The tile is 33 wide so that reading a
// column of it hits 32 different banks (a 32-wide tile would put the whole
// column in one bank: a 32-way conflict). Edge tiles are bounds-checked, so
// any shape works; the block loops over tiles when the grid is capped
// (gridDim.y <= 65535).
//
// ALGO 1, naive: one thread per element, coalesced reads and strided
// writes; kept as the baseline the tiled kernel is measured against.

#if ELEM_BYTES == 1
typedef unsigned char kiln_elem;
#elif ELEM_BYTES == 2
typedef unsigned short kiln_elem;
#elif ELEM_BYTES == 4
typedef unsigned int kiln_elem;
#elif ELEM_BYTES == 8
typedef unsigned long long kiln_elem;
#else
#error "ELEM_BYTES must be 1, 2, 4 or 8"
#endif

#define KILN_TILE 32
#define KILN_ROWS 8

#if ALGO == 0
extern "C" __global__ void __launch_bounds__(KILN_TILE * KILN_ROWS)
KERNEL(const kiln_elem* __restrict__ in, kiln_elem* __restrict__ out, unsigned long long rows,
       unsigned long long cols) {
    __shared__ kiln_elem tile[KILN_TILE][KILN_TILE + 1];
    const unsigned long long tiles_x = (cols + KILN_TILE - 1) / KILN_TILE;
    const unsigned long long tiles_y = (rows + KILN_TILE - 1) / KILN_TILE;
    const unsigned x = threadIdx.x, y = threadIdx.y;
    for (unsigned long long ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
        for (unsigned long long tx = blockIdx.x; tx < tiles_x; tx += gridDim.x) {
            const unsigned long long c = tx * KILN_TILE + x;
            const unsigned long long r0 = ty * KILN_TILE + y;
            const bool full = (tx + 1) * KILN_TILE <= cols && (ty + 1) * KILN_TILE <= rows;
            if (full) {
                const kiln_elem* src = in + r0 * cols + c;
#pragma unroll
                for (int j = 0; j < KILN_TILE; j += KILN_ROWS) tile[y + j][x] = src[(unsigned long long)j * cols];
            } else {
#pragma unroll
                for (int j = 0; j < KILN_TILE; j += KILN_ROWS) {
                    if (r0 + j < rows && c < cols) tile[y + j][x] = in[(r0 + j) * cols + c];
                }
            }
            __syncthreads();
            // Output row = input column (tx), output column = input row (ty).
            const unsigned long long oc = ty * KILN_TILE + x;
            const unsigned long long or0 = tx * KILN_TILE + y;
            if (full) {
                kiln_elem* dst = out + or0 * rows + oc;
#pragma unroll
                for (int j = 0; j < KILN_TILE; j += KILN_ROWS) dst[(unsigned long long)j * rows] = tile[x][y + j];
            } else {
#pragma unroll
                for (int j = 0; j < KILN_TILE; j += KILN_ROWS) {
                    if (or0 + j < cols && oc < rows) out[(or0 + j) * rows + oc] = tile[x][y + j];
                }
            }
            // The next tile overwrites `tile`: every read of this one must be done.
            __syncthreads();
        }
    }
}
#elif ALGO == 1
extern "C" __global__ void KERNEL(const kiln_elem* __restrict__ in, kiln_elem* __restrict__ out,
                                  unsigned long long rows, unsigned long long cols) {
    for (unsigned long long r = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; r < rows;
         r += (unsigned long long)gridDim.y * blockDim.y) {
        for (unsigned long long c = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols;
             c += (unsigned long long)gridDim.x * blockDim.x) {
            out[c * rows + r] = in[r * cols + c];
        }
    }
}
#else
#error "ALGO must be 0 (tiled) or 1 (naive)"
#endif
