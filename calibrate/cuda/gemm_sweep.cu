// GEMM sweep: bf16 inputs and output, fp32 accumulation (cublasGemmEx,
// CUBLAS_COMPUTE_32F), over the linear layers of Llama-2-7B and -70B for
// several token counts and tensor-parallel splits, in the three layouts a
// training step runs (forward Y = X·Wᵀ, data grad dX = dY·W, weight grad
// dW = dYᵀ·X), plus square sizes. Prints JSON: one row per GEMM with m, n, k
// (C is m×n, reduction over k), dtype, median seconds and TFLOP/s.
//
// --dtype fp8: Transformer Engine's Hopper recipe instead — E4M3 operands,
// per-tensor scales (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER, here 1.0: the
// data lie in [-1, 1]), fp32 accumulation, bf16 output, through
// cublasLtMatmul. Hopper's FP8 tensor-core GEMMs take only the "TN" layout
// (cuBLAS docs, cublasLtMatmul, FP8 restrictions: A transposed, B not, i.e.
// both operands K-major). TE therefore runs every FP8 GEMM as TN: dgrad
// dX = dY·W uses the transposed FP8 copy of W, wgrad dW = dYᵀ·X the
// transposed copies of dY and X, made by its fused cast-transpose kernel
// (NVIDIA/TransformerEngine transformer_engine/pytorch/module/linear.py,
// fp8_cast_transpose_fused; common/gemm/cublaslt_gemm.cu). This program does
// the same: every pass runs TN on that pass's (m, n, k), and the cast-
// transpose is not timed (the cost model prices it as its own memory-bound
// kernel, DeviceRates::quantize_bytes). Like TE (module/base.py
// _2X_ACC_FPROP = False, _2X_ACC_DGRAD = _2X_ACC_WGRAD = True; cublaslt_gemm.cu
// sets CUBLASLT_MATMUL_DESC_FAST_ACCUM = !use_split_accumulator), forward and
// square GEMMs use fast accumulation, dgrad and wgrad the split accumulator.
//
// Timing: CUDA events around the replay of a CUDA graph holding a batch of
// back-to-back GEMMs (batch >= ~1 ms, so event resolution and the host's
// cuBLAS call cost drop out), after warm-up; median over repeats. Inputs
// rotate over enough buffer sets (>= 256 MiB together) that operands do not
// stay in the 50 MB L2 between calls. Data are non-zero pseudo-random bf16.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 gemm_sweep.cu -lcublasLt -lcublas -o gemm_sweep
// Run:   ./gemm_sweep [-o gemm_sweep.json] [--quick] [--min-time-ms 100] [--preheat-s 0]
//                     [--dtype bf16|fp8]
// FP8 needs sm_89 or later (Ada, Hopper): on an older GPU --dtype fp8 says so
// and exits 0 without writing a file, so `parasim calibrate run` goes on and
// `calibrate fit` simply finds no FP8 sweep.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <vector>

#include "bench_common.h"

#define BENCH_CUBLAS_CHECK(expr)                                                  \
  do {                                                                            \
    cublasStatus_t st_ = (expr);                                                  \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                           \
      std::fprintf(stderr, "error: %s:%d: %s: cublas status %d\n", __FILE__,      \
                   __LINE__, #expr, static_cast<int>(st_));                       \
      std::exit(3);                                                               \
    }                                                                             \
  } while (0)

