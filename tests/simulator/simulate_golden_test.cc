// Tier B byte for byte: the simulated reports (and a digest of the workload
// the evaluator builds for them) of a subset of the golden cases equal the
// committed text (tests/data/golden/simulate_tier_b.txt). Regenerate with
// PARASIM_WRITE_GOLDEN=1 (see tests/cost_model/report_golden.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../cost_model/report_golden.h"
#include "cost_model/evaluator.h"
#include "cost_model/workload.h"
#include "simulator/simulate.h"

using namespace parasim;
using namespace parasim::testing;

namespace {

const std::string kGoldenPath = std::string(PARASIM_SOURCE_DIR) + "/tests/data/golden/simulate_tier_b.txt";

// Per stage: layer count, summed compute and collective time, sends,
// optimizer and memory; and the step-level fields.
std::string WorkloadDigest(const StepWorkload& wl) {
  std::string o = "  workload m=" + std::to_string(wl.num_micro_batches) + " v=" + std::to_string(wl.virtual_stages) +
                  " reshard=" + (wl.reshard_after_forward ? "1" : "0") + " world=" + std::to_string(wl.world_size) +
                  " tokens=" + std::to_string(wl.tokens_per_step) + "\n";
  GoldenField(o, "workload.comm_interference", wl.comm_interference);
  GoldenField(o, "workload.model_flops", wl.model_flops_per_step.si());
  GoldenField(o, "workload.hardware_flops", wl.hardware_flops_per_step.si());
  for (const StageWork& s : wl.stages) {
    double fwd = 0, bwd = 0, rec = 0, flops = 0, bytes = 0, params = 0, coll = 0;
    size_t n_coll = 0;
    std::string names;
    for (const LayerWork& l : s.layers) {
      fwd += l.forward_time.si() + l.forward_matmul_time.si();
      bwd += l.backward_time.si() + l.backward_matmul_time.si();
      rec += l.recompute_time.si();
      flops += l.forward_flops.si() + l.backward_flops.si();
      bytes += l.forward_bytes.si() + l.backward_bytes.si();
      params += l.parameter_bytes.si();
      for (const WorkloadCollective& c : l.collectives) {
        ++n_coll;
        coll += c.duration.si() * c.count + c.size.si();
        names += c.what + "/" + ToString(c.phase) + (c.every_micro_batch ? "" : "/step") + " ";
      }
      names += "| ";
    }
    const std::string p = "workload.stage" + std::to_string(s.stage) + ".";
    o += "  " + p + "layers " + std::to_string(s.layers.size()) + " collectives " + std::to_string(n_coll) + "\n";
    o += "  " + p + "names " + names.substr(0, 400) + "\n";
    GoldenField(o, (p + "fwd").c_str(), fwd);
    GoldenField(o, (p + "bwd").c_str(), bwd);
    GoldenField(o, (p + "recompute").c_str(), rec);
    GoldenField(o, (p + "flops").c_str(), flops);
    GoldenField(o, (p + "bytes").c_str(), bytes);
    GoldenField(o, (p + "params").c_str(), params);
    GoldenField(o, (p + "collectives").c_str(), coll);
    GoldenField(o, (p + "pp_send_bytes").c_str(), s.pp_send_bytes.si());
    GoldenField(o, (p + "pp_send_time").c_str(), s.pp_send_time.si());
    GoldenField(o, (p + "optimizer").c_str(), s.optimizer_time.si());
    GoldenField(o, (p + "memory_peak").c_str(), s.memory_peak.si());
  }
  return o;
}

std::vector<std::string> TierBBlocks() {
  std::vector<std::string> blocks;
  for (int i : SimulatedGoldenCases()) {
    const GoldenCase& g = GoldenCases()[i];
    const AnalyticalEvaluator ev(GoldenModel(g, PARASIM_SOURCE_DIR), GoldenCluster(g), GoldenJob(g));
    const ParallelConfig config = ParseParallelConfig(g.config);
    simulator::SimulationOptions opt;
    opt.fidelity = Fidelity::kSimulated;
    const simulator::SimulationResult r = simulator::SimulateConfig(ev, config, opt);
    std::string block = "== " + GoldenCaseName(g) + "\n" + GoldenText(r.report);
    if (r.report.feasible) block += WorkloadDigest(ev.BuildWorkload(config));
    blocks.push_back(block);
  }
  return blocks;
}

}  // namespace

TEST_CASE("tier B reports equal the golden file byte for byte", "[golden]") {
  CheckOrWriteGolden(kGoldenPath, TierBBlocks());
}
