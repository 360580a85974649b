// Seed 002 (shared/seeds/002_7b52a762cd78229c.txt), cell "1. CUDA Stream基础", as printed. The cell is complete;
// nothing is filled in. (Its `%%cuda` cell magic is the notebook's, not code.)
#include <stdio.h>
#include <cuda_runtime.h>

__global__ void simpleKernel(float* data, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        for (int i = 0; i < 100; i++) {
            data[idx] = sinf(data[idx]) * cosf(data[idx]);
        }
    }
}

int main() {
    printf("==========================================\n");
    printf("      CUDA Stream 基础演示\n");
    printf("==========================================\n\n");
    
    int n = 1024 * 1024;
    size_t size = n * sizeof(float);
    
    // 分配Pinned Memory（异步拷贝需要）
    float *h_data;
    cudaMallocHost(&h_data, size);  // Pinned Memory
    
    float *d_data;
    cudaMalloc(&d_data, size);
    
    // 初始化
    for (int i = 0; i < n; i++) h_data[i] = 1.0f;
    
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    
    int threadsPerBlock = 256;
    int numBlocks = (n + threadsPerBlock - 1) / threadsPerBlock;
    
    // 同步版本
    cudaEventRecord(start);
    cudaMemcpy(d_data, h_data, size, cudaMemcpyHostToDevice);
    simpleKernel<<<numBlocks, threadsPerBlock>>>(d_data, n);
    cudaMemcpy(h_data, d_data, size, cudaMemcpyDeviceToHost);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    
    float time_sync;
    cudaEventElapsedTime(&time_sync, start, stop);
    printf("同步版本: %.3f ms\n", time_sync);
    
    // 异步版本（使用Stream）
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    
    cudaEventRecord(start);
    cudaMemcpyAsync(d_data, h_data, size, cudaMemcpyHostToDevice, stream);
    simpleKernel<<<numBlocks, threadsPerBlock, 0, stream>>>(d_data, n);
    cudaMemcpyAsync(h_data, d_data, size, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    
    float time_async;
    cudaEventElapsedTime(&time_async, start, stop);
    printf("异步版本: %.3f ms\n", time_async);
    
    printf("\n说明: 单Stream情况下时间相近，\n");
    printf("      异步的优势在于CPU可以同时做其他工作\n");
    
    cudaStreamDestroy(stream);
    cudaFreeHost(h_data);
    cudaFree(d_data);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    
    return 0;
}
