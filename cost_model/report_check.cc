#include "cost_model/report_check.h"

#include <cmath>
#include <utility>
#include <vector>

#include "core/error.h"

namespace parasim {

void CheckFinite(double value, const std::string& field, const std::string& where) {
  if (std::isfinite(value)) return;
  throw InternalError(StrCat(where, ": report field '", field, "' is ", value,
                             " (a non-finite number reached an output)"));
}

void CheckReportFinite(const Report& r, const std::string& where) {
  const std::pair<const char*, double> fields[] = {
      {"step_time", r.step_time.si()},
      {"tokens_per_s", r.tokens_per_s},
      {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"mfu_own_precision", r.mfu_own_precision},
      {"tflops_per_gpu", r.tflops_per_gpu},
      {"hardware_tflops_per_gpu", r.hardware_tflops_per_gpu},
      {"compute", r.compute.si()},
      {"comm", r.comm.si()},
      {"exposed_comm", r.exposed_comm.si()},
      {"exposed_comm_fraction", r.exposed_comm_fraction},
      {"bubble", r.bubble.si()},
      {"memory_per_gpu", r.memory_per_gpu.si()},
      {"power_per_gpu", r.power_per_gpu.si()},
      {"energy_per_step", r.energy_per_step.si()},
      {"tokens_per_joule", r.tokens_per_joule},
      {"exposed_comm_energy_per_token", r.exposed_comm_energy_per_token.si()},
  };
  for (const auto& [name, value] : fields) {
    if (!std::isfinite(value)) CheckFinite(value, name, where);   // (a name string only on failure)
  }
  // Names are built only on failure: this runs once per scored config.
  auto entries = [&](const std::vector<TimeBreakdownEntry>& list, const char* group) {
    for (const TimeBreakdownEntry& e : list) {
      if (!std::isfinite(e.total.si())) CheckFinite(e.total.si(), StrCat(group, ".", e.name, ".total"), where);
      if (!std::isfinite(e.exposed.si())) CheckFinite(e.exposed.si(), StrCat(group, ".", e.name, ".exposed"), where);
    }
  };
  entries(r.by_op, "by_op");
  entries(r.by_dimension, "by_dimension");
  for (size_t s = 0; s < r.memory_bytes_per_stage.size(); ++s) {
    const double bytes = r.memory_bytes_per_stage[s];
    if (!std::isfinite(bytes)) CheckFinite(bytes, StrCat("memory_bytes_per_stage[", s, "]"), where);
  }
  for (const auto& [name, bytes] : r.memory_breakdown_bytes) {
    if (!std::isfinite(bytes)) CheckFinite(bytes, StrCat("memory_breakdown.", name), where);
  }
}

}  // namespace parasim
