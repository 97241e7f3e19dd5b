// NCCL collective benchmark in the manner of nccl-tests (github.com/NVIDIA/
// nccl-tests, src/common.cu and src/*.cu): AllReduce, AllGather,
// ReduceScatter, AllToAll and Send/Recv over message sizes from -b to -e
// bytes (multiplied by -f), out-of-place then in-place, with warm-up and
// timed iterations, algbw and busbw as nccl-tests defines them:
//   size   all_reduce, all_to_all, send_recv: bytes of one rank's buffer;
//          all_gather: bytes of the gathered output (count x ranks);
//          reduce_scatter: bytes of the input (count x ranks)
//   algbw  = size / time
//   busbw  = algbw x 2(n-1)/n (all_reduce), x (n-1)/n (all_gather,
//            reduce_scatter, all_to_all), x 1 (send_recv)
// time: wall clock over `iters` back-to-back launches after a stream sync,
// divided by iters, averaged over ranks (nccl-tests' default, -a 1).
//
// Groups (--groups): all (every rank), node (ranks of one host, split by
// hostname), rail (one rank per host with the same local rank, split by
// local rank), or a comma list of them ("mixed": all,node,rail).
// Interference (--gemm M,N,K): a bf16 cuBLAS GEMM (fp32 accumulation) is
// looped on a second stream while the collective runs; the program reports
// each alone and both together (GEMM slowdown, collective slowdown).
//
// Process model, as nccl-tests: one rank per GPU. Built with
// -DPARASIM_NCCL_BENCH_MPI and run under mpirun, ranks are MPI processes
// (hostnames and local ranks from MPI); otherwise one process drives every
// visible GPU through ncclCommInitAll (a single node).
// NCCL_ALGO / NCCL_PROTO (and any NCCL_* variable) are read by NCCL at
// communicator init; the program records the values it saw.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 nccl_bench.cu -lnccl -lcublas -o nccl_bench
// Run:   ./nccl_bench [-b 8] [-e 1G] [-f 2] [-w 5] [-n 20] [--ops all_reduce,all_gather,...]
//                     [--groups all,node,rail] [--gemm 8192,8192,8192] [-o nccl_bench.json]
#include <cublas_v2.h>
#include <nccl.h>
#include <unistd.h>
#ifdef PARASIM_NCCL_BENCH_MPI
#include <mpi.h>
#endif

#include <cstdint>
#include <map>
#include <vector>

#include "bench_common.h"

#include "nccl_cublas_check.h"

namespace {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };
const char* OpName(Op o) {
  switch (o) {
    case Op::kAllReduce: return "all_reduce";
    case Op::kAllGather: return "all_gather";
    case Op::kReduceScatter: return "reduce_scatter";
    case Op::kAllToAll: return "all_to_all";
    case Op::kSendRecv: return "send_recv";
  }
  return "?";
}

// nccl-tests' bus factor (src/all_reduce.cu etc., AllReduceGetBw & co).
double BusFactor(Op o, int n) {
  // With one rank every factor but send_recv's is 0, as nccl-tests prints busbw 0.
  switch (o) {
    case Op::kAllReduce: return 2.0 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: return static_cast<double>(n - 1) / n;
    case Op::kSendRecv: return 1.0;
  }
  return 1.0;
}

// Elements per rank's send buffer for a reported size (float elements).
// all_gather: size is the output, send = size/n; reduce_scatter: size is the
// input, send = size; others: size is the send buffer.
struct Counts {
  size_t send, recv;
};
Counts CountsFor(Op o, size_t size_bytes, int n) {
  size_t total = size_bytes / sizeof(float);
  total -= total % static_cast<size_t>(n);  // divisible by n, as nccl-tests rounds
  switch (o) {
    case Op::kAllGather: return {total / n, total};
    case Op::kReduceScatter: return {total, total / n};
    default: return {total, total};
  }
}

