// Importer of profiled training steps (calibrate/kineto_trace.h): kernel
// classes from real kernel names, interval arithmetic, a hand-written Kineto
// trace whose numbers are derived below, step detection fallbacks, bad files.
#include "calibrate/kineto_trace.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "calibrate/gzip_file.h"
#include "core/error.h"

namespace parasim::calibrate {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

std::string Fixture(const std::string& name) {
  return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/traces/" + name;
}

// Microseconds, compared to 1 ps.
#define CHECK_US(seconds, us) CHECK_THAT((seconds).si() * 1e6, WithinAbs(us, 1e-6))

TEST_CASE("kineto: kernel names map to classes", "[calibrate]") {
  struct Case {
    const char* name;
    KernelClass cls;
  };
  // Names as they appear in public torch.profiler traces.
  const Case cases[] = {
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kNccl},
      {"ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclWorkElem)", KernelClass::kNccl},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kNccl},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
       "kernel__5x_cublas",
       KernelClass::kGemm},
      {"ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn", KernelClass::kGemm},
      {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", KernelClass::kGemm},
      {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>("
       "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)",
       KernelClass::kGemm},
      {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, "
       "false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*)",
       KernelClass::kGemm},
      {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>("
       "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>>, float, float)",
       KernelClass::kGemm},
      {"triton_tem_fused_mm_0", KernelClass::kGemm},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
       "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, "
       "false>(Flash_fwd_params)",
       KernelClass::kAttention},
      {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<cute::tuple<cute::C<128>, "
       "cute::C<128>, cute::C<128> >, 2, true> > >(flash::FlashAttnFwdSm90<...>::Params)",
       KernelClass::kAttention},
      {"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
       "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)",
       KernelClass::kAttention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x128x64_4x1x1_cga1x1x1_kernel0_0",
       KernelClass::kAttention},
      {"triton_tem_fused_flex_attention_0", KernelClass::kAttention},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
       "(at::native::ADAM_MODE)1, false>, float*, double>(...)",
       KernelClass::kOptimizer},
      {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float>(...)",
       KernelClass::kOptimizer},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
       KernelClass::kElementwiseOther},
      {"triton_poi_fused_add_mul_0", KernelClass::kElementwiseOther},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, "
       "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
       KernelClass::kElementwiseOther},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(ToString(ClassifyKernelName(c.name)) == std::string(ToString(c.cls)));
  }
  // Every pattern is lowercase (names are lowercased before matching) and
  // classifies a name made of itself.
  for (const KernelNamePattern& p : KernelNamePatterns()) {
    INFO(p.needle);
    for (const char* ch = p.needle; *ch; ++ch) CHECK(!(*ch >= 'A' && *ch <= 'Z'));
    const KernelClass got = ClassifyKernelName(p.needle);
    // Earlier rows may win ("xmma" alone is GEMM; no row shadows a later one of another class).
    CHECK(got == p.cls);
  }
}

TEST_CASE("kineto: collective kinds from NCCL kernels, PyTorch op names and parasim ops", "[calibrate]") {
  struct Case {
    const char* name;
    CollectiveKind kind;
  };
  const Case cases[] = {
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", CollectiveKind::kAllGather},
      {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       CollectiveKind::kReduceScatter},
      {"ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclWorkElem)", CollectiveKind::kAllReduce},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", CollectiveKind::kSendRecv},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", CollectiveKind::kSendRecv},
      {"ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", CollectiveKind::kBroadcast},
      {"ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", CollectiveKind::kReduce},
      {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", CollectiveKind::kOther},
      {"_allgather_base", CollectiveKind::kAllGather},
      {"reduce_scatter_tensor_coalesced", CollectiveKind::kReduceScatter},
      {"all_to_allv", CollectiveKind::kAllToAll},
      {"tp_sp_reducescatter L3 mb0", CollectiveKind::kReduceScatter},
      {"ep_alltoall L1 mb2", CollectiveKind::kAllToAll},
      {"send_activation L0 mb1", CollectiveKind::kSendRecv},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(ToString(ClassifyCollectiveName(c.name)) == std::string(ToString(c.kind)));
  }
}

