#include "facade/fitted_profiles.h"

#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/field_registry.h"
#include "core/number_format.h"
#include "cost_model/stack_field_registry.h"

namespace parasim {
namespace {

using calibrate::FitSummary;

// A registry value as the file holds it: flags as booleans, counts as
// integers, ratios as numbers, dimensioned values with their unit.
template <class Spec>
Value FieldValue(const FieldEntry<Spec>& f, const Spec& spec) {
  const double v = f.get(spec);
  switch (f.unit) {
    case FieldUnit::kFlag: return Value(v != 0);
    case FieldUnit::kCount:
      if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) return Value(static_cast<int64_t>(v));
      return Value(v);
    case FieldUnit::kRatio: return Value(v);
    default: return Value(FormatFieldValue(f.unit, v));
  }
}

Value Sources(const std::map<std::string, std::string>& sources) {
  Value out = Value::Object();
  for (const auto& [key, where] : sources) out.Set(key, where);
  return out;
}

std::string NcclVersionText(int v) { return StrCat(v / 10000, ".", v / 100 % 100, ".", v % 100); }

// The stack files' scalar fields, each with its meaning.
template <class S>
void SetFields(const std::vector<FieldEntry<S>>& fields, const S& s, Value* out) {
  for (const FieldEntry<S>& f : fields) {
    out->Set(f.key, FieldValue(f, s));
    out->Comment(f.key, f.meaning);
  }
}

// A field of the stack by its file key ("kernel_gap_s",
// "attention.hopper.forward_efficiency"); nullopt for a key it lacks.
std::optional<double> StackValue(const SoftwareStack& s, const std::string& key) {
  for (const StackField& f : StackFields())
    if (f.key == key) return f.get(s);
  for (const auto& [arch, kernel] : s.attention_by_arch) {
    const std::string prefix = "attention." + arch + ".";
    if (key.rfind(prefix, 0) != 0) continue;
    for (const AttentionField& f : AttentionFields())
      if (key == prefix + f.key) return f.get(kernel);
  }
  return std::nullopt;
}

Value OrNull(std::optional<double> v) { return v ? Value(*v) : Value(); }

// One row of a GPU fit: the field's value before and after, and its fit.
Value GpuRow(const std::string& parameter, const FitSummary& s, double base, double fitted, Value points,
             const std::string& source) {
  return Value::Record({{"parameter", parameter},
                        {"status", calibrate::ToString(s.status)},
                        {"base", base},
                        {"fitted", fitted},
                        {"points", std::move(points)},
                        {"rms_rel_error", s.rms_rel_error},
                        {"source", source},
                        {"message", s.message}});
}

Value Report(const std::string& fit, const std::string& summary) {
  return Value::Record({{"fit", fit},
                        {"summary", summary},
                        {"parameters", Value::Array()},
                        {"residuals", Value::Array()},
                        {"notes", Value::Array()}});
}

}  // namespace

ProfileDocument GpuProfileDocument(const GpuProfile& g) {
  ProfileDocument doc;
  doc.comment = StrCat(g.display_name, " (", g.name, "). Written by parasim calibrate; schema: hw_profiles/SCHEMA.md.");
  Value& o = doc.body;
  o.Set("schema_version", 1).Set("name", g.name).Set("display_name", g.display_name).Set("architecture", g.architecture);
  // Registry keys "section.key" grouped under their section, in the
  // registry's order (a section's fields are contiguous).
  std::string section;
  Value fields = Value::Object();
  auto flush = [&] {
    if (!section.empty()) o.Set(section, std::move(fields));
    fields = Value::Object();
  };
  for (const GpuField& f : GpuProfileFields()) {
    const size_t dot = f.key.find('.');
    const std::string prefix = dot == std::string::npos ? "" : f.key.substr(0, dot);
    if (prefix != section) {
      flush();
      section = prefix;
    }
    if (prefix.empty()) {
      o.Set(f.key, FieldValue(f, g));
    } else {
      fields.Set(f.key.substr(dot + 1), FieldValue(f, g));
    }
  }
  flush();
  if (!g.sources.empty()) o.Set("sources", Sources(g.sources));
  return doc;
}

ProfileDocument CollectiveProfileDocument(const calibrate::CollectiveProfile& p) {
  ProfileDocument doc;
  doc.comment =
      "Collective hardware profile (hw_profiles/SCHEMA.md, \"Collective hardware profiles\").\n"
      "Written by `parasim calibrate fit`; use with --hw-profile or a cluster's hw_profile key.";
  Value collective = Value::Object();
  for (const calibrate::FitParameter& f : calibrate::CollectiveFitParameters())
    collective.Set(f.name, f.get(p.params));
  std::string fitted;
  for (const auto& s : p.fitted_to) fitted += (fitted.empty() ? "" : ", ") + s;
  doc.body.Set("schema_version", 1)
      .Set("name", p.name)
      .Set("base", p.base)
      .Set("collective", std::move(collective))
      .Set("fitted_to", fitted)
      .Set("sources", Sources(p.sources));
  return doc;
}