struct Rank {
  int global = 0, local = 0, device = 0;
  std::string host;
  cudaStream_t comm_stream = nullptr, gemm_stream = nullptr;
  float *send = nullptr, *recv = nullptr;
  size_t capacity = 0;  // elements of each buffer
  cublasHandle_t blas = nullptr;
  __nv_bfloat16 *ga = nullptr, *gb = nullptr, *gc = nullptr;
};

struct Options {
  size_t min_bytes = 8, max_bytes = size_t{1} << 30;
  double factor = 2;
  int warmup = 5, iters = 20;
  std::vector<Op> ops;
  std::vector<std::string> groups;
  int64_t gm = 0, gn = 0, gk = 0;  // interference GEMM; 0 = none
  std::string out;
};

size_t ParseBytes(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  const std::string unit = end ? end : "";
  double mul = 1;
  if (unit == "K" || unit == "k") mul = 1024.0;
  else if (unit == "M" || unit == "m") mul = 1024.0 * 1024;
  else if (unit == "G" || unit == "g") mul = 1024.0 * 1024 * 1024;
  else if (!unit.empty()) {
    std::fprintf(stderr, "error: bad size '%s' (a number with K, M or G)\n", s.c_str());
    std::exit(2);
  }
  return static_cast<size_t>(v * mul);
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) if (!item.empty()) out.push_back(item);
  return out;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  o.min_bytes = ParseBytes(bench::OptionValue(argc, argv, "-b", "8"));
  o.max_bytes = ParseBytes(bench::OptionValue(argc, argv, "-e", "1G"));
  o.factor = std::atof(bench::OptionValue(argc, argv, "-f", "2").c_str());
  o.warmup = std::atoi(bench::OptionValue(argc, argv, "-w", "5").c_str());
  o.iters = std::atoi(bench::OptionValue(argc, argv, "-n", "20").c_str());
  o.out = bench::OutPath(argc, argv);
  const std::map<std::string, Op> names = {{"all_reduce", Op::kAllReduce}, {"all_gather", Op::kAllGather},
                                           {"reduce_scatter", Op::kReduceScatter}, {"all_to_all", Op::kAllToAll},
                                           {"send_recv", Op::kSendRecv}};
  for (const auto& n : SplitList(bench::OptionValue(argc, argv, "--ops", "all_reduce,all_gather,reduce_scatter,all_to_all,send_recv"))) {
    auto it = names.find(n);
    if (it == names.end()) {
      std::fprintf(stderr, "error: --ops: unknown collective '%s'\n", n.c_str());
      std::exit(2);
    }
    o.ops.push_back(it->second);
  }
  o.groups = SplitList(bench::OptionValue(argc, argv, "--groups", "all"));
  for (const auto& g : o.groups) {
    if (g != "all" && g != "node" && g != "rail") {
      std::fprintf(stderr, "error: --groups: '%s' is not one of all, node, rail\n", g.c_str());
      std::exit(2);
    }
  }
  const std::string gemm = bench::OptionValue(argc, argv, "--gemm", "");
  if (!gemm.empty()) {
    auto v = SplitList(gemm);
    if (v.size() != 3) {
      std::fprintf(stderr, "error: --gemm takes M,N,K\n");
      std::exit(2);
    }
    o.gm = std::atoll(v[0].c_str()), o.gn = std::atoll(v[1].c_str()), o.gk = std::atoll(v[2].c_str());
  }
  if (o.min_bytes < 4 || o.max_bytes < o.min_bytes || o.factor <= 1 || o.iters < 1 || o.warmup < 0) {
    std::fprintf(stderr, "error: need 4 <= -b <= -e, -f > 1, -n >= 1, -w >= 0\n");
    std::exit(2);
  }
  return o;
}

// ---- one communicator group over this process's ranks ----------------------

struct Group {
  std::string kind;        // all, node, rail
  int color = 0;           // which node / rail
  int size = 0;            // ranks in the group (all processes)
  std::vector<ncclComm_t> comms;  // one per local rank of this process, same order as ranks
};

