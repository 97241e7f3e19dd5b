// Fitted profiles as values, written by cli/output's YAML writer, read back
// through the loaders every command uses: bit for bit (dimensioned values at
// %.17g, other numbers in their shortest exact form).
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "calibrate/microbench_data.h"
#include "cli/output/writers.h"
#include "core/field_registry.h"
#include "core/loaders.h"
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