TEST_CASE("kineto: interval union and difference", "[calibrate]") {
  // [0,2] and [1,3] merge to [0,3]; [3,4] touches it; [6,7] stays apart.
  const std::vector<Interval> u = MergeIntervals({{6, 7}, {1, 3}, {0, 2}, {3, 4}});
  REQUIRE(u == std::vector<Interval>{{0, 4}, {6, 7}});
  CHECK(TotalLength(u) == 5);
  // comm [0,10] minus compute [1,2] [4,5] [9,12]: 1 + 2 + 4 = 7 uncovered.
  CHECK(LengthNotCovered({{0, 10}}, {{1, 2}, {4, 5}, {9, 12}}) == 7);
  // Two comm intervals inside one compute interval, one partly outside.
  CHECK(LengthNotCovered({{1, 2}, {3, 4}, {8, 11}}, {{0, 9}}) == 2);
  CHECK(LengthNotCovered({{0, 3}}, {}) == 3);
  CHECK(LengthNotCovered({}, {{0, 3}}) == 0);
}

// tests/testdata/traces/fsdp_two_steps.json: one rank, stream 7 compute,
// stream 20 NCCL, ProfilerStep#0 (warm-up) to #2, times in µs.
//   before #0: an elementwise kernel [650,660], launched at 600 outside any step.
//   #0: gemm [800,900].
//   #1: gemm [1100,1150], attention [1160,1190], elementwise [1200,1210],
//       optimizer [1250,1270]; memcpy [1240,1248]; all_gather [1120,1180],
//       reduce_scatter [1205,1245] (the second launched from another thread).
//     compute = 50+30+10+20 = 110; comm = 60+40 = 100;
//     exposed: AG minus compute = [1150,1160] = 10; RS minus compute =
//       [1210,1245] = 35 (the memcpy [1240,1248] hides nothing); 45 in all;
//     overlapped = 100-45 = 55; busy = [1100,1190] 90 + [1200,1248] 48 +
//       [1250,1270] 20 = 158; span = 1270-1100 = 170; idle = 12.
//     host [1000,1300]: 6 launch calls (5+6+4+5+6+4 = 30 µs, mean 5), 8
//       runtime calls (+ memcpy 3 + sync 150 = 183 µs).
//   #2: gemm [1400,1460], elementwise [1470,1480], [1510,1520]; memset
//       [1465,1470]; all_reduce [1440,1500].
//     compute = 80; comm = 60; exposed = [1460,1470] + [1480,1500] = 30 (the
//       memset hides nothing); overlapped 30; busy = [1400,1500] 100 +
//       [1510,1520] 10 = 110; span 120; idle 10.
//     host [1300,1600]: 4 launch calls (21 µs), 6 runtime calls (223 µs).
TEST_CASE("kineto: a hand-written two-step trace", "[calibrate]") {
  TraceReadOptions opt;
  opt.skip_steps = 1;
  const StepTraceSummary s = ReadKinetoTrace(Fixture("fsdp_two_steps.json"), opt);
  CHECK(s.format == TraceFormat::kKineto);
  CHECK(s.step_source == StepSource::kCpuAnnotations);
  CHECK(s.rank == 0);
  CHECK(s.world_size == 2);
  CHECK(s.device_names.at(0) == "NVIDIA H100 80GB HBM3");
  CHECK(s.steps_found == 3);
  CHECK(s.gpu_events == 14);
  CHECK(s.unattributed_gpu_events == 1);
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].number == 1);
  CHECK(s.steps[1].number == 2);

  const DeviceStep& a = s.steps[0].devices.at(0);
  CHECK(a.device == 0);
  CHECK(a.streams == 2);
  CHECK_US(a.span, 170);
  CHECK_US(a.busy, 158);
  CHECK_US(a.idle, 12);
  CHECK_US(a.compute, 110);
  CHECK_US(a.comm, 100);
  CHECK_US(a.exposed_comm, 45);
  CHECK_US(a.overlapped_comm, 55);
  const auto cls = [](const DeviceStep& d, KernelClass c) { return d.by_class[static_cast<int>(c)]; };
  const auto coll = [](const DeviceStep& d, CollectiveKind k) { return d.by_collective[static_cast<int>(k)]; };
  CHECK(cls(a, KernelClass::kGemm).kernels == 1);
  CHECK(cls(a, KernelClass::kAttention).kernels == 1);
  CHECK(cls(a, KernelClass::kOptimizer).kernels == 1);
  CHECK(cls(a, KernelClass::kElementwiseOther).kernels == 1);
  CHECK(cls(a, KernelClass::kMemcpy).kernels == 1);
  CHECK(cls(a, KernelClass::kNccl).kernels == 2);
  CHECK_US(cls(a, KernelClass::kMemcpy).busy, 8);
  CHECK_US(coll(a, CollectiveKind::kAllGather).exposed, 10);
  CHECK_US(coll(a, CollectiveKind::kReduceScatter).exposed, 35);
  CHECK(s.steps[0].host.launches == 6);
  CHECK_US(s.steps[0].host.launch_mean, 5);
  CHECK(s.steps[0].host.runtime_calls == 8);
  CHECK_US(s.steps[0].host.runtime_sum, 183);

  const DeviceStep& b = s.steps[1].devices.at(0);
  CHECK_US(b.span, 120);
  CHECK_US(b.busy, 110);
  CHECK_US(b.idle, 10);
  CHECK_US(b.compute, 80);
  CHECK_US(b.exposed_comm, 30);
  CHECK_US(b.overlapped_comm, 30);
  CHECK_US(cls(b, KernelClass::kMemset).busy, 5);
  CHECK_US(coll(b, CollectiveKind::kAllReduce).busy, 60);

  // The mean of the two steps.
  const DeviceStep& m = s.mean.devices.at(0);
  CHECK(m.steps == 2);
  CHECK_US(m.span, 145);
  CHECK_US(m.idle, 11);
  CHECK_US(m.compute, 95);
  CHECK_US(m.comm, 80);
  CHECK_US(m.exposed_comm, 37.5);
  CHECK_US(m.overlapped_comm, 42.5);
  CHECK(coll(m, CollectiveKind::kAllGather).kernels == 0.5);
  CHECK_US(coll(m, CollectiveKind::kReduceScatter).exposed, 17.5);
  CHECK_US(s.mean.window, 145);
  CHECK(s.mean.host.launches == 5);
  CHECK_US(s.mean.host.launch_mean, 5.1);  // (30 + 21) / 10
  CHECK(s.mean.host.runtime_calls == 7);

  // No warm-up skipped: step #0 is one GEMM, 100 µs, nothing exposed.
  const StepTraceSummary all = ReadKinetoTrace(Fixture("fsdp_two_steps.json"), TraceReadOptions{});
  REQUIRE(all.steps.size() == 3);
  CHECK_US(all.steps[0].devices.at(0).compute, 100);
  CHECK_US(all.steps[0].devices.at(0).exposed_comm, 0);
  opt.max_steps = 1;
  CHECK(ReadKinetoTrace(Fixture("fsdp_two_steps.json"), opt).steps.size() == 1);
}