void Launch(Op op, const Rank& r, ncclComm_t comm, const Counts& c, bool in_place, int nranks) {
  float* recv = r.recv;
  const float* send = r.send;
  if (in_place) {
    // nccl-tests' in-place layout: the send buffer is the rank's slice of recv
    // for all_gather, recv is the start of send for reduce_scatter.
    int rank = 0;
    ncclCommUserRank(comm, &rank);
    recv = r.recv;
    if (op == Op::kAllGather) send = r.recv + c.send * rank;
    else if (op == Op::kReduceScatter) { send = r.recv; recv = r.recv + c.recv * rank; }
    else send = r.recv;
  }
  switch (op) {
    case Op::kAllReduce:
      NCCL_CHECK(ncclAllReduce(send, recv, c.send, ncclFloat, ncclSum, comm, r.comm_stream));
      break;
    case Op::kAllGather:
      NCCL_CHECK(ncclAllGather(send, recv, c.send, ncclFloat, comm, r.comm_stream));
      break;
    case Op::kReduceScatter:
      NCCL_CHECK(ncclReduceScatter(send, recv, c.recv, ncclFloat, ncclSum, comm, r.comm_stream));
      break;
    case Op::kAllToAll: {
      const size_t chunk = c.send / nranks;
      NCCL_CHECK(ncclGroupStart());
      for (int p = 0; p < nranks; ++p) {
        NCCL_CHECK(ncclSend(send + p * chunk, chunk, ncclFloat, p, comm, r.comm_stream));
        NCCL_CHECK(ncclRecv(recv + p * chunk, chunk, ncclFloat, p, comm, r.comm_stream));
      }
      NCCL_CHECK(ncclGroupEnd());
      break;
    }
    case Op::kSendRecv: {
      // A ring shift, as nccl-tests' sendrecv_perf: send to rank+1, receive from rank-1.
      int rank = 0;
      ncclCommUserRank(comm, &rank);
      NCCL_CHECK(ncclGroupStart());
      NCCL_CHECK(ncclSend(send, c.send, ncclFloat, (rank + 1) % nranks, comm, r.comm_stream));
      NCCL_CHECK(ncclRecv(recv, c.send, ncclFloat, (rank - 1 + nranks) % nranks, comm, r.comm_stream));
      NCCL_CHECK(ncclGroupEnd());
      break;
    }
  }
}

double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SyncAll(std::vector<Rank>& ranks, const std::vector<int>& members, bool gemm_too) {
  for (int i : members) {
    BENCH_CUDA_CHECK(cudaSetDevice(ranks[i].device));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(ranks[i].comm_stream));
    if (gemm_too) BENCH_CUDA_CHECK(cudaStreamSynchronize(ranks[i].gemm_stream));
  }
}

void LaunchAll(Op op, std::vector<Rank>& ranks, const std::vector<int>& members, const Group& g, const Counts& c,
               bool in_place, int /*n*/) {
  NCCL_CHECK(ncclGroupStart());
  for (size_t j = 0; j < members.size(); ++j) {
    BENCH_CUDA_CHECK(cudaSetDevice(ranks[members[j]].device));
    Launch(op, ranks[members[j]], g.comms[j], c, in_place, g.size);
  }
  NCCL_CHECK(ncclGroupEnd());
}