namespace {

// Row-major problem C[m×n] = op(A)·op(B); mapped onto column-major cuBLAS.
enum class Layout { kFwd, kDgrad, kWgrad, kSquare };

const char* LayoutName(Layout l) {
  switch (l) {
    case Layout::kFwd: return "fwd";
    case Layout::kDgrad: return "dgrad";
    case Layout::kWgrad: return "wgrad";
    case Layout::kSquare: return "square";
  }
  return "?";
}

struct Problem {
  std::string model, layer;  // "" for squares
  Layout layout;
  int tokens = 0, tp = 1;
  int64_t m = 0, n = 0, k = 0;
};

// A cuBLAS call for a row-major product, with the storage PyTorch uses:
//  fwd   Y[M×N]  = X[M×K]·W[N×K]ᵀ   -> gemm(T,N, n=N, m=M, k=K)  ("TN")
//  dgrad dX[M×K] = dY[M×N]·W[N×K]   -> gemm(N,N, n=K, m=M, k=N)  ("NN")
//  wgrad dW[N×K] = dY[M×N]ᵀ·X[M×K]  -> gemm(N,T, n=K, m=N, k=M)  ("NT")
// In every case the problem is C[m×n] = A·B with A given as `a` and B as `b`,
// where for fwd a=X (m×k), b=W (n×k); dgrad a=dY (m×k), b=W (k×n);
// wgrad a=dY (k×m), b=X (k×n).
struct GemmCall {
  cublasOperation_t op_first, op_second;  // ops on (b, a) as cuBLAS sees them
  int ld_b, ld_a, ld_c;
};

GemmCall CallFor(Layout l, int64_t m, int64_t n, int64_t k) {
  switch (l) {
    case Layout::kFwd:
    case Layout::kSquare:
      return {CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(k), static_cast<int>(k), static_cast<int>(n)};
    case Layout::kDgrad:
      return {CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(k), static_cast<int>(n)};
    case Layout::kWgrad:
      return {CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(n), static_cast<int>(m), static_cast<int>(n)};
  }
  return {};
}

void RunGemm(cublasHandle_t h, const Problem& p, const __nv_bfloat16* a, const __nv_bfloat16* b,
             __nv_bfloat16* c) {
  const GemmCall g = CallFor(p.layout, p.m, p.n, p.k);
  const float alpha = 1.0f, beta = 0.0f;
  BENCH_CUBLAS_CHECK(cublasGemmEx(h, g.op_first, g.op_second, static_cast<int>(p.n),
                                  static_cast<int>(p.m), static_cast<int>(p.k), &alpha, b,
                                  CUDA_R_16BF, g.ld_b, a, CUDA_R_16BF, g.ld_a, &beta, c,
                                  CUDA_R_16BF, g.ld_c, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

float Bf16ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

// ---- FP8 (E4M3) through cuBLASLt -------------------------------------------

enum class Dtype { kBf16, kFp8 };

// Non-zero pseudo-random E4M3 values in [-1, 1] (the values of bench::FillBf16).
__global__ void FillFp8(__nv_fp8_e4m3* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = __nv_fp8_e4m3(bench::HashedValue(i, seed));
}

// One problem's cuBLASLt descriptors and the algorithm the heuristic picks.
// cuBLAS is column-major: the row-major C[m×n] = a[m×k]·b[n×k]ᵀ is the
// column-major Cᵀ[n×m] = op(b)·a, i.e. its A is b (k×n, ld k, transposed)
// and its B is a (k×m, ld k, not transposed): the TN layout FP8 requires.
struct Fp8Gemm {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool fast_accumulate = true;
};

bool UsesFastAccumulate(Layout l) { return l == Layout::kFwd || l == Layout::kSquare; }

Fp8Gemm MakeFp8Gemm(cublasLtHandle_t lt, const Problem& p, const float* scales, size_t workspace_bytes) {
  Fp8Gemm g;
  g.fast_accumulate = UsesFastAccumulate(p.layout);
  BENCH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  BENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  BENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  // Per-tensor dequantization scales, device pointers as TE passes them
  // (its scale_inv); cuBLAS's A is our b.
  const float* scale_a = scales;
  const float* scale_b = scales + 1;
  BENCH_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a, sizeof scale_a));
  BENCH_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b, sizeof scale_b));
  const int8_t fast = g.fast_accumulate ? 1 : 0;
  BENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  const uint64_t m = static_cast<uint64_t>(p.m), n = static_cast<uint64_t>(p.n), k = static_cast<uint64_t>(p.k);
  BENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_8F_E4M3, k, n, static_cast<int64_t>(k)));
  BENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.b, CUDA_R_8F_E4M3, k, m, static_cast<int64_t>(k)));
  BENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.c, CUDA_R_16BF, n, m, static_cast<int64_t>(n)));
  cublasLtMatmulPreference_t pref;
  BENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  BENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  BENCH_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.a, g.b, g.c, g.c, pref, 1, &result, &found));
  BENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  if (found == 0) {
    std::fprintf(stderr, "error: cuBLASLt has no FP8 algorithm for m=%lld n=%lld k=%lld (needs sm_89+)\n",
                 static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k));
    std::exit(3);
  }
  g.algo = result.algo;
  return g;
}

