// The field registry: accessors round-trip, every range fires just outside
// its bounds and not just inside, and the loaders read their ranges from it.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>

#include <catch2/catch.hpp>

#include "core/field_registry.h"
#include "core/loaders.h"

using namespace parasim;

namespace {

// A value strictly inside the range, away from both bounds.
template <class Entry>
double Inside(const Entry& f) {
  const FieldRange& r = f.range;
  if (f.unit == FieldUnit::kFlag) return 1;
  double v = r.max >= kNoMax ? r.min + 3 : 0.5 * (r.min + r.max);
  if (r.integer) v = std::floor(v);
  if (!r.Contains(v)) v = r.min_open ? std::nextafter(r.min, r.max) : r.min;
  return v;
}

// Just below the lower bound and just above the upper one (none for flags).
template <class Entry>
std::vector<double> Outside(const Entry& f) {
  const FieldRange& r = f.range;
  std::vector<double> out = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()};
  const double step = r.integer ? 1.0 : 0.0;
  out.push_back(r.min_open ? r.min : (step > 0 ? r.min - step : std::nextafter(r.min, -kNoMax)));
  if (r.max < kNoMax) out.push_back(r.max_open ? r.max : (step > 0 ? r.max + step : std::nextafter(r.max, kNoMax)));
  if (r.integer && r.max > r.min + 1) out.push_back(r.min + 0.5);
  return out;
}

template <class Spec>
void CheckTable(const std::vector<FieldEntry<Spec>>& fields, Spec spec) {
  REQUIRE(!fields.empty());
  for (const auto& f : fields) {
    INFO(f.key);
    // Just inside: accepted, and get gives back what set put.
    const double in = Inside(f);
    CHECK_FALSE(RangeProblem(f.range, f.unit, in).has_value());
    f.set(spec, in);
    CHECK(f.get(spec) == in);
    // The bounds themselves, where closed.
    if (!f.range.min_open) CHECK_FALSE(RangeProblem(f.range, f.unit, f.range.min).has_value());
    if (!f.range.max_open && f.range.max < kNoMax) CHECK_FALSE(RangeProblem(f.range, f.unit, f.range.max).has_value());
    for (double out : Outside(f)) {
      INFO(out);
      const auto problem = RangeProblem(f.range, f.unit, out);
      REQUIRE(problem.has_value());
      CHECK_THAT(*problem, Catch::StartsWith("must be "));
    }
    // Text in the field's unit reads back as the same double.
    CHECK(ParseFieldValue(f.unit, FormatFieldValue(f.unit, in), f.key) == in);
    CHECK(FindField(fields, f.key) == &f);
    if (!f.alias.empty()) CHECK(FindField(fields, f.alias) == &f);
  }
}

}  // namespace

TEST_CASE("field registry: every entry round-trips and every range fires", "[core][registry]") {
  CheckTable(GpuProfileFields(), LoadGpuProfile("h100-sxm"));
  CheckTable(ClusterFields(), LoadCluster("dgx-h100"));
  CheckTable(JobFields(), JobSpec{});
  CHECK(GpuProfileFields().size() == 30);   // + efficiency.attention_forward_scale, attention_backward_scale
  CHECK(ClusterFields().size() == 17);   // + intra_node.nvlink_domain_usable
  CHECK(JobFields().size() == 2);
}

TEST_CASE("field registry: built-in profiles and clusters validate clean", "[core][registry]") {
  for (const std::string& name : GpuProfileNames()) {
    INFO(name);
    CHECK(ValidateGpuProfile(LoadGpuProfile(name), "").empty());
  }
  for (const std::string& name : ClusterPresetNames()) {
    INFO(name);
    CHECK(ValidateCluster(LoadCluster(name), "").empty());
  }
}

TEST_CASE("field registry: sources by key path, nearest enclosing key", "[core][registry]") {
  const GpuProfile g = LoadGpuProfile("h100-sxm");
  CHECK_THAT(FieldSource(g.sources, "peak.bf16"), Catch::Contains("glennklockwood"));   // `peak` covers all peaks
  CHECK_THAT(FieldSource(g.sources, "memory.bandwidth"), Catch::Contains("3.35"));
  CHECK(FieldSource(g.sources, "no_such_key").empty());
}

