// Fitted profiles and stack files as values, written by the one YAML writer
// (facade/value_writers.h, through cli/output/writers.h), read back
// through the loaders every command uses: bit for bit (dimensioned values at
// %.17g, other numbers in their shortest exact form).
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "calibrate/microbench_data.h"
#include "cli/output/writers.h"
#include "core/field_registry.h"
#include "core/loaders.h"
#include "core/sha256.h"
#include "cost_model/software_stack_io.h"
#include "cost_model/stack_field_registry.h"
#include "facade/catalog.h"
#include "facade/fitted_profiles.h"
#include "tests/calibrate/test_profiles.h"
#include "tests/cli/run_parasim.h"

namespace {

using namespace parasim;
using parasim::cli::WriteFitReport;
using parasim::cli::WriteYaml;
using parasim::cli::WriteJson;

std::string Yaml(const ProfileDocument& doc) { return WriteYaml(doc.body, doc.comment); }

// Writes `text` to a file of its own (LoadGpuProfile reads files and names).
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::temp_directory_path() / ("parasim_fitted_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

void RequireSameGpu(const GpuProfile& a, const GpuProfile& b) {
  CHECK(a.name == b.name);
  CHECK(a.display_name == b.display_name);
  CHECK(a.architecture == b.architecture);
  for (const GpuField& f : GpuProfileFields()) {
    INFO(f.key);
    CHECK(f.get(a) == f.get(b));   // bit for bit
  }
  CHECK(a.sources == b.sources);
}

GpuProfile FittedH100() {
  const GpuProfile base = LoadGpuProfile("h100-sxm");
  const calibrate::MicrobenchData data =
      calibrate::LoadMicrobenchDir(std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/h100-sxm");
  return calibrate::ApplyCalibration(base, calibrate::FitMicrobench(data, base), "h100-sxm-calibrated");
}

}  // namespace

TEST_CASE("fitted profiles: a GPU profile reads back bit for bit", "[cli][calibrate]") {
  SECTION("every shipped profile") {
    for (const std::string& name : GpuProfileNames()) {
      const GpuProfile g = LoadGpuProfile(name);
      const TempFile file(name + ".yaml", Yaml(GpuProfileDocument(g)));
      RequireSameGpu(g, LoadGpuProfile(file.path()));
    }
  }
  SECTION("the H100 fitted to the committed measurements") {
    const GpuProfile g = FittedH100();
    const std::string text = Yaml(GpuProfileDocument(g));
    CHECK(text.rfind("# NVIDIA H100 SXM5 80GB (h100-sxm-calibrated). Written by parasim calibrate", 0) == 0);
    const TempFile file("h100-cal.yaml", text);
    RequireSameGpu(g, LoadGpuProfile(file.path()));
  }
  SECTION("awkward names and numbers") {
    GpuProfile g = calibrate::testing::HandH100();
    g.name = "1e3";   // would read as a number if written bare
    g.display_name = "no";
    g.memory_efficiency = 1.0 / 3.0;
    g.sources["efficiency.memory"] = "quote \" backslash \\ colon: hash # newline\n";
    const TempFile file("awkward.yaml", Yaml(GpuProfileDocument(g)));
    RequireSameGpu(g, LoadGpuProfile(file.path()));
  }
}

TEST_CASE("fitted profiles: a collective profile reads back bit for bit", "[cli][calibrate][collective]") {
  calibrate::CollectiveProfile p;
  p.name = "t";
  p.params.net_chunk_latency = Seconds(7.25e-6);
  p.params.nic_efficiency = 0.1 + 0.2;   // 0.30000000000000004
  p.params.min_pipeline_chunks = 4;      // whole: written as 4.0, read as a double
  p.fitted_to = {"a.log", "b.log"};
  p.sources["collective.nic_efficiency"] = "fitted";
  const std::string text = Yaml(CollectiveProfileDocument(p));
  CHECK(text.find("  min_pipeline_chunks: 4.0\n") != std::string::npos);
  const calibrate::CollectiveProfile back = calibrate::ParseCollectiveProfile(text, "p.yaml");
  for (const auto& f : calibrate::CollectiveFitParameters()) {
    INFO(f.name);
    CHECK(f.get(back.params) == f.get(p.params));
  }
  CHECK(back.name == p.name);
  CHECK(back.fitted_to == p.fitted_to);
  CHECK(back.sources == p.sources);
  // No sources: an empty mapping, still a valid file.
  p.sources.clear();
  const std::string bare = Yaml(CollectiveProfileDocument(p));
  CHECK(bare.find("sources: {}\n") != std::string::npos);
  CHECK(calibrate::ParseCollectiveProfile(bare, "p.yaml").sources.empty());
}

TEST_CASE("fitted profiles: a stack file reads back bit for bit, commented", "[cli][calibrate]") {
  for (const std::string& preset : SoftwareStackNames()) {
    INFO(preset);
    SoftwareStack s = LoadSoftwareStack(preset);
    s.name = preset + "-fitted";
    s.kernel_gap_s = 1.0 / 7.0;
    const std::map<std::string, std::string> sources = {{"kernel_gap_s", "a trace: of one step"}};
    const std::string text = Yaml(StackProfileDocument(s, sources, preset));
    const SoftwareStackFile back = ParseSoftwareStackYaml(text, "s.yaml");
    CHECK(back.stack == s);
    CHECK(back.base == preset);
    CHECK(back.sources == sources);
    // Each field carries its meaning as a comment at column 40.
    const StackField& first = StackFields().front();
    const size_t at = text.find("\n" + first.key + ": ");
    REQUIRE(at != std::string::npos);
    const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    CHECK(line.find("# " + first.meaning) != std::string::npos);
    CHECK((line.find('#') == 39 || line[line.find('#') - 1] == ' '));
  }
}

TEST_CASE("fitted profiles: `profiles stack` writes a preset as fit-stack does, one writer", "[cli][stack]") {
  for (const std::string& preset : SoftwareStackNames()) {
    INFO(preset);
    const parasim_test::Run r = parasim_test::Parasim("profiles stack " + preset);
    REQUIRE(r.code == 0);
    CHECK(r.out == Yaml(StackProfileDocument(LoadSoftwareStack(preset), {}, preset)));
    CHECK(r.out == Yaml(StackFileDocument(preset)));
    const SoftwareStackFile back = ParseSoftwareStackYaml(r.out, "s.yaml");
    CHECK(back.stack == LoadSoftwareStack(preset));
    CHECK(back.base == preset);
  }
  // Whole numbers keep their double form, as the fitted files print them.
  CHECK(Yaml(StackFileDocument("pytorch-fsdp")).find("\ngrad_bytes: 4.0 ") != std::string::npos);   // fp32 gradients
}

TEST_CASE("fitted profiles: every stack preset round-trips through its stack file exactly", "[cli][stack]") {
  for (const std::string& name : SoftwareStackNames()) {
    INFO(name);
    const SoftwareStack preset = LoadSoftwareStack(name);
    const std::string yaml = Yaml(StackProfileDocument(preset, {}, name));
    const SoftwareStackFile f = ParseSoftwareStackYaml(yaml, name + ".yaml");
    CHECK(f.base == name);
    CHECK(f.sources.empty());
    CHECK(Yaml(StackProfileDocument(f.stack, {}, f.base)) == yaml);   // shows the differing line on failure
    CHECK(f.stack == preset);                                        // every field, attention_by_arch included
    REQUIRE(f.stack.attention_by_arch.size() == preset.attention_by_arch.size());
    for (size_t i = 0; i < preset.attention_by_arch.size(); ++i) {
      CHECK(f.stack.attention_by_arch[i] == preset.attention_by_arch[i]);
    }
  }
}

TEST_CASE("fitted profiles: a stack file overrides every field it writes, whatever its base", "[cli][stack]") {
  // Written with another preset as base, the file must still give back the
  // stack it was written from: no field can fall back to the base unnoticed.
  for (const std::string& from : SoftwareStackNames()) {
    for (const std::string& base : SoftwareStackNames()) {
      INFO(from << " written over " << base);
      const SoftwareStack s = LoadSoftwareStack(from);
      CHECK(ParseSoftwareStackYaml(Yaml(StackProfileDocument(s, {}, base)), "x.yaml").stack == s);
    }
  }
}

TEST_CASE("fitted profiles: stack files keep awkward values and sources bit for bit", "[cli][stack]") {
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  s.name = "my \"cluster\": stack # 2";
  s.description = "fitted\nfrom a trace: 0.1 + 0.2";
  s.kernel_gap_s = 0.1 + 0.2;
  s.host_per_kernel_s = 1.0 / 3.0;
  s.reserve_bytes = 2.5e9 + 1;
  s.fragmentation = 1 + 1e-15;
  s.optimizer_bytes_per_param = 1e-300;
  s.kernels_per_layer_forward = 999;
  s.dropout = true;
  s.nccl_version = 22602;
  s.attention_by_arch[2].second.forward_efficiency = 0.123456789012345678;
  s.attention_by_arch[2].second.name = "flash-attn-3 (fp8)";
  const std::map<std::string, std::string> sources = {
      {"kernel_gap_s", "median gap in a Kineto trace, \"step 3\""}, {"attention.hopper.forward_efficiency", "fit"}};
  const SoftwareStackFile f =
      ParseSoftwareStackYaml(Yaml(StackProfileDocument(s, sources, "megatron-core")), "a.yaml");
  CHECK(f.stack == s);
  CHECK(f.sources == sources);
  CHECK(f.base == "megatron-core");
}

TEST_CASE("fitted profiles: a stack file is printed over its own base, whole", "[cli][stack]") {
  const TempFile file("own_name.yaml",
                      "schema_version: 1\nbase: megatron-core\nname: megatron-core-fitted\nkernel_gap_s: 3e-6\n");
  const SoftwareStackFile read = ReadSoftwareStackFile(file.path());
  const SoftwareStackFile f = ParseSoftwareStackYaml(Yaml(StackFileDocument(file.path())), "fitted.yaml");
  CHECK(f.base == "megatron-core");
  CHECK(f.stack == read.stack);
  CHECK(f.stack.kernel_gap_s == 3e-6);
}

TEST_CASE("fitted profiles: CP kinds, TP overlap and host-synchronous p2p round-trip through a stack file",
          "[cli][stack]") {
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  s.supports_cp_p2p = false;
  s.supports_cp_a2a = true;
  s.supports_cp_allgather = false;
  s.tp_comm_overlap = 0.875;
  s.tp_overlap_gemm_slowdown = 0.069;
  s.pp_host_synchronous = true;
  s.host_per_micro_batch_s = 1.25e-3;
  s.supports_partial_recompute = false;   // megatron-core's preset has it
  const SoftwareStackFile f = ParseSoftwareStackYaml(Yaml(StackProfileDocument(s, {}, "megatron-core")), "s.yaml");
  CHECK(f.stack == s);
  CHECK_FALSE(f.stack.SupportsCp(CpComm::kP2p));
  CHECK(f.stack.SupportsCp(CpComm::kA2a));
  CHECK(f.stack.SupportsCp(CpComm::kA2aP2p));   // megatron-core's, kept through the file
  s.supports_cp_a2a_p2p = false;
  const SoftwareStackFile g = ParseSoftwareStackYaml(Yaml(StackProfileDocument(s, {}, "megatron-core")), "s.yaml");
  CHECK(g.stack == s);
  CHECK_FALSE(g.stack.SupportsCp(CpComm::kA2aP2p));
  // Only Megatron-Core runs the hierarchical kind.
  for (const char* name : {"megatron-core", "torchtitan", "pytorch-fsdp", "pytorch-fsdp2", "deepspeed-zero",
                           "megatron-deepspeed", "megatron-lm-2021", "nanotron"}) {
    INFO(name);
    CHECK(LoadSoftwareStack(name).SupportsCp(CpComm::kA2aP2p) == (std::string(name) == "megatron-core"));
  }
  // Out of range: a fraction above 1 is named with its field.
  const std::string bad = "base: megatron-core\ntp_comm_overlap: 1.5\n";
  CHECK_THROWS_WITH(ParseSoftwareStackYaml(bad, "bad.yaml"), Catch::Matchers::Contains("tp_comm_overlap"));
}

TEST_CASE("fitted profiles: a preset stack is hashed as the file `profiles stack` prints", "[cli][stack][provenance]") {
  // Saved with `profiles stack` and loaded with --stack, a preset keeps its hash.
  const parasim_test::Run printed = parasim_test::Parasim("profiles stack megatron-core");
  REQUIRE(printed.code == 0);
  const TempFile file("megatron-core.yaml", printed.out);
  const std::string run = "simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 2048 "
                          "--config dp=8,tp=1,pp=1 --format json --stack ";
  const parasim_test::Run preset = parasim_test::Parasim(run + "megatron-core");
  const parasim_test::Run saved = parasim_test::Parasim(run + file.path());
  REQUIRE(preset.code == 0);
  REQUIRE(saved.code == 0);
  const nlohmann::json a = nlohmann::json::parse(preset.out), b = nlohmann::json::parse(saved.out);
  CHECK(a["inputs"]["stack"]["sha256"] == Sha256Hex(printed.out));
  CHECK(b["inputs"]["stack"]["sha256"] == Sha256Hex(printed.out));
  CHECK(a["step_time_s"] == b["step_time_s"]);
}

TEST_CASE("fitted profiles: the fit report as a table and as JSON", "[cli][calibrate]") {
  const GpuProfile base = LoadGpuProfile("h100-sxm");
  calibrate::GpuProfileFit fit;
  fit.base = base;
  fit.fits = calibrate::FitMicrobench(
      calibrate::LoadMicrobenchDir(std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/h100-sxm"), base);
  fit.calibrated = calibrate::ApplyCalibration(base, fit.fits, "h100-sxm-calibrated");
  const Value report = GpuFitReport(fit);
  const Value* rows = report.Find("parameters");
  REQUIRE(rows != nullptr);
  REQUIRE(!rows->items().empty());
  // Every row names its parameter and holds the profile's values before and after.
  bool saw_gemm = false;
  for (const Value& row : rows->items()) {
    if (row.Find("parameter")->as_string() != "gemm_max_efficiency") continue;
    saw_gemm = true;
    CHECK(row.Find("base")->as_number() == base.gemm_max_efficiency);
    CHECK(row.Find("fitted")->as_number() == fit.calibrated.gemm_max_efficiency);
    CHECK(row.Find("rms_rel_error")->as_number() == fit.fits.gemm->summary.rms_rel_error);
  }
  CHECK(saw_gemm);
  const std::string table = WriteFitReport(report);
  CHECK(table.rfind("calibrated h100-sxm -> h100-sxm-calibrated from ", 0) == 0);
  CHECK(table.find("  parameter ") != std::string::npos);
  CHECK(table.find(" \n") == std::string::npos);   // no trailing blanks
  // JSON: the same values, every number in full.
  const YAML::Node json = YAML::Load(WriteJson(report));
  CHECK(json["parameters"][0]["fitted"].as<double>() == rows->items()[0].Find("fitted")->as_number());
}

TEST_CASE("fitted profiles: the collective fit report, one residual per measured row", "[cli][calibrate][collective]") {
  calibrate::ProfileFitOptions opt;
  opt.files = {std::string(PARASIM_SOURCE_DIR) + "/tests/golden/inputs/collectives.json"};
  opt.cluster = std::string(PARASIM_SOURCE_DIR) + "/tests/data/clusters/nccltests309-xe9680.yaml";
  const calibrate::ProfileFit fit = calibrate::FitProfile(opt);
  REQUIRE(fit.collective);
  REQUIRE_FALSE(fit.gpu);
  const Value report = CollectiveFitReport(*fit.collective);
  CHECK(report.Find("parameters")->items().size() == fit.collective->fit.values.size());
  const Value& residuals = *report.Find("residuals");
  REQUIRE(residuals.items().size() == fit.collective->cases.size());
  for (size_t i = 0; i < residuals.items().size(); ++i) {
    const Value& row = residuals.items()[i];
    const double measured = fit.collective->cases[i].m.time.si();
    const double predicted = calibrate::PredictCase(fit.collective->cases[i], fit.collective->fit.params).time.si();
    CHECK(row.Find("measured_s")->as_number() == measured);
    CHECK(row.Find("fitted_s")->as_number() == predicted);
    CHECK(row.Find("log_error")->as_number() == std::log(predicted / measured));
  }
  // The written profile holds the fitted parameters, bit for bit.
  const calibrate::CollectiveProfile back =
      calibrate::ParseCollectiveProfile(Yaml(CollectiveProfileDocument(fit.collective->profile)), "f.yaml");
  for (const auto& [name, v] : fit.collective->fit.values)
    for (const auto& f : calibrate::CollectiveFitParameters())
      if (f.name == name) CHECK(f.get(back.params) == f.get(fit.collective->fit.params));
}