ProfileDocument StackProfileDocument(const SoftwareStack& stack, const std::map<std::string, std::string>& sources,
                                     const std::string& base) {
  if (!FindSoftwareStackPreset(base)) throw InternalError(StrCat("a stack file needs a preset as base, got '", base, "'"));
  ProfileDocument doc;
  doc.comment =
      "Software stack for parasim --stack; schema: hw_profiles/SCHEMA.md, \"Software-stack files\".\n"
      "Keys left out keep the base preset's value; units are in the key names (_s: seconds).";
  Value& o = doc.body;
  o.Set("schema_version", 1)
      .Set("name", stack.name)
      .Set("description", stack.description)
      .Set("framework", stack.framework)
      .Set("base", base);
  SetFields(StackFields(), stack, &o);
  o.Set("nccl_version", NcclVersionText(stack.nccl_version));
  Value attention = Value::Object();
  for (const auto& [arch, kernel] : stack.attention_by_arch) {
    Value k = Value::Object().Set("name", kernel.name);
    SetFields(AttentionFields(), kernel, &k);
    attention.Set(arch, std::move(k));
  }
  o.Set("attention", std::move(attention));
  o.Comment("attention", "per GPU architecture (gpu profile `architecture`)");
  if (!sources.empty()) o.Set("sources", Sources(sources));
  return doc;
}

Value GpuFitReport(const calibrate::GpuProfileFit& fit) {
  const calibrate::CalibrationFits& f = fit.fits;
  const GpuProfile& base = fit.base;
  const GpuProfile& out = fit.calibrated;
  Value report = Report("gpu-profile", StrCat("calibrated ", base.name, " -> ", out.name, " from ", f.device, " (",
                                              f.date, ")"));
  Value rows = Value::Array();
  Value residuals = Value::Array();
  Value notes = Value::Array();
  if (f.gemm) {
    rows.Push(GpuRow("gemm_max_efficiency", f.gemm->summary, base.gemm_max_efficiency, out.gemm_max_efficiency,
                     f.gemm->points, f.gemm_source));
    notes.Push(StrCat("gemm_max_efficiency: best measured ", FormatFixed(f.gemm->best_efficiency, 3), " at ",
                      f.gemm->best_shape));
    const calibrate::GemmFit& shown = f.gemm_burst ? *f.gemm_burst : *f.gemm;
    const std::string sweep = f.gemm_burst ? "gemm burst sweep" : "gemm sweep";
    for (const auto& [tp, e] : shown.by_tp)
      residuals.Push(Value::Record({{"fit", sweep},
                                    {"group", StrCat("tp", tp)},
                                    {"points", e.points},
                                    {"mean_log_error", e.mean_log_error},
                                    {"rms_rel_error", e.rms_rel_error}}));
    if (f.gemm_burst)
      notes.Push(StrCat("the burst sweep alone would give gemm_max_efficiency ",
                        FormatFixed(f.gemm_burst->gemm_max_efficiency, 4), " over ", f.gemm_burst->points,
                        " GEMMs, rms relative time error ", FormatFixed(f.gemm_burst->summary.rms_rel_error, 3)));
  }
  if (f.gemm_fp8) {
    rows.Push(GpuRow("gemm_max_fp8_efficiency", f.gemm_fp8->summary, base.gemm_max_fp8_efficiency,
                     out.gemm_max_fp8_efficiency, f.gemm_fp8->points, f.gemm_fp8_source));
    notes.Push(StrCat("gemm_max_fp8_efficiency: 0 = as bf16; best measured ", FormatFixed(f.gemm_fp8->best_efficiency, 3),
                      " of fp8 peak at ", f.gemm_fp8->best_shape, " (fast-accumulation rows)"));
  }
  if (f.gemm_fp8_split)
    rows.Push(GpuRow("gemm_fp8_split_accum_rate", f.gemm_fp8_split->summary, base.gemm_fp8_split_accum_rate,
                     out.gemm_fp8_split_accum_rate, f.gemm_fp8_split->points, f.gemm_fp8_source));
  if (f.gemm_shape) {
    const calibrate::GemmShapeFit& s = *f.gemm_shape;
    rows.Push(GpuRow("gemm_k0", s.summary, base.gemm_k0, out.gemm_k0, Value(), fit.shape_source));
    rows.Push(GpuRow("gemm_half_outputs", s.summary, base.gemm_half_outputs, out.gemm_half_outputs, Value(),
                     fit.shape_source));
    notes.Push(StrCat("gemm shape model eta = g k/(k+k0) mn/(mn+c): g ", FormatFixed(s.params.g, 4), ", k0 ",
                      FormatFixed(s.params.k0, 1), ", c ", FormatFixed(s.params.c_mn, 0)));
    for (const auto& [tp, e] : s.rms_by_tp)
      residuals.Push(Value::Record({{"fit", "gemm shape model"},
                                    {"group", StrCat("tp", tp)},
                                    {"points", Value()},
                                    {"mean_log_error", Value()},
                                    {"rms_rel_error", e}}));
  }
  if (f.memory)
    rows.Push(GpuRow("memory_efficiency", f.memory->summary, base.memory_efficiency, out.memory_efficiency, Value(),
                     fit.memory_source));
  if (f.power) {
    const FitSummary& s = f.power->summary;
    rows.Push(GpuRow("idle_power_W", s, base.idle_power.si(), out.idle_power.si(), Value(), fit.power_source));
    rows.Push(GpuRow("power_matmul_fraction", s, base.power_matmul_fraction, out.power_matmul_fraction, Value(),
                     fit.power_source));
    rows.Push(GpuRow("power_memory_fraction", s, base.power_memory_fraction, out.power_memory_fraction, Value(),
                     fit.power_source));
  }
  if (f.launch)
    notes.Push(StrCat("launch overhead (not a GPU-profile field; see the software stack): host ",
                      FormatFixed(f.launch->host_enqueue.si() * 1e6, 2), " us, queued ",
                      FormatFixed(f.launch->queued.si() * 1e6, 2), " us, graph ",
                      FormatFixed(f.launch->graph.si() * 1e6, 2), " us per kernel"));
  report.Set("parameters", std::move(rows)).Set("residuals", std::move(residuals)).Set("notes", std::move(notes));
  return report;
}

