// ctxbench: what a process start costs on this host, and what other processes' starts cost a running one.
//   ctxbench child [trap]       one process: prints its phases (ms since the parent's spawn stamp in $T0_NS)
//   ctxbench starts N MODE      N children started at once; MODE same (all GPU 0) | spread (child i on GPU i%count)
//   ctxbench serial N           N children one after another
//   ctxbench ops [STARTERS]     small API ops timed in a loop, while STARTERS children start in a loop beside it
//   ctxbench reset              trap, then cudaDeviceReset, then work again: costs of each
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <string>
#include <algorithm>
#include <atomic>
#include <thread>
#include <unistd.h>
#include <sys/wait.h>

static long long now_ns() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
__global__ void noop(int *p) { if (p) *p = 1; }
__global__ void trap_kernel() { __trap(); }

static double ms(long long a, long long b) { return (b - a) / 1e6; }

static int child(bool trap) {
  long long t0 = getenv("T0_NS") ? atoll(getenv("T0_NS")) : now_ns();
  long long t_main = now_ns();
  int n = 0;
  cudaError_t e1 = cudaGetDeviceCount(&n);  // cuInit
  long long t_init = now_ns();
  cudaError_t e2 = cudaFree(0);  // the primary context
  long long t_ctx = now_ns();
  noop<<<1, 1>>>(nullptr);
  cudaError_t e3 = cudaDeviceSynchronize();  // module load and first launch
  long long t_k = now_ns();
  printf("child exec %.1f init %.1f ctx %.1f kernel %.1f end %.1f (codes %d %d %d, %d devices)\n", ms(t0, t_main),
         ms(t_main, t_init), ms(t_init, t_ctx), ms(t_ctx, t_k), ms(t0, t_k), e1, e2, e3, n);
  if (trap) {
    long long a = now_ns();
    trap_kernel<<<1, 1>>>();
    cudaError_t e = cudaDeviceSynchronize();
    long long b = now_ns();
    printf("trap sync %.1f ms -> %s\n", ms(a, b), cudaGetErrorName(e));
  }
  fflush(stdout);
  return 0;
}

static pid_t spawn(const char *self, const char *arg, int device, long long t0) {
  pid_t p = fork();
  if (p == 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", t0);
    setenv("T0_NS", buf, 1);
    if (device >= 0) {
      snprintf(buf, sizeof buf, "%d", device);
      setenv("CUDA_VISIBLE_DEVICES", buf, 1);
    }
    if (getenv("CTX_QUIET")) { FILE *n = freopen("/dev/null", "w", stdout); (void)n; }
    execl(self, self, "child", arg, (char *)nullptr);
    _exit(127);
  }
  return p;
}