// A minimal event list as Kineto writes it, with the given extra events.
std::string Trace(const std::string& events) { return "{\"schemaVersion\": 1, \"traceEvents\": [" + events + "]}"; }

std::string Kernel(const char* name, double ts, double dur, int stream, int correlation = -1) {
  return StrCat(R"({"ph": "X", "cat": "kernel", "name": ")", name, R"(", "pid": 0, "tid": )", stream,
                R"(, "ts": )", ts, R"(, "dur": )", dur, R"(, "args": {"device": 0, "stream": )", stream,
                correlation >= 0 ? StrCat(R"(, "correlation": )", correlation) : std::string(), "}}");
}

TEST_CASE("kineto: steps from GPU annotations, or the whole trace", "[calibrate]") {
  // No runtime events: GPU ProfilerStep ranges split the kernels.
  const std::string gpu_steps = Trace(
      Kernel("gemm_a", 10, 10, 7) + "," + Kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 15, 10, 20) + "," +
      Kernel("gemm_b", 40, 10, 7) + "," +
      R"({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#4", "pid": 0, "tid": 7, "ts": 9.999,)"
      R"( "dur": 20.002},)"
      R"({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#5", "pid": 0, "tid": 7, "ts": 39.999,)"
      R"( "dur": 10.002})");
  StepTraceSummary s = ParseKinetoTrace(gpu_steps, "gpu.json", TraceReadOptions{});
  CHECK(s.step_source == StepSource::kGpuAnnotations);
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].number == 4);
  // Step 4: gemm [10,20], all_reduce [15,25]: 5 µs exposed, span 15, idle 0.
  CHECK_US(s.steps[0].devices.at(0).exposed_comm, 5);
  CHECK_US(s.steps[0].devices.at(0).idle, 0);
  CHECK_US(s.steps[1].devices.at(0).compute, 10);

  // No markers: one step, every kernel; no runtime calls, so no host figures.
  const std::string plain = Trace(Kernel("gemm_a", 10, 10, 7) + "," + Kernel("gemm_b", 40, 10, 7));
  s = ParseKinetoTrace(plain, "plain.json", TraceReadOptions{});
  CHECK(s.step_source == StepSource::kWholeTrace);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].number == -1);
  CHECK_US(s.steps[0].devices.at(0).idle, 20);
  CHECK(s.steps[0].host.runtime_calls == 0);
  TraceReadOptions skip;
  skip.skip_steps = 1;
  CHECK_THROWS_WITH(ParseKinetoTrace(plain, "plain.json", skip),
                    Contains("plain.json") && Contains("skip_steps") && Contains("has 1 step"));
  TraceReadOptions dev;
  dev.device = 3;
  CHECK_THROWS_WITH(ParseKinetoTrace(plain, "plain.json", dev), Contains("3 has no GPU events") && Contains("0"));
}