// bf16 GEMM C[m×n] = A[m×k]·B[k×n] (fp32 accumulation) on the rank's GEMM stream.
void Gemm(Rank& r, const Options& o) {
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(r.blas, CUBLAS_OP_N, CUBLAS_OP_N, o.gn, o.gm, o.gk, &one, r.gb, CUDA_R_16BF, o.gn, r.ga,
                            CUDA_R_16BF, o.gk, &zero, r.gc, CUDA_R_16BF, o.gn, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

double AverageOverRanks(double v) {
#ifdef PARASIM_NCCL_BENCH_MPI
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  double sum = 0;
  MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum / n;
#else
  return v;
#endif
}

void Barrier() {
#ifdef PARASIM_NCCL_BENCH_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

// Seconds per collective: `iters` launches back to back, wall clock, as nccl-tests.
double TimeCollective(Op op, std::vector<Rank>& ranks, const std::vector<int>& members, const Group& g,
                      const Counts& c, bool in_place, const Options& o) {
  for (int w = 0; w < o.warmup; ++w) LaunchAll(op, ranks, members, g, c, in_place, g.size);
  SyncAll(ranks, members, false);
  Barrier();
  const double t0 = NowS();
  for (int it = 0; it < o.iters; ++it) LaunchAll(op, ranks, members, g, c, in_place, g.size);
  SyncAll(ranks, members, false);
  return AverageOverRanks((NowS() - t0) / o.iters);
}

// GEMM seconds each, alone (CUDA events on the GEMM stream of the first member).
double TimeGemmAlone(std::vector<Rank>& ranks, const std::vector<int>& members, const Options& o, int reps) {
  Rank& r = ranks[members[0]];
  BENCH_CUDA_CHECK(cudaSetDevice(r.device));
  for (int i = 0; i < 3; ++i) Gemm(r, o);
  cudaEvent_t a, b;
  BENCH_CUDA_CHECK(cudaEventCreate(&a));
  BENCH_CUDA_CHECK(cudaEventCreate(&b));
  BENCH_CUDA_CHECK(cudaEventRecord(a, r.gemm_stream));
  for (int i = 0; i < reps; ++i) Gemm(r, o);
  BENCH_CUDA_CHECK(cudaEventRecord(b, r.gemm_stream));
  BENCH_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1e-3 / reps;
}

struct Interference {
  double gemm_alone = 0, gemm_beside = 0, coll_alone = 0, coll_beside = 0;
  int gemm_reps = 0;
};

// Both at once: every member loops enough GEMMs on its GEMM stream to cover
// the collectives' alone time, then the collectives run; each side is timed
// by events on its own stream of the first member.
Interference TimeBeside(Op op, std::vector<Rank>& ranks, const std::vector<int>& members, const Group& g,
                        const Counts& c, const Options& o, double coll_alone) {
  Interference r;
  r.coll_alone = coll_alone;
  r.gemm_alone = TimeGemmAlone(ranks, members, o, 10);
  r.gemm_reps = std::max(3, static_cast<int>(std::ceil(coll_alone * o.iters / std::max(r.gemm_alone, 1e-9))) + 2);
  std::vector<cudaEvent_t> ev(4);
  Rank& first = ranks[members[0]];
  BENCH_CUDA_CHECK(cudaSetDevice(first.device));
  for (auto& e : ev) BENCH_CUDA_CHECK(cudaEventCreate(&e));
  SyncAll(ranks, members, true);
  Barrier();
  BENCH_CUDA_CHECK(cudaEventRecord(ev[0], first.gemm_stream));
  for (int i : members) {
    BENCH_CUDA_CHECK(cudaSetDevice(ranks[i].device));
    for (int k = 0; k < r.gemm_reps; ++k) Gemm(ranks[i], o);
  }
  BENCH_CUDA_CHECK(cudaSetDevice(first.device));
  BENCH_CUDA_CHECK(cudaEventRecord(ev[1], first.gemm_stream));
  BENCH_CUDA_CHECK(cudaEventRecord(ev[2], first.comm_stream));
  for (int it = 0; it < o.iters; ++it) LaunchAll(op, ranks, members, g, c, false, g.size);
  BENCH_CUDA_CHECK(cudaSetDevice(first.device));
  BENCH_CUDA_CHECK(cudaEventRecord(ev[3], first.comm_stream));
  SyncAll(ranks, members, true);
  float gemm_ms = 0, coll_ms = 0;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&gemm_ms, ev[0], ev[1]));
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&coll_ms, ev[2], ev[3]));
  r.gemm_beside = gemm_ms * 1e-3 / r.gemm_reps;
  r.coll_beside = AverageOverRanks(coll_ms * 1e-3 / o.iters);
  for (auto& e : ev) cudaEventDestroy(e);
  return r;
}

std::vector<size_t> Sizes(const Options& o) {
  std::vector<size_t> v;
  for (double s = static_cast<double>(o.min_bytes); s <= static_cast<double>(o.max_bytes) * 1.0000001; s *= o.factor)
    v.push_back(static_cast<size_t>(s));
  return v;
}

