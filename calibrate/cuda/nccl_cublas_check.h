// NCCL and cuBLAS status checks shared by the NCCL benchmark and the
// reference step: print where and why, exit 3 (an environment failure, as
// `parasim calibrate` reports it).
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <nccl.h>

#define NCCL_CHECK(expr)                                                                             \
  do {                                                                                               \
    ncclResult_t r_ = (expr);                                                                        \
    if (r_ != ncclSuccess) {                                                                         \
      std::fprintf(stderr, "error: %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, ncclGetErrorString(r_)); \
      std::exit(3);                                                                                  \
    }                                                                                                \
  } while (0)

#define CUBLAS_CHECK(expr)                                                                      \
  do {                                                                                          \
    cublasStatus_t st_ = (expr);                                                                \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      std::fprintf(stderr, "error: %s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #expr, \
                   static_cast<int>(st_));                                                      \
      std::exit(3);                                                                             \
    }                                                                                           \
  } while (0)
