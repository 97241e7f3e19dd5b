#include "topology/hybrid_cube_mesh.h"

#include <algorithm>
#include <array>
#include <mutex>

#include "core/check.h"

namespace parasim {
namespace {

// DGX-1 with V100 NVLink wiring, as `nvidia-smi topo -m` prints it on the
// machine (NV2 = two bonded links, NV1 = one, 0 = no NVLink, traffic goes
// over PCIe/QPI). Each GPU has 6 links. Source: NVIDIA DGX-1 System
// Architecture white paper (WP-08437-002, Fig. 4, hybrid cube mesh with the
// V100's 6 links) and the topo matrix of DGX-1V systems.
constexpr int kLinks[kHcmGpus][kHcmGpus] = {
    //0 1  2  3  4  5  6  7
    {0, 1, 1, 2, 2, 0, 0, 0},  // GPU0
    {1, 0, 2, 1, 0, 2, 0, 0},  // GPU1
    {1, 2, 0, 2, 0, 0, 1, 0},  // GPU2
    {2, 1, 2, 0, 0, 0, 0, 1},  // GPU3
    {2, 0, 0, 0, 0, 1, 1, 2},  // GPU4
    {0, 2, 0, 0, 1, 0, 2, 1},  // GPU5
    {0, 0, 1, 0, 1, 2, 0, 2},  // GPU6
    {0, 0, 0, 1, 2, 1, 2, 0},  // GPU7
};

using Cycle = std::vector<int>;

// Every undirected Hamiltonian cycle over `members` on direct links, each
// once (first member fixed, second < last).
std::vector<Cycle> EnumerateCycles(const std::vector<int>& members) {
  std::vector<Cycle> out;
  if (members.size() < 3) return out;
  std::vector<int> rest(members.begin() + 1, members.end());
  do {
    if (rest.front() > rest.back()) continue;
    int prev = members[0];
    bool ok = true;
    for (int v : rest) {
      if (kLinks[prev][v] == 0) { ok = false; break; }
      prev = v;
    }
    if (!ok || kLinks[prev][members[0]] == 0) continue;
    Cycle c{members[0]};
    c.insert(c.end(), rest.begin(), rest.end());
    out.push_back(c);
  } while (std::next_permutation(rest.begin(), rest.end()));
  return out;
}

struct Packer {
  const std::vector<Cycle>& cycles;
  int cap[kHcmGpus][kHcmGpus];
  int bound = 0;
  std::vector<int> chosen, best;

  bool Fits(const Cycle& c) const {
    for (size_t i = 0; i < c.size(); ++i)
      if (cap[c[i]][c[(i + 1) % c.size()]] < 1) return false;
    return true;
  }
  void Apply(const Cycle& c, int d) {
    for (size_t i = 0; i < c.size(); ++i) {
      const int a = c[i], b = c[(i + 1) % c.size()];
      cap[a][b] += d;
      cap[b][a] += d;
    }
  }
  // Depth-first over cycles in index order (a cycle may repeat on doubled links).
  void Search(size_t from) {
    if (chosen.size() > best.size()) best = chosen;
    if (static_cast<int>(best.size()) >= bound) return;
    for (size_t i = from; i < cycles.size(); ++i) {
      if (!Fits(cycles[i])) continue;
      Apply(cycles[i], -1);
      chosen.push_back(static_cast<int>(i));
      Search(i);
      chosen.pop_back();
      Apply(cycles[i], +1);
      if (static_cast<int>(best.size()) >= bound) return;
    }
  }
};

HcmRings Compute(uint32_t mask) {
  std::vector<int> members;
  for (int g = 0; g < kHcmGpus; ++g)
    if (mask & (1u << g)) members.push_back(g);
  HcmRings r;
  if (members.size() == 2) {
    const int m = kLinks[members[0]][members[1]];
    for (int i = 0; i < m; ++i) r.rings.push_back(members);   // both directions of one link
    r.link_units = m;
    return r;
  }
  const std::vector<Cycle> cycles = EnumerateCycles(members);
  if (cycles.empty()) return r;
  Packer p{cycles, {}, 0, {}, {}};
  int min_degree = kHcmLinksPerGpu;
  for (int a = 0; a < kHcmGpus; ++a) {
    int deg = 0;
    for (int b = 0; b < kHcmGpus; ++b) {
      p.cap[a][b] = kLinks[a][b];
      if ((mask & (1u << a)) && (mask & (1u << b))) deg += kLinks[a][b];
    }
    if (mask & (1u << a)) min_degree = std::min(min_degree, deg);
  }
  p.bound = min_degree / 2;   // a cycle uses two links of every member
  p.Search(0);
  for (int idx : p.best) {
    Cycle fwd = cycles[idx];
    Cycle rev{fwd[0]};
    rev.insert(rev.end(), fwd.rbegin(), fwd.rend() - 1);
    r.rings.push_back(fwd);
    r.rings.push_back(rev);
  }
  r.link_units = 2 * static_cast<int>(p.best.size());
  return r;
}

}  // namespace

int HcmLinks(int a, int b) {
  PARASIM_CHECK(a >= 0 && a < kHcmGpus && b >= 0 && b < kHcmGpus, "GPU index out of the mesh");
  return kLinks[a][b];
}

const HcmRings& HcmBestRings(uint32_t mask) {
  PARASIM_CHECK(mask < (1u << kHcmGpus), "mask over 8 GPUs");
  static std::array<HcmRings, 1u << kHcmGpus> cache;
  static std::array<std::once_flag, 1u << kHcmGpus> once;
  std::call_once(once[mask], [mask] { cache[mask] = Compute(mask); });
  return cache[mask];
}

}  // namespace parasim
