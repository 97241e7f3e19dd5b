#include "planner/objective.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace parasim::planner {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;        // 1 kWh = 3.6 MJ (definition)
constexpr double kSecondsPerHour = 3600.0;

struct ObjectiveName {
  const char* name;
  Objective objective;
};
constexpr ObjectiveName kNames[] = {
    {"tokens-per-joule", Objective::kTokensPerJoule}, {"throughput", Objective::kThroughput},
    {"exposed-comm", Objective::kExposedComm},        {"cost", Objective::kCost},
    {"time-to-train", Objective::kTimeToTrain},
};

}  // namespace

Objective ParseObjective(const std::string& text, const std::string& where) {
  for (const auto& n : kNames) {
    if (text == n.name) return n.objective;
  }
  throw InvalidInput("", where,
              StrCat("unknown objective '", text, "' (valid: tokens-per-joule, throughput, exposed-comm, cost, time-to-train)"));
}

const char* ToString(Objective objective) {
  for (const auto& n : kNames) {
    if (n.objective == objective) return n.name;
  }
  return "?";
}

const char* ObjectiveUnit(Objective objective, double tokens) {
  switch (objective) {
    case Objective::kTokensPerJoule: return "tokens/J";
    case Objective::kThroughput: return "tokens/s";
    case Objective::kExposedComm: return "fraction of step";
    case Objective::kCost: return tokens > 0 ? "$ per run" : "$ per million tokens";
    case Objective::kTimeToTrain: return "s";
  }
  return "";
}

void ObjectiveOptions::Validate() const {
  if (gpu_hour_price < 0) throw InvalidInput("", "--gpu-hour-price", "must not be negative");
  if (energy_price < 0) throw InvalidInput("", "--energy-price", "must not be negative");
  if (tokens < 0) throw InvalidInput("", "--tokens", "must not be negative");
  if (objective == Objective::kCost && gpu_hour_price == 0 && energy_price == 0) {
    throw InvalidInput("", "--objective", "cost needs --gpu-hour-price and/or --energy-price");
  }
  if (objective == Objective::kTimeToTrain && tokens == 0) {
    throw InvalidInput("", "--objective", "time-to-train needs --tokens (tokens to train)");
  }
  ComputeGoodput(1, goodput);   // validates the goodput inputs
}

bool HigherIsBetter(Objective objective) {
  return objective == Objective::kTokensPerJoule || objective == Objective::kThroughput;
}

double ObjectiveValue(const ObjectiveOptions& options, const PlanMetrics& m, int gpus, const Goodput& goodput) {
  // Failures waste time and the energy spent in it: both useful rates scale by goodput.
  const double useful_tokens_per_s = m.tokens_per_s * goodput.fraction;
  const double useful_tokens_per_joule = m.tokens_per_joule * goodput.fraction;
  const double inf = std::numeric_limits<double>::infinity();
  switch (options.objective) {
    case Objective::kTokensPerJoule: return useful_tokens_per_joule;
    case Objective::kThroughput: return useful_tokens_per_s;
    case Objective::kExposedComm: return m.exposed_comm_fraction;
    case Objective::kCost: {
      if (useful_tokens_per_s <= 0 || useful_tokens_per_joule <= 0) return inf;
      const double tokens = options.tokens > 0 ? options.tokens : 1e6;
      const double gpu_dollars = tokens / useful_tokens_per_s * gpus * options.gpu_hour_price / kSecondsPerHour;
      const double energy_dollars = tokens / useful_tokens_per_joule / kJoulesPerKwh * options.energy_price;
      return gpu_dollars + energy_dollars;
    }
    case Objective::kTimeToTrain:
      return useful_tokens_per_s > 0 ? options.tokens / useful_tokens_per_s : inf;
  }
  return 0;
}

double ObjectiveScore(const ObjectiveOptions& options, const PlanMetrics& m, int gpus, const Goodput& goodput) {
  const double v = ObjectiveValue(options, m, gpus, goodput);
  return HigherIsBetter(options.objective) ? v : -v;
}

std::vector<size_t> ParetoFront(std::vector<ParetoPoint> points) {
  auto before = [](const ParetoPoint& a, const ParetoPoint& b) {
    if (a.throughput != b.throughput) return a.throughput > b.throughput;
    if (a.tokens_per_joule != b.tokens_per_joule) return a.tokens_per_joule > b.tokens_per_joule;
    return a.index < b.index;
  };
  // Only the first point in order and the more energy-efficient ones can be
  // on the front (the first precedes every other): drop the rest before
  // sorting (a planner's space holds tens of thousands of points).
  if (!points.empty()) {
    const ParetoPoint first = *std::min_element(points.begin(), points.end(), before);
    std::erase_if(points, [&](const ParetoPoint& p) {
      return p.tokens_per_joule <= first.tokens_per_joule && p.index != first.index;
    });
  }
  std::sort(points.begin(), points.end(), before);
  std::vector<size_t> front;
  double best_tpj = -std::numeric_limits<double>::infinity();
  for (const ParetoPoint& p : points) {
    // Sorted by throughput: a point survives only by beating every faster one on energy.
    if (p.tokens_per_joule > best_tpj) {
      front.push_back(p.index);
      best_tpj = p.tokens_per_joule;
    }
  }
  return front;
}

}  // namespace parasim::planner