void DestroyFp8Gemm(Fp8Gemm& g) {
  cublasLtMatrixLayoutDestroy(g.c);
  cublasLtMatrixLayoutDestroy(g.b);
  cublasLtMatrixLayoutDestroy(g.a);
  cublasLtMatmulDescDestroy(g.op);
  g = Fp8Gemm{};
}

// a: m×k row-major E4M3, b: n×k row-major E4M3, c: m×n row-major bf16.
void RunFp8(cublasLtHandle_t lt, const Fp8Gemm& g, const void* a, const void* b, void* c, void* workspace,
            size_t workspace_bytes, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  BENCH_CUBLAS_CHECK(cublasLtMatmul(lt, g.op, &alpha, b, g.a, a, g.b, &beta, c, g.c, c, g.c, &g.algo, workspace,
                                    workspace_bytes, stream));
}

// Relative error ‖C − A·B‖ / ‖A·B‖ of an m×n result `c` (row-major bf16)
// against the float64 product of the accessors a(i, kk) and b(kk, j).
template <class A, class B>
double RelativeError(const std::vector<__nv_bfloat16>& c, int64_t m, int64_t n, int64_t k, A a, B b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t kk = 0; kk < k; ++kk) ref += static_cast<double>(a(i, kk)) * b(kk, j);
      const double got = Bf16ToFloat(c[i * n + j]);
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  return std::sqrt(num / den);
}

// The FP8 path against a float64 CPU product of the same E4M3 values, with
// fast accumulation (forward) and the split accumulator (dgrad/wgrad).
double CheckFp8(cublasLtHandle_t lt, const float* scales, void* workspace, size_t workspace_bytes,
                cudaStream_t stream) {
  const int64_t m = 96, n = 80, k = 64;
  double worst = 0.0;
  for (Layout l : {Layout::kFwd, Layout::kDgrad}) {
    std::vector<__nv_fp8_e4m3> ha(m * k), hb(n * k);
    std::vector<__nv_bfloat16> hc(m * n);
    __nv_fp8_e4m3 *da, *db;
    __nv_bfloat16* dc;
    BENCH_CUDA_CHECK(cudaMalloc(&da, ha.size()));
    BENCH_CUDA_CHECK(cudaMalloc(&db, hb.size()));
    BENCH_CUDA_CHECK(cudaMalloc(&dc, hc.size() * 2));
    FillFp8<<<64, 256, 0, stream>>>(da, ha.size(), 11u + static_cast<unsigned>(l));
    FillFp8<<<64, 256, 0, stream>>>(db, hb.size(), 29u + static_cast<unsigned>(l));
    BENCH_LAUNCH_CHECK();
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    BENCH_CUDA_CHECK(cudaMemcpy(ha.data(), da, ha.size(), cudaMemcpyDeviceToHost));
    BENCH_CUDA_CHECK(cudaMemcpy(hb.data(), db, hb.size(), cudaMemcpyDeviceToHost));
    Problem p{"", "check", l, 0, 1, m, n, k};
    Fp8Gemm g = MakeFp8Gemm(lt, p, scales, workspace_bytes);
    RunFp8(lt, g, da, db, dc, workspace, workspace_bytes, stream);
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    DestroyFp8Gemm(g);
    BENCH_CUDA_CHECK(cudaMemcpy(hc.data(), dc, hc.size() * 2, cudaMemcpyDeviceToHost));
    worst = std::max(worst, RelativeError(
                                hc, m, n, k, [&](int64_t i, int64_t kk) { return static_cast<float>(ha[i * k + kk]); },
                                [&](int64_t kk, int64_t j) { return static_cast<float>(hb[j * k + kk]); }));
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
  }
  return worst;
}

