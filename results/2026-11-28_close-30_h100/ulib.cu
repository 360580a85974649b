extern "C" __device__ int ufn(int x) { return x + 1; }
extern "C" __device__ __noinline__ int ufn2(int x) { return x * 2; }
__device__ int (*ufp)(int) = ufn;
extern "C" __global__ void ukernel(int *p, int (*f)(int)) { *p = f(*p); }
extern "C" __host__ __device__ int hd(int x) { return x - 1; }
