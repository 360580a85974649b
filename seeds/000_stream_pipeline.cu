// Seed 000 (shared/seeds/000_ea363e67078c8e5d.txt), 第三幕 stream_pipeline.cu, as printed.
//
// Filled in where the seed elides code (each marked "filled in" below):
// - the vecAdd kernel body and the CHECK_CUDA macro ("// ... vecAdd Kernel 和 CHECK_CUDA 宏 ...");
// - "// 验证..." (verification): every h_C[i] must be 3.0f; the program prints the count of wrong elements;
// - "// ... 销毁所有 streams, events, 释放 host 和 device 内存 ..." (cleanup).
// Nothing else is changed: the sizes, the streams created with cudaStreamCreate (blocking), the start and stop
// events on the default (legacy) stream, and the single cudaStreamSynchronize(stream_d2h) are the seed's.
#include <iostream>
#include <vector>
#include <cstdlib>

// filled in: one element per thread, as the launch below (blocksPerGrid covering CHUNK_SIZE) implies.
__global__ void vecAdd(const float* A, const float* B, float* C, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        C[i] = A[i] + B[i];
    }
}

// filled in: report the failing call and stop.
#define CHECK_CUDA(call) { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) { \
        std::cerr << "CUDA error " << cudaGetErrorName(err_) << " at " << __FILE__ << ":" << __LINE__ << ": " \
                  << #call << std::endl; \
        std::exit(1); \
    } \
}

int main() {
    // --- 1. 初始化 ---
    const int N = 1024 * 1024 * 32; // 一个更大的向量
    const int N_CHUNKS = 4; // 分成 4 块
    const int CHUNK_SIZE = N / N_CHUNKS;
    const size_t CHUNK_BYTES = CHUNK_SIZE * sizeof(float);

    // *** 使用页锁定内存 (Pinned Memory) ***
    float *h_A, *h_B, *h_C;
    CHECK_CUDA(cudaMallocHost((void**)&h_A, N * sizeof(float)));
    CHECK_CUDA(cudaMallocHost((void**)&h_B, N * sizeof(float)));
    CHECK_CUDA(cudaMallocHost((void**)&h_C, N * sizeof(float)));
    for(int i=0; i<N; ++i) { h_A[i] = 1.0f; h_B[i] = 2.0f; }

    // 在 GPU 上为整个向量分配内存
    float *d_A, *d_B, *d_C;
    CHECK_CUDA(cudaMalloc((void**)&d_A, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void**)&d_B, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void**)&d_C, N * sizeof(float)));

    // --- 2. 创建 Streams 和 Events ---
    cudaStream_t stream_h2d, stream_compute, stream_d2h;
    CHECK_CUDA(cudaStreamCreate(&stream_h2d));
    CHECK_CUDA(cudaStreamCreate(&stream_compute));
    CHECK_CUDA(cudaStreamCreate(&stream_d2h));

    // 我们需要 events 来建立 stream 间的依赖
    std::vector<cudaEvent_t> h2d_done_events(N_CHUNKS);
    std::vector<cudaEvent_t> compute_done_events(N_CHUNKS);
    for(int i=0; i<N_CHUNKS; ++i) {
        CHECK_CUDA(cudaEventCreate(&h2d_done_events[i]));
        CHECK_CUDA(cudaEventCreate(&compute_done_events[i]));
    }

    // --- 3. 启动流水线 ---
    // 精确计时
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_CUDA(cudaEventRecord(start));

    for (int i = 0; i < N_CHUNKS; ++i) {
        int offset = i * CHUNK_SIZE;

        // 1. 提交 H2D 拷贝任务到 stream_h2d
        CHECK_CUDA(cudaMemcpyAsync(d_A + offset, h_A + offset, CHUNK_BYTES, cudaMemcpyHostToDevice, stream_h2d));
        CHECK_CUDA(cudaMemcpyAsync(d_B + offset, h_B + offset, CHUNK_BYTES, cudaMemcpyHostToDevice, stream_h2d));
        // 在 H2D stream 中记录一个事件，表示这块数据的拷贝完成了
        CHECK_CUDA(cudaEventRecord(h2d_done_events[i], stream_h2d));

        // 2. 提交计算任务到 stream_compute
        // 计算 stream 必须等待相应的 H2D 拷贝完成
        CHECK_CUDA(cudaStreamWaitEvent(stream_compute, h2d_done_events[i], 0));
        int threadsPerBlock = 256;
        int blocksPerGrid = (CHUNK_SIZE + threadsPerBlock - 1) / threadsPerBlock;
        vecAdd<<<blocksPerGrid, threadsPerBlock, 0, stream_compute>>>(d_A + offset, d_B + offset, d_C + offset, CHUNK_SIZE);
        // 在 compute stream 中记录一个事件，表示这块数据的计算完成了
        CHECK_CUDA(cudaEventRecord(compute_done_events[i], stream_compute));

        // 3. 提交 D2H 拷贝任务到 stream_d2h
        // D2H stream 必须等待相应的计算完成
        CHECK_CUDA(cudaStreamWaitEvent(stream_d2h, compute_done_events[i], 0));
        CHECK_CUDA(cudaMemcpyAsync(h_C + offset, d_C + offset, CHUNK_BYTES, cudaMemcpyDeviceToHost, stream_d2h));
    }

    // --- 4. 同步与计时 ---
    // 我们只需要等待最后一个任务（D2H stream的最后一个拷贝）完成即可
    CHECK_CUDA(cudaStreamSynchronize(stream_d2h));

    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float milliseconds = 0;
    CHECK_CUDA(cudaEventElapsedTime(&milliseconds, start, stop));
    std::cout << "Pipelined execution time: " << milliseconds << " ms" << std::endl;

    // 验证... (filled in)
    long long wrong = 0;
    for (int i = 0; i < N; ++i) {
        if (h_C[i] != 3.0f) {
            ++wrong;
        }
    }
    std::cout << "Verification: " << wrong << " of " << N << " elements wrong" << std::endl;

    // --- 5. 清理 ---
    // ... 销毁所有 streams, events, 释放 host 和 device 内存 ... (filled in)
    CHECK_CUDA(cudaStreamDestroy(stream_h2d));
    CHECK_CUDA(cudaStreamDestroy(stream_compute));
    CHECK_CUDA(cudaStreamDestroy(stream_d2h));
    for (int i = 0; i < N_CHUNKS; ++i) {
        CHECK_CUDA(cudaEventDestroy(h2d_done_events[i]));
        CHECK_CUDA(cudaEventDestroy(compute_done_events[i]));
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUDA(cudaFreeHost(h_A));
    CHECK_CUDA(cudaFreeHost(h_B));
    CHECK_CUDA(cudaFreeHost(h_C));
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_B));
    CHECK_CUDA(cudaFree(d_C));
    return wrong == 0 ? 0 : 1;
}