// Checks the three layouts against a float64 CPU product on a small problem
// (catches a wrong transpose/leading-dimension mapping). Returns max rel error.
double CheckLayouts(cublasHandle_t h) {
  const int64_t m = 96, n = 80, k = 64;
  double worst = 0.0;
  for (Layout l : {Layout::kFwd, Layout::kDgrad, Layout::kWgrad}) {
    std::vector<__nv_bfloat16> ha(m * k), hb(k * n), hc(m * n);
    __nv_bfloat16 *da, *db, *dc;
    BENCH_CUDA_CHECK(cudaMalloc(&da, ha.size() * 2));
    BENCH_CUDA_CHECK(cudaMalloc(&db, hb.size() * 2));
    BENCH_CUDA_CHECK(cudaMalloc(&dc, hc.size() * 2));
    bench::FillBf16<<<64, 256>>>(da, ha.size(), 11u + static_cast<unsigned>(l));
    bench::FillBf16<<<64, 256>>>(db, hb.size(), 29u + static_cast<unsigned>(l));
    BENCH_LAUNCH_CHECK();
    BENCH_CUDA_CHECK(cudaMemcpy(ha.data(), da, ha.size() * 2, cudaMemcpyDeviceToHost));
    BENCH_CUDA_CHECK(cudaMemcpy(hb.data(), db, hb.size() * 2, cudaMemcpyDeviceToHost));
    Problem p{"", "check", l, 0, 1, m, n, k};
    RunGemm(h, p, da, db, dc);
    BENCH_CUDA_CHECK(cudaMemcpy(hc.data(), dc, hc.size() * 2, cudaMemcpyDeviceToHost));
    // Element accessors for the row-major storage of each layout.
    auto A = [&](int64_t i, int64_t kk) {  // A(i, kk), i < m
      return l == Layout::kWgrad ? Bf16ToFloat(ha[kk * m + i]) : Bf16ToFloat(ha[i * k + kk]);
    };
    auto B = [&](int64_t kk, int64_t j) {  // B(kk, j), j < n
      return l == Layout::kFwd ? Bf16ToFloat(hb[j * k + kk]) : Bf16ToFloat(hb[kk * n + j]);
    };
    worst = std::max(worst, RelativeError(hc, m, n, k, A, B));
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
  }
  return worst;
}

struct LayerShape {
  const char* name;
  int64_t n_full, k_full;
  bool split_n;  // column-parallel (split N) or row-parallel (split K)
};

struct ModelShapes {
  const char* model;
  std::vector<LayerShape> layers;
};

// Llama-2 configs (HF config.json): 7B h=4096 f=11008 heads=32 kv=32;
// 70B h=8192 f=28672 heads=64 kv=8 head_dim=128 -> qkv = (64+2·8)·128 = 10240.
// Megatron's split: qkv and up/gate column-parallel, o and down row-parallel.
std::vector<ModelShapes> LlamaShapes() {
  return {
      {"llama2-7b",
       {{"qkv", 12288, 4096, true},
        {"o", 4096, 4096, false},
        {"up_gate", 11008, 4096, true},
        {"down", 4096, 11008, false}}},
      {"llama2-70b",
       {{"qkv", 10240, 8192, true},
        {"o", 8192, 8192, false},
        {"up_gate", 28672, 8192, true},
        {"down", 8192, 28672, false}}},
  };
}

