// Seed 002 (shared/seeds/002_7b52a762cd78229c.txt), cell "2. 多Stream并行", as printed. The cell is complete;
// nothing is filled in.
#include <stdio.h>
#include <cuda_runtime.h>

__global__ void processChunk(float* data, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        for (int i = 0; i < 200; i++) {
            data[idx] = sinf(data[idx]) * cosf(data[idx]);
        }
    }
}

int main() {
    printf("==========================================\n");
    printf("        多Stream并行演示\n");
    printf("==========================================\n\n");
    
    const int numStreams = 4;
    int n = 4 * 1024 * 1024;  // 4M elements
    int chunkSize = n / numStreams;
    size_t totalSize = n * sizeof(float);
    size_t chunkBytes = chunkSize * sizeof(float);
    
    // Pinned Memory
    float *h_data;
    cudaMallocHost(&h_data, totalSize);
    
    float *d_data;
    cudaMalloc(&d_data, totalSize);
    
    for (int i = 0; i < n; i++) h_data[i] = 1.0f;
    
    cudaStream_t streams[numStreams];
    for (int i = 0; i < numStreams; i++) {
        cudaStreamCreate(&streams[i]);
    }
    
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    
    int threadsPerBlock = 256;
    int blocksPerChunk = (chunkSize + threadsPerBlock - 1) / threadsPerBlock;
    
    printf("总数据量: %d 元素\n", n);
    printf("Stream数量: %d\n", numStreams);
    printf("每Stream处理: %d 元素\n\n", chunkSize);
    
    // 单Stream版本
    cudaEventRecord(start);
    cudaMemcpy(d_data, h_data, totalSize, cudaMemcpyHostToDevice);
    processChunk<<<n / threadsPerBlock, threadsPerBlock>>>(d_data, n);
    cudaMemcpy(h_data, d_data, totalSize, cudaMemcpyDeviceToHost);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    
    float time_single;
    cudaEventElapsedTime(&time_single, start, stop);
    printf("单Stream: %.3f ms\n", time_single);
    
    // 多Stream版本
    cudaEventRecord(start);
    for (int i = 0; i < numStreams; i++) {
        int offset = i * chunkSize;
        cudaMemcpyAsync(d_data + offset, h_data + offset, chunkBytes, 
                        cudaMemcpyHostToDevice, streams[i]);
        processChunk<<<blocksPerChunk, threadsPerBlock, 0, streams[i]>>>(
            d_data + offset, chunkSize);
        cudaMemcpyAsync(h_data + offset, d_data + offset, chunkBytes,
                        cudaMemcpyDeviceToHost, streams[i]);
    }
    cudaDeviceSynchronize();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    
    float time_multi;
    cudaEventElapsedTime(&time_multi, start, stop);
    printf("多Stream: %.3f ms\n", time_multi);
    printf("加速比:   %.2fx\n", time_single / time_multi);
    
    // 清理
    for (int i = 0; i < numStreams; i++) {
        cudaStreamDestroy(streams[i]);
    }
    cudaFreeHost(h_data);
    cudaFree(d_data);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    
    return 0;
}