TEST_CASE("kineto: PyTorch's collective name wins over the NCCL kernel's; old category spellings", "[calibrate]") {
  // all_to_all runs as SendRecv kernels; Kineto copies the op name into args.
  const std::string text = Trace(
      R"j({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",)j"
      R"j( "pid": 0, "tid": 20, "ts": 0, "dur": 10, "args": {"device": 0, "stream": 20,)j"
      R"j( "Collective name": "all_to_allv"}},)j"
      // PyTorch <= 1.9 wrote "Kernel", "Memcpy" and "Runtime".
      R"j({"ph": "X", "cat": "Kernel", "name": "volta_h884gemm_256x128_ldg8_nn", "pid": 0, "tid": 7, "ts": 5,)j"
      R"j( "dur": 10, "args": {"device": 0, "stream": 7}},)j"
      R"j({"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7, "ts": 20,)j"
      R"j( "dur": 2, "args": {"device": 0, "stream": 7}})j");
  const StepTraceSummary s = ParseKinetoTrace(text, "old.json", TraceReadOptions{});
  const DeviceStep& d = s.steps.at(0).devices.at(0);
  CHECK(d.by_collective[static_cast<int>(CollectiveKind::kAllToAll)].kernels == 1);
  CHECK(d.by_class[static_cast<int>(KernelClass::kGemm)].kernels == 1);
  CHECK(d.by_class[static_cast<int>(KernelClass::kMemcpy)].kernels == 1);
  // all_to_all [0,10] beside gemm [5,15]: 5 exposed; span 22, busy 17.
  CHECK_US(d.exposed_comm, 5);
  CHECK_US(d.idle, 5);
}

TEST_CASE("kineto: bad files name the file, the event and the problem", "[calibrate]") {
  const TraceReadOptions opt;
  CHECK_THROWS_WITH(ParseKinetoTrace("{\"traceEvents\": [", "t.json", opt),
                    Contains("t.json") && Contains("not valid JSON"));
  CHECK_THROWS_WITH(ParseKinetoTrace("this is not json", "t.json", opt), Contains("not valid JSON"));
  CHECK_THROWS_WITH(ParseKinetoTrace("{\"schemaVersion\": 1}", "t.json", opt),
                    Contains("t.json: traceEvents: missing"));
  CHECK_THROWS_WITH(ParseKinetoTrace("[]", "t.json", opt), Contains("not a JSON object"));
  CHECK_THROWS_WITH(ParseKinetoTrace(Trace(R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "dur": 1})"),
                                     "t.json", opt),
                    Contains("t.json: traceEvents[0]") && Contains("\"ts\""));
  CHECK_THROWS_WITH(ParseKinetoTrace(Trace(Kernel("ok", 0, 1, 7) + R"(, {"ph": "X", "name": "k", "ts": 3})"),
                                     "t.json", opt),
                    Contains("traceEvents[1]") && Contains("\"dur\""));
  CHECK_THROWS_WITH(ParseKinetoTrace(Trace(Kernel("gemm", 5, -2, 7)), "t.json", opt),
                    Contains("traceEvents[0]") && Contains("negative \"dur\""));
  CHECK_THROWS_WITH(ParseKinetoTrace(Trace(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1})"),
                                     "t.json", opt),
                    Contains("without a device"));
  // Every problem is reported, not only the first.
  try {
    ParseKinetoTrace(Trace(Kernel("a", 5, -2, 7) + "," + Kernel("b", 5, 1, 7) + "," + Kernel("c", 5, -1, 7)),
                     "t.json", opt);
    FAIL("no error");
  } catch (const InvalidInput& e) {
    REQUIRE(e.issues().size() == 2);
    CHECK(e.issues()[1].key == "traceEvents[2]");
  }
  CHECK_THROWS_WITH(ReadKinetoTrace(Fixture("does-not-exist.json"), opt), Contains("cannot read"));
  CHECK_THROWS_WITH(ReadKinetoTrace(Fixture("does-not-exist.json.gz"), opt), Contains("cannot read"));
  // A gzip file is known by its magic bytes, whatever its name; a truncated
  // one is an error naming the file (a build without zlib says to gunzip it).
  const std::filesystem::path gz =
      std::filesystem::temp_directory_path() / ("parasim_trace_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream f(gz, std::ios::binary);
    f << "\x1f\x8b\x08";
  }
  CHECK_THROWS_WITH(ReadKinetoTrace(gz.string(), opt),
                    Contains(gz.string()) && Contains(GzipSupported() ? "corrupt gzip" : "gunzip"));
  std::filesystem::remove(gz);
}

