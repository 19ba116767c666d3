// sequence: dst[i] = start + i * step.
// One pass, one store per element: memory-bound at 4 B (f32) written per element.
// The multiply and add are never fused, so every backend rounds alike.
extern "C" __global__ void KERNEL(T* __restrict__ dst, T start, T step, unsigned long long n) {
    KILN_FOR_EACH(i, n) {
        dst[i] = kiln_add_rn(start, kiln_mul_rn((T)i, step));
    }
}
