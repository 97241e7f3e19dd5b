// Placement of the parallel groups on GPUs. Ranks are laid out as a mixed
// radix over config.order (innermost first, Megatron-Core's RankGenerator
// convention) and rank r runs on GPU r (GPU ids count node-major: node n,
// local GPU g is n * gpus_per_node + g). "ep" splits dp: the order token "dp"
// stands for the dp/ep expert-data-parallel coordinate, "ep" for the expert
// coordinate, so a DP group is the union of both.
#pragma once

#include <string>
#include <vector>

#include "core/parallel_config.h"
#include "topology/group_path.h"

namespace parasim {

// One strided factor of a group: `size` members `stride` ranks apart.
struct GroupFactor {
  int size = 1;
  long long stride = 1;
};

// The shape of every group of one dimension: members of the group holding
// rank b are b + sum_i c_i * stride_i, 0 <= c_i < size_i. Factors are sorted
// by stride; size-1 factors are dropped; adjacent factors are merged.
struct GroupLayout {
  std::vector<GroupFactor> factors;
  int size = 1;          // members per group (product of factor sizes)
  long long extent = 1;  // ranks one tile of interleaved groups covers (outermost stride * size)
};

// Validates config.order against the degrees (throws parasim::Error: unknown
// or repeated token, a dimension > 1 missing, ep not dividing dp).
GroupLayout LayoutOf(const ParallelConfig& config, ParallelDim dim, SubGroup sub = {});

// Placement of a whole job on `world` GPUs (world must equal dp*tp*pp*cp,
// otherwise parasim::Error).
class Placement {
 public:
  Placement(const ParallelConfig& config, int world);

  int world() const { return world_; }
  // Number of groups of `dim` (world / group size).
  int GroupCount(ParallelDim dim, SubGroup sub = {}) const;
  // GPUs of group `index` (groups numbered by their lowest rank), ascending.
  std::vector<int> Members(ParallelDim dim, int index, SubGroup sub = {}) const;
  // Every group of `dim`, in index order. An `ends` sub-group: the first and
  // last GPU of every group (one pair per group; the middle GPUs in none).
  std::vector<std::vector<int>> AllGroups(ParallelDim dim, SubGroup sub = {}) const;

 private:
  ParallelConfig config_;
  int world_;
};

// Members of the group whose lowest rank is `base`.
std::vector<int> GroupMembersAt(const GroupLayout& layout, long long base);

}  // namespace parasim
