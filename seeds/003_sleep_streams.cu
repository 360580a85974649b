// Seed 003 (shared/seeds/003_a5eb0762e7ac500e.txt), 7.7 代码实战: SleepKernel, SleepSingleStream and
// SleepMultiStream as printed, and the main.cpp the seed quotes from.
//
// Filled in where the seed shows only fragments (each marked "filled in" below):
// - main(): the seed prints "device supports overlap", "Input size is 1048576" and one line per function; width
//   1024 (1048576 = 1024 * 1024 elements), blockSize 16 and 4 tasks follow from <<<(64,64), (16,16)>>> and "4 kernel".
//   src_host and tar_host are allocated with cudaMallocHost (main.cpp is not shown; 7.5 recommends it).
// - LOG, CUDA_CHECK and the timer: each function call is timed by events on the default stream around it (the
//   printed "uses 5.000320 ms" is a cudaEventElapsedTime value printed with %f).
// - MAX_ITER: the seed says main.cpp has three MAX_ITER constants to test with but not their values; this program
//   runs all three, 10^4, 10^5 and 10^7 SM cycles, and is a variable instead of a macro so one binary runs them.
// - deviceOverlap: read with cudaDeviceGetAttribute(cudaDevAttrGpuOverlap), since CUDA 13's cudaDeviceProp has no
//   deviceOverlap field any more (see main).
// - The single-stream function is printed as `MySleepSingleStream` but called as `SleepSingleStream`; it is named
//   as called.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cuda_runtime.h>

#define LOG(...) do { printf(__VA_ARGS__); printf("\n"); } while (0)  // filled in

#define CUDA_CHECK(call) do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) { \
        printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, #call); \
        exit(1); \
    } \
} while (0)  // filled in

static int64_t MAX_ITER = 100000;  // filled in: see the header

__global__ void SleepKernel(
    int64_t num_cycles)
{
    int64_t cycles = 0;
    int64_t start = clock64();
    while(cycles < num_cycles) {
        cycles = clock64() - start;
    }
}

void SleepSingleStream(
    float* src_host, float* tar_host, 
    int width, int blockSize, 
    int count) 
{
    int size = width * width * sizeof(float);

    float *src_device;
    float *tar_device;

    CUDA_CHECK(cudaMalloc((void**)&src_device, size));
    CUDA_CHECK(cudaMalloc((void**)&tar_device, size));

    // 创建一个新的CUDA流
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    for (int i = 0; i < count ; i++) {
        for (int j = 0; j < 1; j ++) 
            // 使用创建的流进行异步内存拷贝
            CUDA_CHECK(cudaMemcpyAsync(src_device, src_host, size, cudaMemcpyHostToDevice, stream));

        dim3 dimBlock(blockSize, blockSize);
        dim3 dimGrid(width / blockSize, width / blockSize);

        // 使用创建的流来启动内核
        SleepKernel <<<dimGrid, dimBlock, 0, stream>>> (MAX_ITER);
        // 使用创建的流进行异步内存拷贝
        CUDA_CHECK(cudaMemcpyAsync(src_host, src_device, size, cudaMemcpyDeviceToHost, stream));
    }

    // 同步创建的流
    CUDA_CHECK(cudaStreamSynchronize(stream));

    // 销毁创建的流
    CUDA_CHECK(cudaStreamDestroy(stream));

    cudaFree(tar_device);
    cudaFree(src_device);
}

/* n stream，处理一次memcpy，以及n个kernel */
void SleepMultiStream(
    float* src_host, float* tar_host,
    int width, int blockSize, 
    int count) 
{
    int size = width * width * sizeof(float);

    float *src_device;
    float *tar_device;

    CUDA_CHECK(cudaMalloc((void**)&src_device, size));
    CUDA_CHECK(cudaMalloc((void**)&tar_device, size));


    /* 先把所需要的stream创建出来 */
    cudaStream_t stream[count];
    for (int i = 0; i < count ; i++) {
        CUDA_CHECK(cudaStreamCreate(&stream[i]));
    }

    for (int i = 0; i < count ; i++) {
        for (int j = 0; j < 1; j ++) 
            CUDA_CHECK(cudaMemcpyAsync(src_device, src_host, size, cudaMemcpyHostToDevice, stream[i]));
        dim3 dimBlock(blockSize, blockSize);
        dim3 dimGrid(width / blockSize, width / blockSize);

        /* 这里面我们把参数写全了 <<<dimGrid, dimBlock, sMemSize, stream>>> */
        SleepKernel <<<dimGrid, dimBlock, 0, stream[i]>>> (MAX_ITER);
        CUDA_CHECK(cudaMemcpyAsync(src_host, src_device, size, cudaMemcpyDeviceToHost, stream[i]));
    }


    CUDA_CHECK(cudaDeviceSynchronize());


    cudaFree(tar_device);
    cudaFree(src_device);

    for (int i = 0; i < count ; i++) {
        // 使用完了以后不要忘记释放
        cudaStreamDestroy(stream[i]);
    }

}

// filled in: events on the default stream around one call.
template <typename F>
static float timed_ms(F call) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    call();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms;
}

int main() {
    // Changed: CUDA 13 removed cudaDeviceProp::deviceOverlap, which the seed reads from cudaGetDeviceProperties; the
    // same property is the attribute cudaDevAttrGpuOverlap ("device can possibly copy memory and execute a kernel
    // concurrently").
    int deviceOverlap = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&deviceOverlap, cudaDevAttrGpuOverlap, 0));

    // 需要先确认自己的GPU是否支持overlap计算
    if (!deviceOverlap) {
        LOG("device does not support overlap");
    } else {
        LOG("device supports overlap");
    }

    // filled in: the sizes the printed lines imply.
    int width = 1 << 10;
    int blockSize = 16;
    int taskCnt = 4;
    int size = width * width * sizeof(float);
    LOG("Input size is %d", width * width);

    float* src_host;
    float* tar_host;
    CUDA_CHECK(cudaMallocHost((void**)&src_host, size));
    CUDA_CHECK(cudaMallocHost((void**)&tar_host, size));
    for (int i = 0; i < width * width; i++) {
        src_host[i] = 1.0f;
    }

    const int64_t constants[] = {10000, 100000, 10000000};
    for (int64_t value : constants) {
        MAX_ITER = value;
        LOG("MAX_ITER = %lld", (long long)MAX_ITER);
        int grid = width / blockSize;
        float single = timed_ms([&] { SleepSingleStream(src_host, tar_host, width, blockSize, taskCnt); });
        LOG("sleep <<<(%d,%d), (%d,%d)>>>, %2d stream, %2d memcpy, %2d kernel uses %f ms", grid, grid, blockSize,
            blockSize, 1, 1, taskCnt, single);
        float multi = timed_ms([&] { SleepMultiStream(src_host, tar_host, width, blockSize, taskCnt); });
        LOG("sleep <<<(%d,%d), (%d,%d)>>>, %2d stream, %2d memcpy, %2d kernel uses %f ms", grid, grid, blockSize,
            blockSize, taskCnt, 1, taskCnt, multi);
    }

    CUDA_CHECK(cudaFreeHost(src_host));
    CUDA_CHECK(cudaFreeHost(tar_host));
    return 0;
}
