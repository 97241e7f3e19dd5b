// Inside the facade: what the public handles hold, and the conversions from
// the modules' types to the facade's plain structs. Not installed.
#pragma once

#include <string>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "cost_model/report.h"
#include "cost_model/software_stack.h"
#include "parasim/parasim.h"

namespace parasim::detail {

struct ModelData {
  ModelSpec spec;
};
struct ClusterData {
  ClusterSpec spec;
  std::string source;   // the preset name or file: resized by loading it again (tiers follow the node count)
};
struct StackData {
  SoftwareStack stack;
  std::string source;   // the preset name or file it was loaded from
};

// The handles' private data, for the facade's own sources.
struct Access {
  static const ModelSpec& Spec(const Model& m) { return m.data_->spec; }
  static const ClusterSpec& Spec(const Cluster& c) { return c.data_->spec; }
  static const SoftwareStack& Spec(const Stack& s) { return s.data_->stack; }
  static Model Wrap(ModelSpec spec);
  static Cluster Wrap(ClusterSpec spec, std::string source);
  static const std::string& Source(const Cluster& c) { return c.data_->source; }
  static Stack Wrap(SoftwareStack stack, std::string source);
  static const std::string& Source(const Stack& s) { return s.data_->source; }
};

Prediction ToPrediction(const Report& report);

}  // namespace parasim::detail
