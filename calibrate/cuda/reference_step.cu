// Reference training step: replays the schedule parasim exports (`parasim
// simulate --export-schedule FILE`) with real kernels on real GPUs and prints
// the measured step time and exposed communication beside parasim's
// prediction.
//
// What runs, per micro-batch, layer by layer in the schedule's order
// (forward, then backward in reverse), on a compute stream:
//   transformer layer  RMSNorm (row kernel), QKV / output / MLP GEMMs (cuBLAS
//                      cublasGemmEx, bf16 in/out, fp32 accumulation; cuBLAS
//                      runs its cuBLASLt kernels), RoPE, residual and SwiGLU
//                      (elementwise kernels with the tensors' real sizes);
//                      attention UNFUSED: scores = Q·Kᵀ and O = P·V as
//                      strided-batched GEMMs over (micro-batch x heads) with a
//                      causal softmax kernel between (full s x s, no skipping
//                      of the masked half), since plain CUDA has no fused
//                      flash attention; backward: 4 batched GEMMs + softmax
//                      backward; every linear's backward = dgrad + wgrad GEMMs
//   embedding          row gather; backward a row scatter
//   lm_head            GEMM to the vocabulary, fp32 softmax cross-entropy
//                      (one row kernel, forward + gradient), backward GEMMs
//   optimizer          AdamW over the GPU's parameters in fp32 (p, g, m, v)
// and every collective of the schedule on a communication stream (NCCL), at
// the point its phase says: gathers before the layer needs them (prefetched
// one layer ahead), TP/CP collectives blocking inside the layer, gradient
// reductions after the layer's backward, step-end collectives last.
// Collectives run over a communicator of all visible GPUs (one process);
// a collective whose group is larger than that is not replayed and counted.
//
// Measured (CUDA events): the step (median of --steps after --warmup), the
// same step with communication left out (compute only), exposed
// communication = their difference, and per layer the forward and backward
// compute time (separate, synchronised pass).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 reference_step.cu -lnccl -lcublas -o reference_step
// Run:   ./reference_step --schedule sched.json [--warmup 3] [--steps 10] [-o reference_step.json]
#include <cublas_v2.h>
#include <nccl.h>

#include <fstream>
#include <map>
#include <vector>

#include "bench_common.h"
#include "mini_json.h"

#include "nccl_cublas_check.h"

namespace {

using bf16 = __nv_bfloat16;

// ---- kernels -----------------------------------------------------------------

// y = rmsnorm(x) * w over rows of `cols`; fp32 accumulation.
__global__ void RmsNormRows(const bf16* x, bf16* y, int64_t rows, int cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const bf16* xr = x + r * cols;
    float ss = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = __bfloat162float(xr[c]);
      ss += v * v;
    }
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
    __syncthreads();
    float tot = 0;
    for (int i = 0; i < static_cast<int>(blockDim.x >> 5); ++i) tot += part[i];
    const float inv = rsqrtf(tot / cols + 1e-5f);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[r * cols + c] = __float2bfloat16(__bfloat162float(xr[c]) * inv);
    __syncthreads();
  }
}

// Streams `inputs` arrays of n elements into one output (a + b*c ...): the
// memory traffic of residual adds, RoPE, SwiGLU and their backward.
__global__ void Elementwise(const bf16* a, const bf16* b, bf16* out, int64_t n, int inputs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = __bfloat162float(a[i]);
    if (inputs > 1) v = v * 0.999f + __bfloat162float(b[i]);
    out[i] = __float2bfloat16(v);
  }
}

// Causal softmax over rows of length s (row r of each s x s block keeps
// columns <= r % s); in place, fp32 accumulation. `backward` reads a second
// matrix too (softmax backward: dS = P * (dP - rowsum(P * dP))).
__global__ void CausalSoftmaxRows(bf16* p, const bf16* dp, int64_t rows, int s, bool backward) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    bf16* row = p + r * s;
    const int keep = static_cast<int>(r % s) + 1;
    float mx = -1e30f, sum = 0;
    for (int c = threadIdx.x; c < keep; c += blockDim.x) mx = fmaxf(mx, __bfloat162float(row[c]));
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    for (int c = threadIdx.x; c < keep; c += blockDim.x) {
      const float e = __expf(__bfloat162float(row[c]) - mx);
      sum += backward ? e * __bfloat162float(dp[r * s + c]) : e;
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const float inv = 1.0f / fmaxf(sum, 1e-20f);
    for (int c = threadIdx.x; c < s; c += blockDim.x)
      row[c] = c < keep ? __float2bfloat16(__expf(__bfloat162float(row[c]) - mx) * inv) : __float2bfloat16(0.0f);
  }
}

