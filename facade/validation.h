// `parasim validate` through the facade (not installed): the seed paper's
// findings (F1-F12) and Megatron-LM's Table 1 (T1), run from their inputs.
#pragma once

#include <string>
#include <vector>

namespace parasim {

struct ValidationQuery {
  std::vector<std::string> only;   // row ids (F1 ... F12, T1; any case); empty = every finding, then T1
  int threads = 0;                 // 0 = every core; the answer is the same for any count
  bool whole_space = true;         // also search parasim's whole space where a row asks for a best config
  bool published = true;           // T1 when `only` is empty
};

struct FindingRow {
  std::string id, finding, setup, published, band, predicted;
  bool pass = false;
  std::vector<std::string> details;
  std::string whole_space;         // "" = not run
};

struct Table1Row {
  double params_b = 0;
  int tp = 0, pp = 0, gpus = 0;
  double published_tflops = 0, predicted_tflops = 0;
  double error = 0;                // predicted / published - 1 (-1 when nothing fits)
  bool feasible = false;
  std::string config;
  int micro_batch = 0, vpp = 0;
};

struct ValidationResult {
  bool ran_findings = false, ran_table1 = false;
  std::vector<FindingRow> findings;
  int passed = 0;                  // findings that pass
  std::vector<Table1Row> table1;
  double median_abs_error = 0, spearman = 0;
  double median_abs_error_target = 0, spearman_target = 0;
  bool table1_pass = false;
  bool AnyFailed() const;
};

inline constexpr const char* kTable1Id = "T1";

// Throws InvalidInput naming ValidationQuery::only for an unknown id.
ValidationResult Validate(const ValidationQuery& query);

}  // namespace parasim