static int gpu_count() {
  // Without initialising CUDA in the parent (it would hold contexts): count /dev/nvidiaN.
  int n = 0;
  for (int i = 0; i < 64; ++i) {
    std::string p = "/dev/nvidia" + std::to_string(i);
    if (access(p.c_str(), F_OK) == 0) n++;
  }
  return n;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  if (mode == "child") return child(argc > 2 && std::string(argv[2]) == "trap");
  if (mode == "starts" || mode == "serial") {
    int n = atoi(argv[2]);
    std::string how = argc > 3 ? argv[3] : "same";
    int g = gpu_count();
    long long t0 = now_ns();
    std::vector<pid_t> ps;
    for (int i = 0; i < n; ++i) {
      int dev = how == "spread" ? i % g : (how == "all" ? -1 : 0);
      pid_t p = spawn(argv[0], "", dev, mode == "serial" ? now_ns() : t0);
      if (mode == "serial") waitpid(p, nullptr, 0); else ps.push_back(p);
    }
    for (pid_t p : ps) waitpid(p, nullptr, 0);
    printf("%s %d %s: %.1f ms in all (%d GPUs)\n", mode.c_str(), n, how.c_str(), ms(t0, now_ns()), g);
    return 0;
  }
  if (mode == "ops") {
    setenv("CTX_QUIET", "1", 1);
    int starters = argc > 2 ? atoi(argv[2]) : 0;
    cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    cudaFree(0);
    std::atomic<bool> stop{false};
    std::thread bg([&] {
      while (!stop && starters > 0) {
        std::vector<pid_t> ps;
        for (int i = 0; i < starters; ++i) ps.push_back(spawn(argv[0], "", 0, now_ns()));
        for (pid_t p : ps) waitpid(p, nullptr, 0);
      }
    });
    struct Op { const char *name; std::vector<double> t; };
    std::vector<Op> ops = {{"mallochost64k+free"}, {"hostalloc64k+free"}, {"mallocmanaged64k+free"}, {"malloc64k+free"},
                           {"malloc256m+free"}, {"stream+destroy"}, {"event+destroy"}, {"launch+sync"}, {"memcpy4k-h2d"},
                           {"graph-instantiate+launch"}, {"memgetinfo"}, {"getdeviceproperties"},
                           {"devicegetlimit"}, {"devicesync"}, {"streamiscapturing"}};
    int *h4 = (int *)malloc(4096);
    int *d4; cudaMalloc(&d4, 4096);
    for (int it = 0; it < 40; ++it) {
      for (auto &op : ops) {
        long long a = now_ns();
        std::string n = op.name;
        void *p = nullptr;
        if (n == "mallochost64k+free") { cudaMallocHost(&p, 65536); cudaFreeHost(p); }
        else if (n == "hostalloc64k+free") { cudaHostAlloc(&p, 65536, 0); cudaFreeHost(p); }
        else if (n == "mallocmanaged64k+free") { cudaMallocManaged(&p, 65536); cudaFree(p); }
        else if (n == "malloc64k+free") { cudaMalloc(&p, 65536); cudaFree(p); }
        else if (n == "malloc256m+free") { cudaMalloc(&p, 256 << 20); cudaFree(p); }
        else if (n == "stream+destroy") { cudaStream_t s; cudaStreamCreate(&s); cudaStreamDestroy(s); }
        else if (n == "event+destroy") { cudaEvent_t e; cudaEventCreate(&e); cudaEventDestroy(e); }
        else if (n == "launch+sync") { noop<<<1, 1>>>(d4); cudaDeviceSynchronize(); }
        else if (n == "memcpy4k-h2d") { cudaMemcpy(d4, h4, 4096, cudaMemcpyHostToDevice); }
        else if (n == "graph-instantiate+launch") {
          cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
          cudaGraph_t g; cudaGraphExec_t x;
          cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); noop<<<1, 1, 0, s>>>(d4); cudaStreamEndCapture(s, &g);
          cudaGraphInstantiate(&x, g, 0); cudaGraphLaunch(x, s); cudaStreamSynchronize(s);
          cudaGraphExecDestroy(x); cudaGraphDestroy(g); cudaStreamDestroy(s);
        }
        else if (n == "memgetinfo") { size_t f, t; cudaMemGetInfo(&f, &t); }
        else if (n == "getdeviceproperties") { cudaDeviceProp pr; cudaGetDeviceProperties(&pr, 0); }
        else if (n == "devicegetlimit") { size_t v; cudaDeviceGetLimit(&v, cudaLimitStackSize); }
        else if (n == "devicesync") { cudaDeviceSynchronize(); }
        else if (n == "streamiscapturing") { cudaStreamCaptureStatus st; cudaStreamIsCapturing(cudaStreamLegacy, &st); }
        op.t.push_back(ms(a, now_ns()));
      }
    }
    stop = true;
    bg.join();
    FILE *o = stderr;
    for (auto &op : ops) {
      std::sort(op.t.begin(), op.t.end());
      fprintf(o, "ops%s starters=%d %-26s median %.3f ms  p90 %.3f  max %.3f\n", getenv("OPS_TAG") ? getenv("OPS_TAG") : "", starters, op.name, op.t[op.t.size() / 2],
              op.t[op.t.size() * 9 / 10], op.t.back());
    }
    return 0;
  }
  if (mode == "opsall") {
    int n = atoi(argv[2]);
    int g = gpu_count();
    std::vector<pid_t> ps;
    for (int i = 0; i < n; ++i) {
      pid_t p = fork();
      if (p == 0) {
        setenv("CUDA_VISIBLE_DEVICES", std::to_string(i % g).c_str(), 0);  // a given one wins
        setenv("OPS_TAG", std::to_string(i).c_str(), 1);
        execl(argv[0], argv[0], "ops", "0", (char *)nullptr);
        _exit(127);
      }
      ps.push_back(p);
    }
    for (pid_t p : ps) waitpid(p, nullptr, 0);
    return 0;
  }
  if (mode == "reset") {
    long long a = now_ns();
    cudaFree(0);
    long long b = now_ns();
    trap_kernel<<<1, 1>>>();
    cudaError_t e = cudaDeviceSynchronize();
    long long c = now_ns();
    cudaError_t r = cudaDeviceReset();
    long long d = now_ns();
    cudaError_t f = cudaFree(0);
    long long g = now_ns();
    int *p; cudaMalloc(&p, 4); noop<<<1, 1>>>(p);
    cudaError_t k = cudaDeviceSynchronize();
    long long h = now_ns();
    printf("reset: ctx %.1f, trap+sync %.1f (%s), reset %.1f (%s), new ctx %.1f (%s), kernel after %.1f (%s)\n", ms(a, b),
           ms(b, c), cudaGetErrorName(e), ms(c, d), cudaGetErrorName(r), ms(d, g), cudaGetErrorName(f), ms(g, h),
           cudaGetErrorName(k));
    return 0;
  }
  return 2;
}
