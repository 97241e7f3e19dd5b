// `parasim validate`: every row of the seed findings (Fernandez et al.,
// "Hardware Scaling Trends and Diminishing Returns in Large-Scale Distributed
// Training"), run from its inputs through the same planner and cost model as
// any user's request. Rows asking for a best config search the paper's space
// (sharding zero2, tp and pp in {1, 2, 4, 8, 16}, cp = 1, recomputation only
// where memory requires it, objective throughput) passed as constraints.
// Bands are the acceptance ranges of the findings file; nothing here feeds
// back into the model.
#pragma once

#include <string>
#include <vector>

namespace parasim::planner {

struct FindingResult {
  std::string id;                   // "F1" ... "F12"
  std::string finding;              // what the paper found
  std::string setup;                // the inputs
  std::string published;            // the paper's figure
  std::string band;                 // what parasim must show
  std::string predicted;            // parasim's figures for the band
  bool pass = false;
  std::vector<std::string> details; // per-point figures behind `predicted`
  std::string whole_space;          // what parasim's whole space would choose instead ("" = not run)
};

struct ValidationOptions {
  std::vector<std::string> only;    // ids to run; empty = all
  int threads = 0;
  bool whole_space = true;          // also search parasim's whole space where a row asks for a best config
};

// The ids in order ("F1" ... "F12").
std::vector<std::string> FindingIds();

// Runs the rows; throws parasim::Error for an unknown id in `only`.
std::vector<FindingResult> RunValidation(const ValidationOptions& options);

// The paper's search space as constraints (cp_values e.g. "1" or "1|2|4|8").
std::string PaperSpaceConstraints(const std::string& cp_values = "1");

}  // namespace parasim::planner
