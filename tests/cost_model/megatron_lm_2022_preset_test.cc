// The megatron-lm-2022 preset is the stack file the Korthikanti and
// MegaScale tables were priced on (tests/data/stacks/megatron-lm-2022.yaml),
// field by field.
#include <catch2/catch.hpp>

#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"

using namespace parasim;

TEST_CASE("cost_model: the megatron-lm-2022 preset equals its stack file", "[cost_model]") {
  const SoftwareStack preset = LoadSoftwareStack("megatron-lm-2022");
  const SoftwareStack file = LoadSoftwareStack(testing::DataPath("stacks/megatron-lm-2022.yaml"));
  CHECK(preset.name == "megatron-lm-2022");
  CHECK(preset == file);
  // The 2021 code where the 2022 code kept it; its later defaults where not.
  const SoftwareStack older = LoadSoftwareStack("megatron-lm-2021");
  CHECK(preset.tp_backward_overlap);
  CHECK_FALSE(older.tp_backward_overlap);
  CHECK(preset.comm_grad_bytes == 4);
  CHECK(preset.grad_fold_passes == 0);
  CHECK(preset.pp_host_synchronous == older.pp_host_synchronous);
  CHECK_FALSE(preset.dp_overlap_per_chunk);
}