Value CollectiveFitReport(const calibrate::CollectiveProfileFit& fit) {
  Value report = Report("collective-profile",
                        StrCat("fitted ", fit.fit.values.size(), " parameters of ", fit.profile.name, " (base ",
                               fit.profile.base, ") to ", fit.fit.cases, " rows on cluster ", fit.cluster,
                               "; mean band-median |log error| ", FormatFixed(fit.fit.mean_abs_log_error, 4)));
  Value rows = Value::Array();
  for (const calibrate::FitParameter& p : calibrate::CollectiveFitParameters()) {
    const auto it = fit.fit.values.find(p.name);
    if (it == fit.fit.values.end()) continue;
    const auto source = fit.profile.sources.find("collective." + p.name);
    rows.Push(Value::Record({{"parameter", p.name},
                             {"base", p.get(fit.start)},
                             {"fitted", it->second},
                             {"rows", fit.fit.cases},
                             {"source", source == fit.profile.sources.end() ? "" : source->second}}));
  }
  Value residuals = Value::Array();
  for (size_t i = 0; i < fit.cases.size() && i < fit.predicted.size(); ++i) {
    const calibrate::CollectiveMeasurement& m = fit.cases[i].m;
    const CollectiveCost& p = fit.predicted[i];
    // The fit's own residual: ln(predicted / measured time).
    const double measured = m.time.si(), fitted = p.time.si();
    residuals.Push(Value::Record({{"source", m.source},
                                  {"op", ToString(m.op)},
                                  {"ranks", m.ranks},
                                  {"size_bytes", static_cast<int64_t>(std::llround(m.size.si()))},
                                  {"measured_s", measured},
                                  {"fitted_s", fitted},
                                  {"log_error", measured > 0 && fitted > 0 ? Value(std::log(fitted / measured)) : Value()},
                                  {"measured_busbw_GBps", m.busbw.si() / 1e9},
                                  {"fitted_busbw_GBps", p.busbw.si() / 1e9},
                                  {"algo", ToString(p.algo)},
                                  {"protocol", ToString(p.protocol)}}));
  }
  report.Set("parameters", std::move(rows)).Set("residuals", std::move(residuals));
  return report;
}

Value StackFitReport(const calibrate::StackProfileFit& fit) {
  Value report = Report("software-stack", StrCat("refitted ", fit.base.name, " -> ", fit.fit.stack.name));
  Value rows = Value::Array();
  for (const auto& [field, why] : fit.fit.sources)
    rows.Push(Value::Record({{"parameter", field},
                             {"base", OrNull(StackValue(fit.base, field))},
                             {"fitted", OrNull(StackValue(fit.fit.stack, field))},
                             {"source", why}}));
  Value residuals = Value::Array();
  for (const calibrate::ClassComparison& c : fit.fit.classes)
    residuals.Push(Value::Record({{"class", c.name},
                                  {"measured_ms", c.measured * 1e3},
                                  {"base_ms", c.before * 1e3},
                                  {"fitted_ms", c.after * 1e3}}));
  Value notes = Value::Array();
  for (const std::string& n : fit.fit.notes) notes.Push(n);
  report.Set("parameters", std::move(rows)).Set("residuals", std::move(residuals)).Set("notes", std::move(notes));
  return report;
}

}  // namespace parasim
