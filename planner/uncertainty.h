// `plan --uncertainty N`: how sure is the plan? Fields that carry a cited
// uncertainty in the field registry (a fit residual, two sources that
// disagree) are drawn N times from a fixed seed; each draw re-plans, and
// every plan of the unperturbed ranking is re-scored. Per plan: the spread
// of its throughput (p10/p50/p90) and how often it ranks first. Samples are
// drawn before any planning, in a fixed order, so the output does not depend
// on the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "planner/planner.h"

namespace parasim::planner {

// A field drawn: its key as --vary names it and its relative 1-sigma.
struct UncertainField {
  std::string key;
  double sigma = 0;
};

// The registry's fields with an uncertainty (GPU as "gpu.<key>", then cluster).
std::vector<UncertainField> RegistryUncertainFields();

inline constexpr uint64_t kUncertaintySeed = 20261125;

// One cluster per sample: each field times exp(sigma * z), z standard normal
// cut at +-3, clamped into the field's range. Deterministic for a seed.
std::vector<ClusterSpec> PerturbedClusters(const ClusterSpec& base, const std::vector<UncertainField>& fields,
                                           int samples, uint64_t seed);

struct PlanSpread {
  std::string config;            // the plan of the unperturbed ranking
  double base_tokens_per_s = 0;
  double p10 = 0, p50 = 0, p90 = 0;   // tokens/s over the samples (0 where it no longer fits)
  int ranked_first = 0;          // samples whose re-plan ranks it first
};

struct UncertaintyResult {
  int samples = 0;
  uint64_t seed = 0;
  std::vector<UncertainField> fields;   // what was perturbed
  std::vector<PlanSpread> plans;        // in the unperturbed order
  int other_first = 0;                  // samples whose winner is none of `plans`
};

UncertaintyResult RunUncertainty(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const PlanResult& base, const PlanOptions& options, int samples,
                                 const std::vector<UncertainField>& fields = RegistryUncertainFields(),
                                 uint64_t seed = kUncertaintySeed);

// Printed under the plan table; the JSON report's "uncertainty" object is
// built by the facade (facade/plan_value.h).
std::string UncertaintyToTable(const UncertaintyResult& r);

}  // namespace parasim::planner