TEST_CASE("kineto trace: a gzipped trace reads as the plain one", "[calibrate][trace]") {
  if (!GzipSupported()) return;  // built without zlib: the error case above covers it
  TraceReadOptions opt;
  const StepTraceSummary plain = ReadKinetoTrace(Fixture("fsdp_two_steps.json"), opt);
  const StepTraceSummary gz = ReadKinetoTrace(Fixture("fsdp_two_steps.json.gz"), opt);
  CHECK(gz.gpu_events == plain.gpu_events);
  CHECK(gz.steps_found == plain.steps_found);
  REQUIRE(gz.mean.devices.size() == plain.mean.devices.size());
  CHECK(gz.mean.devices[0].busy.si() == plain.mean.devices[0].busy.si());
  CHECK(gz.mean.devices[0].exposed_comm.si() == plain.mean.devices[0].exposed_comm.si());
  // Two gzip members back to back (`cat a.gz b.gz`) inflate to both texts:
  // the trace twice is no longer one JSON document.
  const std::filesystem::path twice =
      std::filesystem::temp_directory_path() / ("parasim_trace2_" + std::to_string(::getpid()) + ".json.gz");
  {
    std::ifstream in(Fixture("fsdp_two_steps.json.gz"), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::ofstream out(twice, std::ios::binary);
    out << ss.str() << ss.str();
  }
  CHECK(ReadMaybeGzipFile(twice.string()).size() == 2 * ReadMaybeGzipFile(Fixture("fsdp_two_steps.json")).size());
  std::filesystem::remove(twice);
}

TEST_CASE("kineto trace: interference from same-name kernels beside NCCL and alone", "[calibrate][trace]") {
  // sm90_xmma_gemm twice alone (10 µs), once under an all-gather (12 µs): 1.2.
  // The elementwise kernel half covered (11 µs: [60,71], NCCL to 65.5) counts
  // as beside; alone it takes 10 µs: 1.1. A GEMM name seen only beside NCCL
  // (cutlass_other) is not compared.
  const std::string text = Trace(
      Kernel("sm90_xmma_gemm_a", 0, 10, 7) + "," + Kernel("sm90_xmma_gemm_a", 20, 10, 7) + "," +
      Kernel("ncclDevKernel_AllGather_RING_LL", 39, 26.5, 20) + "," + Kernel("sm90_xmma_gemm_a", 40, 12, 7) + "," +
      Kernel("cutlass_other_gemm", 52, 5, 7) + "," + Kernel("vectorized_elementwise_kernel", 60, 11, 7) + "," +
      Kernel("vectorized_elementwise_kernel", 80, 10, 7));
  const StepTraceSummary s = ParseKinetoTrace(text, "interference.json", TraceReadOptions{});
  const DeviceStep& d = s.mean.devices.at(0);
  CHECK_THAT(d.matmul_slowdown.Factor(), Catch::Matchers::WithinRel(1.2, 1e-9));
  CHECK_THAT(d.matmul_slowdown.weight, Catch::Matchers::WithinRel(10e-6, 1e-9));
  CHECK_THAT(d.memory_slowdown.Factor(), Catch::Matchers::WithinRel(1.1, 1e-9));
  // No NCCL at all: nothing compared.
  const StepTraceSummary quiet =
      ParseKinetoTrace(Trace(Kernel("sm90_xmma_gemm_a", 0, 10, 7)), "quiet.json", TraceReadOptions{});
  CHECK(quiet.mean.devices.at(0).matmul_slowdown.Factor() == 0.0);
}

}  // namespace
}  // namespace parasim::calibrate
