// The built-in studies, as data: each names its base (model, cluster, job)
// and the fields it varies. No result is written here; change a line and
// the study asks a different question. Inputs: the seed paper's set-ups where
// a study repeats one of its figures (shared validation notes, F5), else
// public training set-ups (Llama 3: 16M-token batches of 8,192 tokens).
#include "planner/study.h"

#include "core/did_you_mean.h"
#include "core/error.h"

namespace parasim::planner {

namespace {

// Every compute peak of the profile (tensor and FP32) at once.
constexpr const char* kComputeKeys = "gpu.bf16_dense+gpu.fp16_dense+gpu.fp8_dense+gpu.tf32_dense+gpu.fp32";
constexpr const char* kHbmKeys = "gpu.hbm_bandwidth+gpu.hbm_capacity";

std::vector<StudySpec> MakeStudies() {
  std::vector<StudySpec> s;
  // Seed Figure 7 (F5): Llama-2 7B, 32 DGX nodes, global batch 512 of 4k.
  // From A100 to H100 the GPU's compute triples (312 -> 989 TFLOP/s) and
  // NVLink grows 1.5x, while the NIC per GPU only doubles (200 -> 400 Gb/s).
  s.push_back({"a100-to-h100",
               "what moving from DGX A100 to DGX H100 buys: the GPU (compute, HBM, NVLink) and the NIC apart",
               "throughput", "speedup",
               {{"llama2-7b, 256 GPUs", "llama2-7b", "dgx-a100", 256, 512, 4096, {},
                 {"inter_node.nic_bandwidth=200Gb/s,400Gb/s", "gpu=a100-sxm,h100-sxm"}}}});
  s.back().vs_run_start = true;
  // Global batch 2,304 x 8k (18.9M tokens, near Llama 3 405B's 16M) so that
  // data parallelism can take the factor 9 of whole-rack GPU counts.
  // 4-GPU trays (GB200 compute trays) joined into NVLink domains of 8, 36
  // and 72 GPUs; GPU counts are whole NVL72 racks.
  const std::vector<std::string> trays = {"gpus_per_node=4", "inter_node.nics_per_node=4"};
  const std::string domains = "intra_node.nvlink_domain_size=8,36,72";
  const std::string sizes = "nodes=576,4608";
  s.push_back({"nvlink-domain", "what a larger NVLink domain (8 -> 36 -> 72 GPUs) buys a 70B and a 405B model at 2k-18k GPUs",
               "throughput", "speedup",
               {{"llama3-70b", "llama3-70b", "gb200-nvl72", 72, 2304, 8192, trays, {sizes, domains}},
                {"llama3-405b", "llama3-405b", "gb200-nvl72", 72, 2304, 8192, trays, {sizes, domains}}}});
  s.push_back({"network-800g", "what 800 and 1,600 Gb/s NICs buy over 400 Gb/s at 2,048 H100",
               "throughput", "speedup",
               {{"llama2-7b, batch 1024x4k", "llama2-7b", "dgx-h100", 2048, 1024, 4096, {},
                 {"inter_node.nic_bandwidth=400Gb/s,800Gb/s,1600Gb/s"}},
                {"llama3-70b, batch 1024x8k", "llama3-70b", "dgx-h100", 2048, 1024, 8192, {},
                 {"inter_node.nic_bandwidth=400Gb/s,800Gb/s,1600Gb/s"}}}});
  s.push_back({"future-gpu", "an H100 successor with 3x the compute and 1.5x the HBM on the same network (2,048 GPUs)",
               "throughput", "speedup",
               {{"llama2-7b, batch 1024x4k", "llama2-7b", "dgx-h100", 2048, 1024, 4096, {},
                 {std::string(kHbmKeys) + "=x1,x1.5", std::string(kComputeKeys) + "=x1,x3"}},
                {"llama3-70b, batch 1024x8k", "llama3-70b", "dgx-h100", 2048, 1024, 8192, {},
                 {std::string(kHbmKeys) + "=x1,x1.5", std::string(kComputeKeys) + "=x1,x3"}}}});
  s.back().vs_run_start = true;
  // H100 SXM power limits from the rated 700 W down to 300 W (the HGX
  // baseboard allows 200-700 W: DGX B200/H100 user guide, power capping).
  s.push_back({"power-cap", "tokens per joule against a GPU power cap (H100, 700 W down to 300 W)",
               "tokens-per-joule", "tokens-per-joule",
               {{"llama2-7b, 256 GPUs, batch 512x4k", "llama2-7b", "dgx-h100", 256, 512, 4096, {},
                 {"gpu.power_cap=700W,600W,500W,400W,300W"}},
                {"llama3-70b, 2,048 GPUs, batch 1024x8k", "llama3-70b", "dgx-h100", 2048, 1024, 8192, {},
                 {"gpu.power_cap=700W,600W,500W,400W,300W"}}}});
  return s;
}

}  // namespace

const std::vector<StudySpec>& BuiltInStudies() {
  static const std::vector<StudySpec> studies = MakeStudies();
  return studies;
}

const StudySpec& FindStudy(const std::string& name) {
  std::vector<std::string> names;
  for (const StudySpec& s : BuiltInStudies()) {
    if (s.name == name) return s;
    names.push_back(s.name);
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InvalidInput("", "--study", StrCat("unknown study '", name, "'; ", DidYouMean(name, names), "known: ", list));
}

}  // namespace parasim::planner