// Softmax cross-entropy over fp32 logits rows of length v: forward loss and
// the gradient written in place (one read, one write per element).
__global__ void CrossEntropyRows(float* logits, int64_t rows, int v) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float* row = logits + r * v;
    float mx = -1e30f, sum = 0;
    for (int c = threadIdx.x; c < v; c += blockDim.x) mx = fmaxf(mx, row[c]);
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    for (int c = threadIdx.x; c < v; c += blockDim.x) sum += __expf(row[c] - mx);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    for (int c = threadIdx.x; c < v; c += blockDim.x) row[c] = __expf(row[c] - mx) / sum;
  }
}

__global__ void AdamW(float* p, const float* g, float* m, float* v, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gi = g[i];
    const float mi = 0.9f * m[i] + 0.1f * gi, vi = 0.95f * v[i] + 0.05f * gi * gi;
    m[i] = mi, v[i] = vi;
    p[i] -= 1e-4f * (mi * rsqrtf(vi + 1e-8f) + 0.1f * p[i]);
  }
}

// Casts fp32 logits from a bf16 GEMM output (the eager `logits.float()`).
__global__ void ToFloat(const bf16* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = __bfloat162float(x[i]);
}

}  // namespace

// ---- the schedule ---------------------------------------------------------------

namespace {

struct Coll {
  std::string op, what, phase;
  double bytes = 0, predicted_s = 0;
  int group = 1, count = 1;
  bool blocking = true, every_mb = true;
};

struct Layer {
  std::string name;
  int index = -1;
  double fwd_s = 0, bwd_s = 0, recompute_s = 0, param_bytes = 0;
  std::vector<Coll> colls;
};

struct Schedule {
  int64_t h = 0, layers = 0, heads = 0, kv = 0, d = 0, ffn = 0, vocab = 0;
  int64_t seq = 0, mbs = 1;
  int micro_batches = 1, tp = 1, dp = 1, world = 1;
  bool swiglu = true, sharded = true;
  std::string config, sharding;
  double pred_step = 0, pred_compute = 0, pred_exposed = 0, pred_comm = 0, pred_optimizer = 0;
  std::vector<Layer> order;  // forward order
};

Schedule LoadSchedule(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "error: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Schedule s;
  try {
    const minijson::Value j = minijson::Parse(text);
    if (j.Str("kind", "") != "parasim_schedule") throw std::runtime_error("not a parasim schedule (kind)");
    const auto& m = j["model"];
    s.h = m["hidden_size"].num, s.layers = m["num_layers"].num, s.heads = m["num_attention_heads"].num;
    s.kv = m["num_kv_heads"].num, s.d = m["head_dim"].num, s.ffn = m["ffn_hidden_size"].num;
    s.vocab = m["vocab_size"].num, s.swiglu = m.Str("mlp", "swiglu") == "swiglu";
    s.seq = j["seq_len"].num, s.mbs = j["micro_batch"].num, s.micro_batches = j["num_micro_batches"].num;
    s.tp = j["parallel"]["tp"].num, s.dp = j["parallel"]["dp"].num, s.world = j["world_size"].num;
    s.config = j["config"].str, s.sharding = j["sharding"].str, s.sharded = s.sharding != "ddp";
    const auto& p = j["prediction"];
    s.pred_step = p["step_time_s"].num, s.pred_compute = p["compute_s"].num;
    s.pred_exposed = p["exposed_comm_s"].num, s.pred_comm = p["comm_s"].num;
    s.pred_optimizer = j.Num("optimizer_s", 0);
    for (const auto& l : j["layers"].arr) {
      Layer L;
      L.name = l["name"].str, L.index = l["layer_index"].num, L.fwd_s = l["forward_s"].num;
      L.bwd_s = l["backward_s"].num, L.recompute_s = l["recompute_s"].num, L.param_bytes = l["parameter_bytes"].num;
      for (const auto& c : l["collectives"].arr) {
        Coll C;
        C.op = c["op"].str, C.what = c["what"].str, C.phase = c["phase"].str, C.bytes = c["size_bytes"].num;
        C.group = c["group_size"].num, C.count = c["count"].num, C.blocking = c["blocking"].b;
        C.every_mb = c["every_micro_batch"].b, C.predicted_s = c["predicted_s"].num;
        L.colls.push_back(C);
      }
      s.order.push_back(L);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s: %s\n", path.c_str(), e.what());
    std::exit(2);
  }
  if (s.h <= 0 || s.heads <= 0 || s.seq <= 0 || s.tp <= 0 || s.heads % s.tp || s.order.empty()) {
    std::fprintf(stderr, "error: %s: a schedule needs hidden, heads divisible by tp, seq and layers\n", path.c_str());
    std::exit(2);
  }
  return s;
}

// ---- one GPU's work ---------------------------------------------------------------

struct Gpu {
  int device = 0;
  cudaStream_t compute = nullptr, comm = nullptr;
  cublasHandle_t blas = nullptr;
  ncclComm_t nccl = nullptr;
  bf16 *x = nullptr, *y = nullptr, *z = nullptr, *w = nullptr, *qkv = nullptr, *kbuf = nullptr, *scores = nullptr;
  float *logits32 = nullptr, *opt = nullptr;
  bf16 *comm_send = nullptr, *comm_recv = nullptr;
  size_t comm_capacity = 0;  // bytes
  int64_t opt_params = 0;
};

int Blocks(int64_t n) { return static_cast<int>(std::min<int64_t>((n + 255) / 256, 132 * 16)); }

// Row-major C[m×n] = A[m×k]·B[n×k]ᵀ (fwd; dgrad and wgrad have the same FLOPs and
// shapes permuted, and are issued as such).
void Gemm(Gpu& g, int64_t m, int64_t n, int64_t k, const bf16* a, const bf16* b, bf16* c) {
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(g.blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, k, a, CUDA_R_16BF, k,
                               &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Batched C_i[m×n] = A_i[m×k]·B_i[n×k]ᵀ over `batch` (micro-batch x heads).
void BatchedGemm(Gpu& g, int64_t m, int64_t n, int64_t k, int64_t batch, const bf16* a, const bf16* b, bf16* c) {
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(g.blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, k,
                                             n * k, a, CUDA_R_16BF, k, m * k, &zero, c, CUDA_R_16BF, n, m * n, batch,
                                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void Ew(Gpu& g, int64_t n, int inputs) {
  Elementwise<<<Blocks(n), 256, 0, g.compute>>>(g.x, g.y, g.z, n, inputs);
}

// A linear layer's forward (1 GEMM) or backward (dgrad + wgrad: 2 GEMMs).
void Linear(Gpu& g, int64_t tokens, int64_t out, int64_t in, bool backward) {
  if (!backward) return Gemm(g, tokens, out, in, g.x, g.w, g.z);
  Gemm(g, tokens, in, out, g.z, g.w, g.y);  // dX[T×in] = dY[T×out]·W
  Gemm(g, out, in, tokens, g.z, g.x, g.w);  // dW[out×in] = dYᵀ·X
}

// Unfused causal attention over (mbs x heads/tp) s×s score matrices.
void Attention(Gpu& g, const Schedule& s, bool backward) {
  const int64_t b = s.mbs * (s.heads / s.tp), n = s.seq, d = s.d;
  if (!backward) {
    BatchedGemm(g, n, n, d, b, g.qkv, g.kbuf, g.scores);  // S = Q·Kᵀ
    CausalSoftmaxRows<<<static_cast<int>(std::min<int64_t>(b * n, 65535)), 32, 0, g.compute>>>(g.scores, nullptr, b * n, n, false);
    BatchedGemm(g, n, d, n, b, g.scores, g.kbuf, g.qkv);  // O = P·V
    return;
  }
  BatchedGemm(g, n, n, d, b, g.qkv, g.kbuf, g.scores);  // dP = dO·Vᵀ
  CausalSoftmaxRows<<<static_cast<int>(std::min<int64_t>(b * n, 65535)), 32, 0, g.compute>>>(g.scores, g.scores, b * n, n, true);
  BatchedGemm(g, n, d, n, b, g.scores, g.kbuf, g.qkv);  // dQ = dS·K
  BatchedGemm(g, n, d, n, b, g.scores, g.kbuf, g.qkv);  // dK = dSᵀ·Q
  BatchedGemm(g, n, d, n, b, g.scores, g.kbuf, g.qkv);  // dV = Pᵀ·dO
}

void TransformerLayer(Gpu& g, const Schedule& s, bool backward) {
  const int64_t T = s.mbs * s.seq, h = s.h, qkv = (s.heads + 2 * s.kv) * s.d / s.tp, att = s.heads * s.d / s.tp;
  const int64_t f = s.ffn / s.tp, up = s.swiglu ? 2 * f : f;
  const int pass = backward ? 2 : 1;  // elementwise backward reads about twice what forward does
  auto norm = [&] { for (int i = 0; i < pass; ++i) RmsNormRows<<<Blocks(T), 256, 0, g.compute>>>(g.x, g.z, T, static_cast<int>(h)); };
  auto steps = [&](bool bwd) {
    if (!bwd) {
      norm();
      Linear(g, T, qkv, h, false);
      Ew(g, T * (s.heads + s.kv) * s.d / s.tp, 2);  // RoPE on q, k
      Attention(g, s, false);
      Linear(g, T, h, att, false);
      Ew(g, T * h, 2);  // residual
      norm();
      Linear(g, T, up, h, false);
      Ew(g, T * f, s.swiglu ? 2 : 1);  // SwiGLU / GELU
      Linear(g, T, h, f, false);
      Ew(g, T * h, 2);  // residual
      return;
    }
    Ew(g, T * h, 2);
    Linear(g, T, h, f, true);
    for (int i = 0; i < 2; ++i) Ew(g, T * f, 2);
    Linear(g, T, up, h, true);
    norm();
    Ew(g, T * h, 2);
    Linear(g, T, h, att, true);
    Attention(g, s, true);
    Ew(g, T * (s.heads + s.kv) * s.d / s.tp, 2);
    Linear(g, T, qkv, h, true);
    norm();
  };
  steps(backward);
}

void LmHead(Gpu& g, const Schedule& s, bool backward) {
  const int64_t T = s.mbs * s.seq, v = s.vocab / s.tp;
  if (!backward) {
    RmsNormRows<<<Blocks(T), 256, 0, g.compute>>>(g.x, g.z, T, static_cast<int>(s.h));
    Gemm(g, T, v, s.h, g.x, g.w, g.scores);
    ToFloat<<<Blocks(T * v), 256, 0, g.compute>>>(g.scores, g.logits32, T * v);
    CrossEntropyRows<<<static_cast<int>(std::min<int64_t>(T, 65535)), 32, 0, g.compute>>>(g.logits32, T, static_cast<int>(v));
    return;
  }
  Elementwise<<<Blocks(T * v), 256, 0, g.compute>>>(g.scores, nullptr, g.scores, T * v, 1);  // grad to bf16
  Gemm(g, T, s.h, v, g.scores, g.w, g.y);
  Gemm(g, v, s.h, T, g.scores, g.x, g.w);
  RmsNormRows<<<Blocks(T), 256, 0, g.compute>>>(g.x, g.z, T, static_cast<int>(s.h));
}

void Compute(Gpu& g, const Schedule& s, const Layer& l, bool backward) {
  const int64_t T = s.mbs * s.seq;
  if (l.index >= 0) {
    if (backward && l.recompute_s > 0) TransformerLayer(g, s, false);
    TransformerLayer(g, s, backward);
  } else if (l.name == "lm_head") {
    LmHead(g, s, backward);
  } else {
    Ew(g, T * s.h, 1);  // embedding gather / scatter
  }
}

}  // namespace

// ---- collectives and the step -------------------------------------------------------

namespace {

struct Replay {
  std::vector<Gpu>* gpus;
  const Schedule* s;
  bool with_comm = true;
  int not_replayed = 0;  // collectives whose group is larger than the GPUs here
  std::vector<cudaEvent_t> events;

  cudaEvent_t Record(Gpu& g, cudaStream_t st) {
    cudaEvent_t e;
    BENCH_CUDA_CHECK(cudaSetDevice(g.device));
    BENCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    BENCH_CUDA_CHECK(cudaEventRecord(e, st));
    events.push_back(e);
    return e;
  }
  // `to` waits for what `from` has issued so far, on every GPU.
  void Order(bool comm_waits_compute) {
    for (Gpu& g : *gpus) {
      cudaEvent_t e = Record(g, comm_waits_compute ? g.compute : g.comm);
      BENCH_CUDA_CHECK(cudaStreamWaitEvent(comm_waits_compute ? g.comm : g.compute, e, 0));
    }
  }
  void ReleaseEvents() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    events.clear();
  }
};

void LaunchCollective(Gpu& g, const Coll& c, int n) {
  const size_t bytes = std::min(static_cast<size_t>(c.bytes), g.comm_capacity);
  const size_t elems = bytes / 2 / n * n;  // bf16 elements, divisible by the group
  if (c.op == "allgather") {
    NCCL_CHECK(ncclAllGather(g.comm_send, g.comm_recv, elems / n, ncclBfloat16, g.nccl, g.comm));
  } else if (c.op == "reducescatter") {
    NCCL_CHECK(ncclReduceScatter(g.comm_send, g.comm_recv, elems / n, ncclBfloat16, ncclSum, g.nccl, g.comm));
  } else if (c.op == "alltoall") {
    for (int p = 0; p < n; ++p) {
      NCCL_CHECK(ncclSend(g.comm_send + p * (elems / n), elems / n, ncclBfloat16, p, g.nccl, g.comm));
      NCCL_CHECK(ncclRecv(g.comm_recv + p * (elems / n), elems / n, ncclBfloat16, p, g.nccl, g.comm));
    }
  } else if (c.op == "sendrecv") {
    int rank = 0;
    ncclCommUserRank(g.nccl, &rank);
    NCCL_CHECK(ncclSend(g.comm_send, elems, ncclBfloat16, (rank + 1) % n, g.nccl, g.comm));
    NCCL_CHECK(ncclRecv(g.comm_recv, elems, ncclBfloat16, (rank + n - 1) % n, g.nccl, g.comm));
  } else {  // allreduce, and broadcast / reduce timed as one
    NCCL_CHECK(ncclAllReduce(g.comm_send, g.comm_recv, elems, ncclBfloat16, ncclSum, g.nccl, g.comm));
  }
}

void Issue(Replay& r, const Coll& c) {
  if (!r.with_comm || c.group <= 1) return;
  const int n = static_cast<int>(r.gpus->size());
  if (c.group != n) {
    ++r.not_replayed;
    return;
  }
  for (int k = 0; k < c.count; ++k) {
    NCCL_CHECK(ncclGroupStart());
    for (Gpu& g : *r.gpus) {
      BENCH_CUDA_CHECK(cudaSetDevice(g.device));
      LaunchCollective(g, c, n);
    }
    NCCL_CHECK(ncclGroupEnd());
  }
}

void IssuePhase(Replay& r, const Layer& l, const std::string& phase, bool first_mb, bool last_mb) {
  for (const Coll& c : l.colls) {
    if (c.phase != phase) continue;
    const bool gather = phase == "forward_prefetch" || phase == "backward_prefetch";
    if (!c.every_mb && !(gather ? first_mb : last_mb)) continue;
    Issue(r, c);
  }
}

bool HasPhase(const Layer& l, const std::string& phase) {
  for (const Coll& c : l.colls)
    if (c.phase == phase) return true;
  return false;
}

void ComputeAll(Replay& r, const Layer& l, bool backward) {
  for (Gpu& g : *r.gpus) {
    BENCH_CUDA_CHECK(cudaSetDevice(g.device));
    Compute(g, *r.s, l, backward);
  }
}

// Blocking collectives of `phase` (TP / CP / EP inside the layer): compute
// waits for them.
void Blocking(Replay& r, const Layer& l, const std::string& phase) {
  if (!r.with_comm || !HasPhase(l, phase)) return;
  r.Order(true);
  IssuePhase(r, l, phase, true, true);
  r.Order(false);
}

// Gathers for layer i (if not issued) and the next one (prefetch depth 1),
// then compute waits for layer i's.
void Prefetch(Replay& r, const std::vector<Layer>& order, int i, int step, const std::string& phase, bool first_mb,
              std::vector<bool>& issued) {
  if (!r.with_comm) return;
  for (int j : {i, i + step}) {
    if (j < 0 || j >= static_cast<int>(order.size()) || issued[j]) continue;
    IssuePhase(r, order[j], phase, first_mb, false);
    issued[j] = true;
  }
  if (HasPhase(order[i], phase)) r.Order(false);
}

void MicroBatch(Replay& r, bool first_mb, bool last_mb) {
  const std::vector<Layer>& order = r.s->order;
  const int n = static_cast<int>(order.size());
  std::vector<bool> issued(n, false);
  for (int i = 0; i < n; ++i) {
    Prefetch(r, order, i, +1, "forward_prefetch", first_mb, issued);
    ComputeAll(r, order[i], false);
    Blocking(r, order[i], "forward");
  }
  std::fill(issued.begin(), issued.end(), false);
  for (int i = n - 1; i >= 0; --i) {
    Prefetch(r, order, i, -1, "backward_prefetch", first_mb, issued);
    ComputeAll(r, order[i], true);
    Blocking(r, order[i], "backward");
    if (r.with_comm && HasPhase(order[i], "gradient_reduce")) {
      r.Order(true);
      IssuePhase(r, order[i], "gradient_reduce", first_mb, last_mb);
    }
  }
}

void Optimizer(Gpu& g) {
  const int64_t n = g.opt_params;
  AdamW<<<Blocks(n), 256, 0, g.compute>>>(g.opt, g.opt + n, g.opt + 2 * n, g.opt + 3 * n, n);
}

// One whole step; returns its seconds (events on GPU 0's compute stream).
double Step(Replay& r) {
  std::vector<Gpu>& gpus = *r.gpus;
  cudaEvent_t t0, t1;
  BENCH_CUDA_CHECK(cudaSetDevice(gpus[0].device));
  BENCH_CUDA_CHECK(cudaEventCreate(&t0));
  BENCH_CUDA_CHECK(cudaEventCreate(&t1));
  for (Gpu& g : gpus) {
    BENCH_CUDA_CHECK(cudaSetDevice(g.device));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  BENCH_CUDA_CHECK(cudaSetDevice(gpus[0].device));
  BENCH_CUDA_CHECK(cudaEventRecord(t0, gpus[0].compute));
  r.Order(true);  // the comm streams start with the step
  for (int mb = 0; mb < r.s->micro_batches; ++mb) MicroBatch(r, mb == 0, mb == r.s->micro_batches - 1);
  if (r.with_comm) {
    r.Order(true);
    for (const Layer& l : r.s->order) IssuePhase(r, l, "step_end", true, true);
    r.Order(false);
  }
  for (Gpu& g : gpus) {
    BENCH_CUDA_CHECK(cudaSetDevice(g.device));
    Optimizer(g);
  }
  BENCH_CUDA_CHECK(cudaSetDevice(gpus[0].device));
  BENCH_CUDA_CHECK(cudaEventRecord(t1, gpus[0].compute));
  BENCH_CUDA_CHECK(cudaEventSynchronize(t1));
  float ms = 0;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  for (Gpu& g : gpus) {
    BENCH_CUDA_CHECK(cudaSetDevice(g.device));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  r.ReleaseEvents();
  return ms * 1e-3;
}

}  // namespace

// ---- setup, per-layer timing, output ------------------------------------------------

namespace {

template <class T>
T* Alloc(size_t n) {
  T* p = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)));
  return p;
}

void Fill(bf16* p, size_t n, unsigned seed) {
  bench::FillBf16<<<1024, 256>>>(p, n, seed);
  BENCH_LAUNCH_CHECK();
}

Gpu MakeGpu(int device, const Schedule& s) {
  Gpu g;
  g.device = device;
  BENCH_CUDA_CHECK(cudaSetDevice(device));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&g.compute, cudaStreamNonBlocking));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&g.comm, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&g.blas));
  CUBLAS_CHECK(cublasSetStream(g.blas, g.compute));
  const int64_t T = s.mbs * s.seq, v = s.vocab / s.tp, f = s.ffn / s.tp;
  const int64_t widest = std::max({s.h, (s.swiglu ? 2 : 1) * f, (s.heads + 2 * s.kv) * s.d / s.tp});
  const size_t act = static_cast<size_t>(T * widest);
  const size_t weights = static_cast<size_t>(std::max({s.h * widest, v * s.h}));
  const size_t scores = static_cast<size_t>(std::max(s.mbs * (s.heads / s.tp) * s.seq * s.seq, T * v));
  g.x = Alloc<bf16>(act), g.y = Alloc<bf16>(act), g.z = Alloc<bf16>(act), g.w = Alloc<bf16>(weights);
  g.qkv = Alloc<bf16>(act), g.kbuf = Alloc<bf16>(act), g.scores = Alloc<bf16>(scores);
  g.logits32 = Alloc<float>(static_cast<size_t>(T * v));
  for (bf16* p : {g.x, g.y, g.z, g.qkv, g.kbuf}) Fill(p, act, 7);
  Fill(g.w, weights, 3);
  Fill(g.scores, scores, 5);
  double params = 0, comm = 0;
  for (const Layer& l : s.order) {
    params += l.param_bytes / 2;
    for (const Coll& c : l.colls) comm = std::max(comm, c.bytes);
  }
  g.opt_params = static_cast<int64_t>(s.sharded ? params / std::max(1, s.dp) : params);
  g.opt = Alloc<float>(static_cast<size_t>(4 * g.opt_params));
  bench::FillFloat<<<1024, 256>>>(g.opt, static_cast<size_t>(4 * g.opt_params), 0.01f);
  g.comm_capacity = static_cast<size_t>(std::min(comm, 4e9)) + 256;
  g.comm_send = Alloc<bf16>(g.comm_capacity / 2), g.comm_recv = Alloc<bf16>(g.comm_capacity / 2);
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  return g;
}