std::string EnvOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

// ---- setup: ranks, communicators, groups ------------------------------------

namespace {

struct World {
  std::vector<Rank> ranks;            // this process's ranks
  int nranks = 0;                     // all processes
  std::vector<std::string> hostnames; // per global rank
  bool mpi = false;
  std::vector<ncclComm_t> all;        // per local rank
};

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

void AllocRank(Rank& r, size_t max_elems, const Options& o) {
  BENCH_CUDA_CHECK(cudaSetDevice(r.device));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&r.comm_stream, cudaStreamNonBlocking));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&r.gemm_stream, cudaStreamNonBlocking));
  r.capacity = max_elems;
  BENCH_CUDA_CHECK(cudaMalloc(&r.send, max_elems * sizeof(float)));
  BENCH_CUDA_CHECK(cudaMalloc(&r.recv, max_elems * sizeof(float)));
  bench::FillFloat<<<1024, 256>>>(r.send, max_elems, 1.0f + r.global);
  bench::FillFloat<<<1024, 256>>>(r.recv, max_elems, 0.5f);
  BENCH_LAUNCH_CHECK();
  if (o.gm > 0) {
    CUBLAS_CHECK(cublasCreate(&r.blas));
    CUBLAS_CHECK(cublasSetStream(r.blas, r.gemm_stream));
    BENCH_CUDA_CHECK(cudaMalloc(&r.ga, o.gm * o.gk * sizeof(__nv_bfloat16)));
    BENCH_CUDA_CHECK(cudaMalloc(&r.gb, o.gk * o.gn * sizeof(__nv_bfloat16)));
    BENCH_CUDA_CHECK(cudaMalloc(&r.gc, o.gm * o.gn * sizeof(__nv_bfloat16)));
    bench::FillBf16<<<1024, 256>>>(r.ga, o.gm * o.gk, 1);
    bench::FillBf16<<<1024, 256>>>(r.gb, o.gk * o.gn, 2);
    BENCH_LAUNCH_CHECK();
  }
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

World InitWorld(int* argc, char*** argv, const Options& o) {
  World w;
  int ndev = 0;
  BENCH_CUDA_CHECK(cudaGetDeviceCount(&ndev));
  // Largest buffer: the largest size (all_gather/reduce_scatter use size as the full buffer).
  const size_t max_elems = o.max_bytes / sizeof(float) + 1;
#ifdef PARASIM_NCCL_BENCH_MPI
  MPI_Init(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  w.mpi = true;
  w.nranks = size;
  std::vector<char> names(static_cast<size_t>(size) * 256, 0);
  std::string me = Hostname();
  me.resize(255);
  MPI_Allgather(me.data(), 256, MPI_CHAR, names.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
  for (int i = 0; i < size; ++i) w.hostnames.emplace_back(names.data() + 256 * i);
  Rank r;
  r.global = rank;
  for (int i = 0; i < rank; ++i) r.local += w.hostnames[i] == w.hostnames[rank];
  r.host = w.hostnames[rank];
  r.device = r.local % ndev;
  AllocRank(r, max_elems, o);
  w.ranks.push_back(r);
  ncclUniqueId id;
  if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  w.all.resize(1);
  BENCH_CUDA_CHECK(cudaSetDevice(r.device));
  NCCL_CHECK(ncclCommInitRank(&w.all[0], size, id, rank));
#else
  (void)argc;
  (void)argv;
  w.nranks = ndev;
  const std::string host = Hostname();
  std::vector<int> devs(ndev);
  for (int d = 0; d < ndev; ++d) {
    devs[d] = d;
    Rank r;
    r.global = r.local = r.device = d;
    r.host = host;
    AllocRank(r, max_elems, o);
    w.ranks.push_back(r);
    w.hostnames.push_back(host);
  }
  w.all.resize(ndev);
  NCCL_CHECK(ncclCommInitAll(w.all.data(), ndev, devs.data()));
#endif
  return w;
}

int NodeIndex(const World& w, const std::string& host) {
  std::vector<std::string> seen;
  for (const auto& h : w.hostnames)
    if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
  return static_cast<int>(std::find(seen.begin(), seen.end(), host) - seen.begin());
}

// The groups of one kind that hold this process's ranks: "all" is the world
// communicator, "node" splits by host, "rail" by local rank (ncclCommSplit).
std::vector<Group> MakeGroups(World& w, const std::string& kind) {
  if (kind == "all") {
    Group g{"all", 0, w.nranks, w.all};
    return {g};
  }
  std::vector<int> colors;
  for (const Rank& r : w.ranks) colors.push_back(kind == "node" ? NodeIndex(w, r.host) : r.local);
  std::vector<ncclComm_t> split(w.ranks.size());
  NCCL_CHECK(ncclGroupStart());
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    BENCH_CUDA_CHECK(cudaSetDevice(w.ranks[i].device));
    NCCL_CHECK(ncclCommSplit(w.all[i], colors[i], w.ranks[i].global, &split[i], nullptr));
  }
  NCCL_CHECK(ncclGroupEnd());
  std::map<int, Group> by_color;
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    Group& g = by_color[colors[i]];
    g.kind = kind;
    g.color = colors[i];
    NCCL_CHECK(ncclCommCount(split[i], &g.size));
    g.comms.push_back(split[i]);
  }
  std::vector<Group> out;
  for (auto& [c, g] : by_color) out.push_back(g);
  return out;
}

