#include <catch2/catch.hpp>

#include "core/error.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;

TEST_CASE("cost_model: stacks carry the bytes per parameter DESIGN.md names", "[cost_model]") {
  const SoftwareStack fsdp = LoadSoftwareStack("pytorch-fsdp");
  CHECK(fsdp.param_bytes_at_rest + fsdp.grad_bytes + fsdp.optimizer_bytes == 16);
  CHECK(fsdp.nccl_version == kNcclPaperVersion);   // PyTorch 2.3: NCCL 2.20.5
  const NcclFeatures f = NcclFeaturesFor(testing::Dgx(testing::H100(), 2), fsdp.nccl_version);
  CHECK_FALSE(f.pat);   // AllGather / ReduceScatter ring-only across nodes
  const SoftwareStack mc = LoadSoftwareStack("megatron-core");
  CHECK(mc.param_bytes_at_rest + mc.grad_bytes + mc.optimizer_bytes == 18);
  CHECK(mc.AttentionFor(testing::H100()).forward_efficiency > fsdp.AttentionFor(testing::H100()).forward_efficiency);
  for (const auto& name : SoftwareStackNames()) CHECK(LoadSoftwareStack(name).name == name);
}

TEST_CASE("cost_model: an unknown stack is an input error naming `stack`", "[cost_model]") {
  try {
    LoadSoftwareStack("jax-pjit");
    FAIL("no error");
  } catch (const InvalidInput& e) {
    REQUIRE(e.issues().size() == 1);
    CHECK(e.issues()[0].key == "stack");
  }
}