struct LayerTime {
  double fwd = 0, bwd = 0;
};

// Each layer's compute alone on GPU 0 (synchronised between layers); the
// optimizer last.
std::vector<LayerTime> TimeLayers(Gpu& g, const Schedule& s, double* optimizer_s) {
  std::vector<LayerTime> out;
  cudaEvent_t a, b;
  BENCH_CUDA_CHECK(cudaSetDevice(g.device));
  BENCH_CUDA_CHECK(cudaEventCreate(&a));
  BENCH_CUDA_CHECK(cudaEventCreate(&b));
  auto timed = [&](auto&& work) {
    BENCH_CUDA_CHECK(cudaEventRecord(a, g.compute));
    work();
    BENCH_CUDA_CHECK(cudaEventRecord(b, g.compute));
    BENCH_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e-3;
  };
  for (const Layer& l : s.order) {
    LayerTime t;
    t.fwd = timed([&] { Compute(g, s, l, false); });
    t.bwd = timed([&] { Compute(g, s, l, true); });
    out.push_back(t);
  }
  *optimizer_s = timed([&] { Optimizer(g); });
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return out;
}

double MedianSteps(Replay& r, int warmup, int steps, std::vector<double>* all) {
  for (int i = 0; i < warmup; ++i) Step(r);
  for (int i = 0; i < steps; ++i) all->push_back(Step(r));
  return bench::Median(*all);
}

