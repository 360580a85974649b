// probe9: session 9's questions, each answered by what the driver returns.
//   probe9 attr               cudaDevAttrUnifiedFunctionPointers of device 0
//   probe9 unified FILE SYM.. cudaLibraryLoadFromFile(FILE), cudaLibraryGetUnifiedFunction for each SYM
//   probe9 pool-same          export a posix-fd pool and import it in the same process (the fd and a dup of it)
//   probe9 pool-fork          a forked child (no CUDA before the fork) gets the fd over SCM_RIGHTS and imports it
//   probe9 trap-alone N       N children one after another, each traps once: the trap's synchronize
//   probe9 trap-beside N S    the same, with S other children making contexts in a loop beside each trap
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <signal.h>
#include <vector>
#include <string>
#include <cstdint>

static long long now_ns() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
__global__ void trap_kernel() { __trap(); }
__global__ void noop() {}
#define N(e) cudaGetErrorName(e)

static cudaMemPool_t make_pool() {
  cudaMemPoolProps p = {};
  p.allocType = cudaMemAllocationTypePinned;
  p.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  p.location.type = cudaMemLocationTypeDevice;
  p.location.id = 0;
  cudaMemPool_t pool = nullptr;
  cudaError_t e = cudaMemPoolCreate(&pool, &p);
  printf("cudaMemPoolCreate -> %s\n", N(e));
  return pool;
}

static int send_fd(int sock, int fd) {
  char c = 'x'; iovec io = {&c, 1};
  char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr m = {}; m.msg_iov = &io; m.msg_iovlen = 1; m.msg_control = buf; m.msg_controllen = sizeof buf;
  cmsghdr *h = CMSG_FIRSTHDR(&m); h->cmsg_level = SOL_SOCKET; h->cmsg_type = SCM_RIGHTS; h->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(h), &fd, sizeof(int));
  return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}
static int recv_fd(int sock) {
  char c; iovec io = {&c, 1};
  char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr m = {}; m.msg_iov = &io; m.msg_iovlen = 1; m.msg_control = buf; m.msg_controllen = sizeof buf;
  if (recvmsg(sock, &m, 0) != 1) return -1;
  cmsghdr *h = CMSG_FIRSTHDR(&m); if (!h) return -1;
  int fd; memcpy(&fd, CMSG_DATA(h), sizeof(int)); return fd;
}

static void import_and_use(int fd, const char *who) {
  cudaMemPool_t imp = nullptr;
  cudaError_t e = cudaMemPoolImportFromShareableHandle(&imp, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0);
  printf("%s: cudaMemPoolImportFromShareableHandle(fd %d) -> %s, pool %s\n", who, fd, N(e), imp ? "set" : "null");
  if (e == cudaSuccess) {
    cudaMemAccessFlags f; cudaMemLocation l = {}; l.type = cudaMemLocationTypeDevice; l.id = 0;
    cudaError_t g = cudaMemPoolGetAccess(&f, imp, &l);
    printf("%s: cudaMemPoolGetAccess(imported) -> %s, flags %d\n", who, N(g), (int)f);
    printf("%s: cudaMemPoolDestroy(imported) -> %s\n", who, N(cudaMemPoolDestroy(imp)));
  }
}

static int trap_child() {
  cudaFree(0); noop<<<1,1>>>(); cudaDeviceSynchronize();
  long long a = now_ns(); trap_kernel<<<1, 1>>>(); cudaError_t e = cudaDeviceSynchronize(); long long b = now_ns();
  printf("trap sync %.1f ms -> %s\n", (b - a) / 1e6, N(e)); fflush(stdout); return 0;
}
static void starter_loop() { for (;;) { pid_t p = fork(); if (p == 0) { cudaFree(0); _exit(0); } int s; waitpid(p, &s, 0); } }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  if (mode == "attr") {
    int v = -1; cudaError_t e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)129, 0);
    cudaDeviceProp pr; cudaGetDeviceProperties(&pr, 0); printf("cudaDeviceProp::unifiedFunctionPointers %d\n", pr.unifiedFunctionPointers);
    printf("attribute 129 (CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS) -> %s, %d\n", N(e), v);
    int h = -1; e = cudaDeviceGetAttribute(&h, cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0);
    printf("cudaDevAttrPageableMemoryAccessUsesHostPageTables -> %s, %d\n", N(e), h);
    e = cudaDeviceGetAttribute(&h, cudaDevAttrPageableMemoryAccess, 0);
    printf("cudaDevAttrPageableMemoryAccess -> %s, %d\n", N(e), h);
  } else if (mode == "unified") {
    cudaLibrary_t lib = nullptr;
    cudaError_t e = cudaLibraryLoadFromFile(&lib, argv[2], nullptr, nullptr, 0, nullptr, nullptr, 0);
    printf("cudaLibraryLoadFromFile(%s) -> %s\n", argv[2], N(e));
    for (int i = 3; i < argc && e == cudaSuccess; i++) {
      void *f = nullptr; cudaError_t u = cudaLibraryGetUnifiedFunction(&f, lib, argv[i]);
      printf("cudaLibraryGetUnifiedFunction(%s) -> %s, %s\n", argv[i], N(u), f ? "set" : "null");
    }
  } else if (mode == "pool-same") {
    cudaMemPool_t pool = make_pool();
    int fd = -1; cudaError_t e = cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0);
    printf("export -> %s, fd %d\n", N(e), fd);
    import_and_use(fd, "same process");
    int d = dup(fd); import_and_use(d, "same process, dup");
  } else if (mode == "pool-fork") {
    int sv[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    pid_t p = fork();
    if (p == 0) {
      close(sv[0]); int fd = recv_fd(sv[1]); printf("child: received fd %d\n", fd); fflush(stdout);
      import_and_use(fd, "child"); fflush(stdout);
      char ok = 'k'; write(sv[1], &ok, 1); _exit(0);
    }
    close(sv[1]);
    cudaMemPool_t pool = make_pool();
    int fd = -1; cudaError_t e = cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0);
    printf("parent: export -> %s, fd %d\n", N(e), fd); fflush(stdout);
    send_fd(sv[0], fd); char ok; read(sv[0], &ok, 1); int s; waitpid(p, &s, 0);
    printf("parent: child exit %d\n", s);
  } else if (mode == "trap-alone" || mode == "trap-beside") {
    int n = atoi(argv[2]); int starters = mode == "trap-beside" ? atoi(argv[3]) : 0;
    for (int i = 0; i < n; i++) {
      std::vector<pid_t> bg;
      for (int s = 0; s < starters; s++) { pid_t q = fork(); if (q == 0) { starter_loop(); } bg.push_back(q); }
      if (starters) usleep(300000);
      fflush(stdout);
      pid_t c = fork(); if (c == 0) _exit(trap_child());
      int s; waitpid(c, &s, 0);
      for (pid_t q : bg) kill(q, SIGKILL);
      for (pid_t q : bg) waitpid(q, &s, 0);
    }
  }
  return 0;
}
