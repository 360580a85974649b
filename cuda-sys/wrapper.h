/* The header set cuda-sys binds: the whole CUDA runtime API (it includes driver_types.h, vector_types.h etc.). */
#include <cuda_runtime_api.h>