TEST_CASE("field registry: Validate catches what a struct built in code gets wrong", "[core][registry]") {
  GpuProfile g = LoadGpuProfile("h100-sxm");
  g.bf16_dense = FlopsPerSecond(0);
  g.architecture = "pascal";
  g.idle_power = g.tdp * 2;
  const std::vector<Issue> issues = ValidateGpuProfile(g, "x.yaml");
  REQUIRE(issues.size() == 3);
  CHECK(issues[0].key == "peak.bf16");
  ClusterSpec c = LoadCluster("dgx-h100");
  c.gpus_per_node = 1000;
  c.nodes = 1001;
  bool total = false;
  for (const Issue& i : ValidateCluster(c, "")) total = total || i.message.find("exceed the limit") != std::string::npos;
  CHECK(total);
  JobSpec j;
  CHECK(ValidateJob(j, "").size() == 2);   // global_batch and seq_len unset
}

namespace {

// A file under the build's temporary folder, removed at scope end.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / ("parasim_registry_" + name)).string()) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

std::string LoadError(const std::function<void()>& load) {
  try {
    load();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("field registry: loaders check files against it", "[core][registry]") {
  const std::string head = "schema_version: 1\nname: t\ngpu: h100-sxm\n";
  {
    // An override of zero was silently ignored before the registry.
    TempFile f("override.yaml", head + "gpus_per_node: 8\noverrides:\n  bf16_dense: \"0 TFLOP/s\"\n");
    CHECK_THAT(LoadError([&] { LoadCluster(f.path); }),
               Catch::Contains("6:15: overrides.bf16_dense: must be in (0, 1e+18] FLOP/s, got 0 FLOP/s"));
  }
  {
    TempFile f("huge.yaml", head + "gpus_per_node: 1e9\n");
    CHECK_THAT(LoadError([&] { LoadCluster(f.path); }), Catch::Contains("gpus_per_node: must be in [1, 1e+06]"));
  }
  {
    TempFile f("nic.yaml", head + "gpus_per_node: 8\ninter_node:\n  nic_bandwidth: \"0 Gb/s\"\n");
    CHECK_THAT(LoadError([&] { LoadCluster(f.path); }), Catch::Contains("inter_node.nic_bandwidth: must be in (0"));
  }
  {
    TempFile f("total.yaml", head + "gpus_per_node: 1000\nnodes: 1001\n");
    CHECK_THAT(LoadError([&] { LoadCluster(f.path); }), Catch::Contains("nodes: 1001 nodes x 1000 GPUs"));
  }
  CHECK_THAT(LoadError([&] { LoadCluster("dgx-h100", 2000000); }), Catch::Contains("--nodes"));
  {
    TempFile f("override_idle.yaml", head + "gpus_per_node: 8\noverrides:\n  idle_power: \"800 W\"\n");
    CHECK_THAT(LoadError([&] { LoadCluster(f.path); }), Catch::Contains("overrides.idle_power: idle power exceeds tdp"));
  }
  {
    std::ifstream in(std::string(PARASIM_SOURCE_DIR) + "/hw_profiles/gpus/h100-sxm.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("architecture: hopper"), 20, "architecture: hoper");
    TempFile f("arch.yaml", text);
    CHECK_THAT(LoadError([&] { LoadGpuProfile(f.path); }),
               Catch::Contains("architecture: 'hoper' is not one of: volta, ampere, hopper, blackwell"));
  }
  {
    TempFile f("job.yaml", "global_batch: 99999999999999999999\nseq_len: 0\n");
    const std::string e = LoadError([&] { LoadJobYaml(f.path); });
    CHECK_THAT(e, Catch::Contains("1:15: global_batch: must be in [1, 1e+08], got 1e+20"));
    CHECK_THAT(e, Catch::Contains("2:10: seq_len: must be in [1, 1e+08], got 0"));
  }
}