// Members (indices into w.ranks) of a group, in the order of g.comms.
std::vector<int> Members(const World& w, const Group& g) {
  std::vector<int> m;
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    const int color = g.kind == "all" ? 0 : g.kind == "node" ? NodeIndex(w, w.ranks[i].host) : w.ranks[i].local;
    if (color == g.color) m.push_back(static_cast<int>(i));
  }
  return m;
}

std::string ResultJson(double t, size_t size, double bus) {
  const double algbw = t > 0 ? size / t / 1e9 : 0;
  std::ostringstream o;
  o << "{\"time_us\": " << bench::Num(t * 1e6) << ", \"algbw_GBps\": " << bench::Num(algbw)
    << ", \"busbw_GBps\": " << bench::Num(algbw * bus) << "}";
  return o.str();
}

std::string TableJson(Op op, World& w, const Group& g, const Options& o, std::string* interference) {
  const std::vector<int> members = Members(w, g);
  const double bus = BusFactor(op, g.size);
  std::ostringstream rows;
  const std::vector<size_t> sizes = Sizes(o);
  for (size_t si = 0; si < sizes.size(); ++si) {
    const Counts c = CountsFor(op, sizes[si], g.size);
    if (c.send == 0 || (op == Op::kAllToAll && c.send / g.size == 0)) continue;
    const size_t size = (op == Op::kAllGather ? c.recv : c.send) * sizeof(float);
    const double oop = TimeCollective(op, w.ranks, members, g, c, false, o);
    const double ip = TimeCollective(op, w.ranks, members, g, c, true, o);
    if (rows.tellp() > 0) rows << ",\n";
    rows << "     {\"size\": " << size << ", \"count\": " << (op == Op::kAllGather ? c.send : op == Op::kReduceScatter ? c.recv : c.send)
         << ", \"out_of_place\": " << ResultJson(oop, size, bus) << ", \"in_place\": " << ResultJson(ip, size, bus) << "}";
    // Interference at the largest size and every 16x below it down to 1 MiB.
    const size_t from_top = sizes.size() - 1 - si;
    if (o.gm > 0 && size >= (size_t{1} << 20) && from_top % 4 == 0) {
      const Interference f = TimeBeside(op, w.ranks, members, g, c, o, oop);
      std::ostringstream j;
      j << "  {\"collective\": \"" << OpName(op) << "\", \"group\": \"" << g.kind << "\", \"group_ranks\": " << g.size
        << ", \"size\": " << size << ", \"gemm\": {\"m\": " << o.gm << ", \"n\": " << o.gn << ", \"k\": " << o.gk
        << ", \"dtype\": \"bf16\"}, \"gemm_reps\": " << f.gemm_reps << ", \"gemm_alone_us\": " << bench::Num(f.gemm_alone * 1e6)
        << ", \"gemm_beside_us\": " << bench::Num(f.gemm_beside * 1e6)
        << ", \"gemm_slowdown\": " << bench::Num(f.gemm_beside / f.gemm_alone)
        << ", \"collective_alone_us\": " << bench::Num(f.coll_alone * 1e6)
        << ", \"collective_beside_us\": " << bench::Num(f.coll_beside * 1e6)
        << ", \"collective_slowdown\": " << bench::Num(f.coll_beside / f.coll_alone) << "}";
      if (!interference->empty()) *interference += ",\n";
      *interference += j.str();
    }
  }
  std::ostringstream t;
  t << "  {\"collective\": \"" << OpName(op) << "\", \"group\": \"" << g.kind << "\", \"group_color\": " << g.color
    << ", \"group_ranks\": " << g.size << ", \"bus_factor\": " << bench::Num(bus) << ", \"type\": \"float\", \"redop\": \""
    << (op == Op::kAllReduce || op == Op::kReduceScatter ? "sum" : "none") << "\",\n   \"rows\": [\n"
    << rows.str() << "]}";
  return t.str();
}