std::vector<Problem> Problems(bool quick) {
  std::vector<Problem> out;
  const std::vector<int> token_counts = quick ? std::vector<int>{8192} : std::vector<int>{2048, 8192, 16384};
  const std::vector<int> tps = quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8, 16};
  for (const auto& ms : LlamaShapes())
    for (const auto& ls : ms.layers)
      for (int tokens : token_counts)
        for (int tp : tps) {
          const int64_t N = ls.split_n ? ls.n_full / tp : ls.n_full;
          const int64_t K = ls.split_n ? ls.k_full : ls.k_full / tp;
          const int64_t M = tokens;
          out.push_back({ms.model, ls.name, Layout::kFwd, tokens, tp, M, N, K});
          out.push_back({ms.model, ls.name, Layout::kDgrad, tokens, tp, M, K, N});
          out.push_back({ms.model, ls.name, Layout::kWgrad, tokens, tp, N, K, M});
        }
  const std::vector<int64_t> squares =
      quick ? std::vector<int64_t>{1024, 8192}
            : std::vector<int64_t>{256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
  for (int64_t s : squares) out.push_back({"", "square", Layout::kSquare, 0, 1, s, s, s});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_path = bench::OutPath(argc, argv);
  const bool quick = bench::HasFlag(argc, argv, "--quick");
  // --min-time-ms T: time each shape for about T ms (default 100: a burst,
  // before power capping settles); --preheat-s S: run a large GEMM for S s
  // first, so the card starts at its sustained (power-capped) clocks.
  const double min_time_ms = std::atof(bench::OptionValue(argc, argv, "--min-time-ms", "100").c_str());
  const double preheat_s = std::atof(bench::OptionValue(argc, argv, "--preheat-s", "0").c_str());
  const double max_repeats = min_time_ms > 100 ? 100000.0 : 15.0;
  const std::string dtype_name = bench::OptionValue(argc, argv, "--dtype", "bf16");
  if (dtype_name != "bf16" && dtype_name != "fp8") {
    std::fprintf(stderr, "error: --dtype '%s': must be bf16 or fp8\n", dtype_name.c_str());
    return 2;
  }
  const Dtype dtype = dtype_name == "fp8" ? Dtype::kFp8 : Dtype::kBf16;
  const size_t in_bytes = dtype == Dtype::kFp8 ? 1 : 2;  // per operand element; the output is bf16
  BENCH_CUDA_CHECK(cudaSetDevice(0));
  if (dtype == Dtype::kFp8) {
    cudaDeviceProp prop;
    BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major * 10 + prop.minor < 89) {
      std::fprintf(stderr, "gemm_sweep: %s (sm_%d%d) has no FP8 tensor cores; no FP8 sweep written\n", prop.name,
                   prop.major, prop.minor);
      return 0;
    }
  }
  cudaStream_t stream;
  BENCH_CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t h;
  BENCH_CUBLAS_CHECK(cublasCreate(&h));
  BENCH_CUBLAS_CHECK(cublasSetStream(h, stream));
  // 32 MiB workspace: what cuBLAS recommends for Hopper (and what PyTorch sets).
  const size_t workspace_bytes = size_t{32} << 20;
  void* workspace;
  BENCH_CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
  BENCH_CUBLAS_CHECK(cublasSetWorkspace(h, workspace, workspace_bytes));
  int cublas_version = 0;
  BENCH_CUBLAS_CHECK(cublasGetVersion(h, &cublas_version));
  cublasLtHandle_t lt;
  BENCH_CUBLAS_CHECK(cublasLtCreate(&lt));
  // The two per-tensor scales (A, B) on the device, as TE keeps them.
  float* scales;
  BENCH_CUDA_CHECK(cudaMalloc(&scales, 2 * sizeof(float)));
  const float ones[2] = {1.0f, 1.0f};
  BENCH_CUDA_CHECK(cudaMemcpy(scales, ones, sizeof ones, cudaMemcpyHostToDevice));

  const double check_rel_err =
      dtype == Dtype::kFp8 ? CheckFp8(lt, scales, workspace, workspace_bytes, stream) : CheckLayouts(h);
  // bf16 output of a k=64 product: ~2^-9 relative rounding per element.
  if (!(check_rel_err < 1e-2)) {
    std::fprintf(stderr, "error: layout check failed, relative error %g\n", check_rel_err);
    return 1;
  }

  const std::vector<Problem> problems = Problems(quick);
  size_t max_set = 0;
  for (const auto& p : problems)
    max_set = std::max(max_set, static_cast<size_t>(p.m * p.k + p.k * p.n) * in_bytes + static_cast<size_t>(p.m * p.n) * 2);
  const size_t arena_bytes = std::max(max_set, size_t{1} << 30) + (size_t{1} << 20);
  char* arena;
  BENCH_CUDA_CHECK(cudaMalloc(&arena, arena_bytes));
  if (dtype == Dtype::kFp8)
    FillFp8<<<4096, 256, 0, stream>>>(reinterpret_cast<__nv_fp8_e4m3*>(arena), arena_bytes, 1234u);
  else
    bench::FillBf16<<<4096, 256, 0, stream>>>(reinterpret_cast<__nv_bfloat16*>(arena), arena_bytes / 2, 1234u);
  BENCH_LAUNCH_CHECK();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  cudaEvent_t e0, e1;
  BENCH_CUDA_CHECK(cudaEventCreate(&e0));
  BENCH_CUDA_CHECK(cudaEventCreate(&e1));

  // One GEMM of `p` on operands at a, b and output at c, in the chosen dtype
  // (`fp8` holds the problem's cuBLASLt descriptors in FP8 mode).
  auto gemm = [&](const Problem& p, const Fp8Gemm& fp8, char* a, char* b, char* c) {
    if (dtype == Dtype::kFp8)
      RunFp8(lt, fp8, a, b, c, workspace, workspace_bytes, stream);
    else
      RunGemm(h, p, reinterpret_cast<__nv_bfloat16*>(a), reinterpret_cast<__nv_bfloat16*>(b),
              reinterpret_cast<__nv_bfloat16*>(c));
  };

  if (preheat_s > 0) {
    Problem heat{"", "preheat", Layout::kSquare, 0, 1, 8192, 8192, 8192};
    Fp8Gemm heat_fp8;
    if (dtype == Dtype::kFp8) heat_fp8 = MakeFp8Gemm(lt, heat, scales, workspace_bytes);
    const size_t op_bytes = size_t{8192} * 8192 * in_bytes;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < preheat_s) {
      for (int i = 0; i < 8; ++i) gemm(heat, heat_fp8, arena, arena + op_bytes, arena + 2 * op_bytes);
      BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    if (dtype == Dtype::kFp8) DestroyFp8Gemm(heat_fp8);
  }

  std::ostringstream rows;
  for (size_t pi = 0; pi < problems.size(); ++pi) {
    const Problem& p = problems[pi];
    auto align = [](size_t x) { return (x + 255) / 256 * 256; };
    const size_t a_bytes = align(p.m * p.k * in_bytes), b_bytes = align(p.k * p.n * in_bytes),
                 c_bytes = align(p.m * p.n * 2);
    const size_t set_bytes = a_bytes + b_bytes + c_bytes;
    const size_t want_sets = (size_t{256} << 20) / set_bytes + 1;
    const size_t sets = std::max<size_t>(1, std::min<size_t>({want_sets, 16, arena_bytes / set_bytes}));
    Fp8Gemm fp8;
    if (dtype == Dtype::kFp8) fp8 = MakeFp8Gemm(lt, p, scales, workspace_bytes);
    auto run = [&](size_t i) {
      char* base = arena + (i % sets) * set_bytes;
      gemm(p, fp8, base, base + a_bytes, base + a_bytes + b_bytes);
    };
    // Warm-up (heuristics, module load), then a one-shot estimate.
    for (size_t i = 0; i < 3; ++i) run(i);
    BENCH_CUDA_CHECK(cudaEventRecord(e0, stream));
    for (size_t i = 0; i < sets; ++i) run(i);
    BENCH_CUDA_CHECK(cudaEventRecord(e1, stream));
    BENCH_CUDA_CHECK(cudaEventSynchronize(e1));
    float est_ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&est_ms, e0, e1));
    const double one_ms = std::max(1e-4, static_cast<double>(est_ms) / sets);
    const int batch = static_cast<int>(std::clamp(std::ceil(1.0 / one_ms), 1.0, 256.0));

    const int repeats = static_cast<int>(std::clamp(std::floor(min_time_ms / (batch * one_ms)), 5.0, max_repeats));

    // The batch is captured in a CUDA graph and replayed: small GEMMs run
    // faster than the host can issue cuBLAS calls, so timing plain launches
    // would measure the host. Replays keep only the device-side gap (~1 us).
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    BENCH_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < batch; ++i) run(i);
    BENCH_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    BENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    BENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    std::vector<double> per_gemm_s;
    std::vector<cudaEvent_t> evs(2 * repeats);
    for (auto& e : evs) BENCH_CUDA_CHECK(cudaEventCreate(&e));
    for (int r = 0; r < repeats; ++r) {
      BENCH_CUDA_CHECK(cudaEventRecord(evs[2 * r], stream));
      BENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream));
      BENCH_CUDA_CHECK(cudaEventRecord(evs[2 * r + 1], stream));
    }
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int r = 0; r < repeats; ++r) {
      float ms = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, evs[2 * r], evs[2 * r + 1]));
      per_gemm_s.push_back(ms * 1e-3 / batch);
    }
    for (auto& e : evs) cudaEventDestroy(e);
    BENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
    BENCH_CUDA_CHECK(cudaGraphDestroy(graph));
    if (dtype == Dtype::kFp8) DestroyFp8Gemm(fp8);

    const double t = bench::Median(per_gemm_s);
    const double flop = 2.0 * p.m * p.n * p.k;
    if (pi) rows << ",\n";
    rows << "    {\"model\": " << bench::Str(p.model) << ", \"layer\": " << bench::Str(p.layer)
         << ", \"pass\": " << bench::Str(LayoutName(p.layout)) << ", \"dtype\": " << bench::Str(dtype_name)
         << ", \"tokens\": " << p.tokens
         << ", \"tp\": " << p.tp << ", \"m\": " << p.m << ", \"n\": " << p.n << ", \"k\": " << p.k
         << ", \"time_s\": " << bench::Num(t) << ", \"time_min_s\": " << bench::Num(bench::MinOf(per_gemm_s))
         << ", \"tflops\": " << bench::Num(flop / t * 1e-12) << ", \"batch\": " << batch
         << ", \"repeats\": " << repeats << ", \"buffer_sets\": " << sets;
    if (dtype == Dtype::kFp8) rows << ", \"fast_accumulate\": " << (UsesFastAccumulate(p.layout) ? "true" : "false");
    rows << "}";
    std::fprintf(stderr, "gemm %zu/%zu %s %s %s tp=%d m=%lld n=%lld k=%lld %.1f TFLOP/s\n", pi + 1,
                 problems.size(), p.model.c_str(), p.layer.c_str(), LayoutName(p.layout), p.tp,
                 static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                 flop / t * 1e-12);
  }

  std::ostringstream o;
  o << "{\n  \"benchmark\": \"gemm_sweep\",\n  \"timestamp_utc\": " << bench::Str(bench::UtcNow())
    << ",\n  \"device\": " << bench::DeviceJson(0) << ",\n  \"library\": "
    << (dtype == Dtype::kFp8 ? "\"cublasLtMatmul\"" : "\"cublasGemmEx\"") << ", \"cublas_version\": " << cublas_version
    << ", \"cublaslt_version\": " << cublasLtGetVersion() << ",\n  \"dtype\": " << bench::Str(dtype_name)
    << (dtype == Dtype::kFp8 ? ", \"fp8_format\": \"e4m3\", \"scaling\": \"per-tensor\", \"layout\": \"TN for every pass\""
                             : "")
    << ", \"accumulate\": \"fp32\", \"output\": \"bf16\","
    << "\n  \"workspace_bytes\": " << workspace_bytes
    << ",\n  \"layout_check_rel_error\": " << bench::Num(check_rel_err)
    << ",\n  \"min_time_ms\": " << bench::Num(min_time_ms) << ", \"preheat_s\": " << bench::Num(preheat_s)
    << ",\n  \"timing\": \"median over repeats of (CUDA-graph replay of a batch of back-to-back GEMMs between CUDA events) / batch; operands rotate over >= 256 MiB of buffers\","
    << "\n  \"results\": [\n" << rows.str() << "\n  ]\n}\n";
  bench::Emit(o.str(), out_path);
  cudaFree(scales);
  cublasLtDestroy(lt);
  cublasDestroy(h);
  return 0;
}
