// What the planner optimizes (`--objective`) and the Pareto front of
// throughput against tokens per joule.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "planner/goodput.h"

namespace parasim::planner {

enum class Objective {
  kTokensPerJoule,   // default: useful work per joule (goodput-adjusted)
  kThroughput,       // tokens per second (goodput-adjusted)
  kExposedComm,      // smallest exposed-communication fraction of the step
  kCost,             // dollars: GPU-hours and energy (needs a price)
  kTimeToTrain,      // seconds to train `tokens` tokens (needs --tokens)
};
// "tokens-per-joule" | "throughput" | "exposed-comm" | "cost" | "time-to-train".
Objective ParseObjective(const std::string& text, const std::string& where = "--objective");
const char* ToString(Objective objective);
// The unit of ObjectiveValue(), for tables: "tokens/J", "tokens/s", ...
const char* ObjectiveUnit(Objective objective, double tokens);

struct ObjectiveOptions {
  Objective objective = Objective::kTokensPerJoule;
  double gpu_hour_price = 0;   // $ per GPU-hour
  double energy_price = 0;     // $ per kWh
  double tokens = 0;           // tokens to train (time-to-train; cost per run when > 0)
  GoodputOptions goodput;
  // Throws parasim::Error when the objective lacks an input (a price, --tokens).
  void Validate() const;
};

// The figures of one evaluated config an objective reads.
struct PlanMetrics {
  double tokens_per_s = 0;
  double tokens_per_joule = 0;
  double exposed_comm_fraction = 0;
};

// The objective in its own unit (tokens/J, tokens/s, fraction, $ or $/Mtoken, s),
// with goodput applied to throughput and energy.
double ObjectiveValue(const ObjectiveOptions& options, const PlanMetrics& m, int gpus, const Goodput& goodput);
// True when a larger ObjectiveValue is better.
bool HigherIsBetter(Objective objective);
// ObjectiveValue turned so that larger is always better (for ranking).
double ObjectiveScore(const ObjectiveOptions& options, const PlanMetrics& m, int gpus, const Goodput& goodput);

// A point to maximize on both axes; `index` identifies it.
struct ParetoPoint {
  double throughput = 0;
  double tokens_per_joule = 0;
  size_t index = 0;
};
// Indices of the points no other point matches or beats on both axes while
// beating on one; among exact duplicates the lowest index stays. Sorted by
// throughput, highest first.
std::vector<size_t> ParetoFront(std::vector<ParetoPoint> points);

}  // namespace parasim::planner
