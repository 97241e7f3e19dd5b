// SearchSpace::ToConfig into a reused config (the scoring loop's, one per
// chain) sets every field: it equals a fresh ToConfig for every candidate of
// a space with lighter end stages, whatever the config held before.
#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/software_stack.h"
#include "planner/search_space.h"

using namespace parasim;
using namespace parasim::planner;

TEST_CASE("planner: ToConfig into a reused config equals a fresh one", "[planner]") {
  const ModelSpec model = LoadModel("llama3-70b");
  JobSpec job;
  job.global_batch = 256;
  job.seq_len = 8192;
  const SearchSpace space = EnumerateSpace(model, job, 256, 8, ConstraintSet::Parse("order=any", "test"),
                                           SpaceFor(LoadSoftwareStack(job.stack)));
  ParallelConfig reused = ParseParallelConfig(
      "dp=3,tp=5,pp=7,cp=2,ep=2,mbs=9,sharding=hsdp:3,recompute=full,recompute_layers=1,sp=on,vpp=2,"
      "schedule=interleaved,order=dp-tp-cp-ep-pp,prefetch=3,cp_comm=a2a+p2p,cp_a2a_size=2");
  reused.pp_layers = {1, 2, 3};
  int uneven = 0;
  for (size_t i = space.candidates.size(); i-- > 0;) {   // backwards: uneven splits meet balanced ones
    space.ToConfig(space.candidates[i], &reused);
    const ParallelConfig fresh = space.ToConfig(i);
    REQUIRE(reused.ToString() == fresh.ToString());
    REQUIRE(reused.pp_layers == fresh.pp_layers);
    REQUIRE(reused.order == fresh.order);
    uneven += fresh.pp_layers.empty() ? 0 : 1;
  }
  CHECK(uneven > 0);
  CHECK(space.orders.size() > 1);
}