std::string Json(const Schedule& s, const std::string& path, int ngpu, double full, double compute_only,
                 const std::vector<double>& steps, const std::vector<LayerTime>& layers, double opt_s, int not_replayed) {
  int v = 0;
  ncclGetVersion(&v);
  std::ostringstream o;
  o << "{\"kind\": \"reference_step\", \"program\": \"parasim_reference_step\", \"timestamp\": "
    << bench::Str(bench::UtcNow()) << ",\n \"device\": " << bench::DeviceJson(0) << ",\n \"gpus\": " << ngpu
    << ", \"nccl_version_code\": " << v << ", \"schedule\": " << bench::Str(path) << ", \"config\": "
    << bench::Str(s.config) << ", \"micro_batches\": " << s.micro_batches
    << ",\n \"attention\": \"unfused: batched GEMMs Q.K^T and P.V over full s x s scores + causal softmax kernel\","
    << "\n \"predicted\": {\"step_s\": " << bench::Num(s.pred_step) << ", \"compute_s\": " << bench::Num(s.pred_compute)
    << ", \"comm_s\": " << bench::Num(s.pred_comm) << ", \"exposed_comm_s\": " << bench::Num(s.pred_exposed)
    << ", \"optimizer_s\": " << bench::Num(s.pred_optimizer) << "},\n \"measured\": {\"step_s\": " << bench::Num(full)
    << ", \"compute_only_step_s\": " << bench::Num(compute_only)
    << ", \"exposed_comm_s\": " << bench::Num(std::max(0.0, full - compute_only)) << ", \"optimizer_s\": "
    << bench::Num(opt_s) << ", \"collectives_not_replayed_per_step\": " << not_replayed << ", \"step_samples_s\": [";
  for (size_t i = 0; i < steps.size(); ++i) o << (i ? ", " : "") << bench::Num(steps[i]);
  o << "]},\n \"layers\": [\n";
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = s.order[i];
    o << (i ? ",\n" : "") << "  {\"name\": " << bench::Str(l.name) << ", \"predicted_forward_s\": " << bench::Num(l.fwd_s)
      << ", \"measured_forward_s\": " << bench::Num(layers[i].fwd) << ", \"predicted_backward_s\": "
      << bench::Num(l.bwd_s) << ", \"measured_backward_s\": " << bench::Num(layers[i].bwd) << "}";
  }
  o << "]}\n";
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = bench::OptionValue(argc, argv, "--schedule", "");
  if (path.empty()) {
    std::fprintf(stderr, "usage: reference_step --schedule FILE [--warmup 3] [--steps 10] [-o FILE]\n");
    return 2;
  }
  const int warmup = std::atoi(bench::OptionValue(argc, argv, "--warmup", "3").c_str());
  const int steps = std::max(1, std::atoi(bench::OptionValue(argc, argv, "--steps", "10").c_str()));
  const Schedule s = LoadSchedule(path);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "error: no CUDA device\n");
    return 3;
  }
  std::vector<Gpu> gpus;
  std::vector<int> devs;
  for (int d = 0; d < ndev; ++d) gpus.push_back(MakeGpu(d, s)), devs.push_back(d);
  std::vector<ncclComm_t> comms(ndev);
  NCCL_CHECK(ncclCommInitAll(comms.data(), ndev, devs.data()));
  for (int d = 0; d < ndev; ++d) gpus[d].nccl = comms[d];

  Replay r;
  r.gpus = &gpus;
  r.s = &s;
  std::vector<double> full_steps, compute_steps;
  const double full = MedianSteps(r, warmup, steps, &full_steps);
  const int not_replayed = r.not_replayed / (warmup + steps);
  r.with_comm = false;
  const double compute_only = MedianSteps(r, 1, steps, &compute_steps);
  double opt_s = 0;
  const std::vector<LayerTime> layers = TimeLayers(gpus[0], s, &opt_s);
  bench::Emit(Json(s, path, ndev, full, compute_only, full_steps, layers, opt_s, not_replayed), bench::OutPath(argc, argv));
  std::fprintf(stderr, "reference_step: %s on %d GPU(s): measured step %.4f s (compute only %.4f s, exposed comm %.4f s); "
               "parasim predicted %.4f s (exposed comm %.4f s)%s\n", s.config.c_str(), ndev, full, compute_only,
               std::max(0.0, full - compute_only), s.pred_step, s.pred_exposed,
               not_replayed ? " [some collectives need more GPUs and were not replayed]" : "");
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  return 0;
}