std::string HeaderJson(const World& w, const Options& o) {
  int v = 0;
  NCCL_CHECK(ncclGetVersion(&v));
  std::ostringstream s;
  s << "{\"kind\": \"nccl_bench\", \"program\": \"parasim_nccl_bench\", \"timestamp\": " << bench::Str(bench::UtcNow())
    << ",\n \"device\": " << bench::DeviceJson(w.ranks[0].device) << ",\n \"nccl_version\": \"" << v / 10000 << "."
    << (v % 10000) / 100 << "." << v % 100 << "\", \"nccl_version_code\": " << v
    << ", \"bootstrap\": \"" << (w.mpi ? "mpi" : "single_process") << "\",\n \"env\": {";
  const char* vars[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS",
                        "NCCL_NVLS_ENABLE", "NCCL_IB_HCA", "NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL"};
  bool first = true;
  for (const char* var : vars) {
    s << (first ? "" : ", ") << "\"" << var << "\": " << bench::Str(EnvOr(var));
    first = false;
  }
  std::map<std::string, int> per_node;
  for (const auto& h : w.hostnames) ++per_node[h];
  s << "},\n \"ranks\": " << w.nranks << ", \"nodes\": " << per_node.size()
    << ", \"ranks_per_node\": " << (per_node.empty() ? 0 : per_node.begin()->second) << ", \"hostnames\": [";
  for (size_t i = 0; i < w.hostnames.size(); ++i) s << (i ? ", " : "") << bench::Str(w.hostnames[i]);
  s << "],\n \"dtype\": \"float\", \"warmup\": " << o.warmup << ", \"iters\": " << o.iters
    << ", \"timing\": \"wall clock over iters back-to-back launches, mean over ranks (nccl-tests)\",\n";
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "error: no CUDA device\n");
    return 3;
  }
  World w = InitWorld(&argc, &argv, o);
  const bool root = w.ranks[0].global == 0;
  std::string tables, interference;
  for (const std::string& kind : o.groups) {
    for (const Group& g : MakeGroups(w, kind)) {
      for (Op op : o.ops) {
        if (root) std::fprintf(stderr, "nccl_bench: %s over %s group %d (%d ranks)\n", OpName(op), kind.c_str(), g.color, g.size);
        const std::string t = TableJson(op, w, g, o, &interference);
        if (!tables.empty()) tables += ",\n";
        tables += t;
      }
    }
  }
  if (root) bench::Emit(HeaderJson(w, o) + " \"tables\": [\n" + tables + "],\n \"interference\": [\n" + interference + "]}\n", o.out);
#ifdef PARASIM_NCCL_BENCH_MPI
  MPI_Finalize();
#endif
  return 0;
}
