#include "topology/topology.h"

#include <algorithm>
#include <limits>

#include "core/check.h"
#include "core/error.h"
#include "topology/hybrid_cube_mesh.h"
#include "topology/internal/graph.h"
#include "topology/link_params.h"

namespace parasim {

// A PCIe attachment whose bandwidth the profile leaves at 0 is not modelled
// as a limit (1 PB/s stands for "never the bottleneck").
constexpr double kUnlimited_Bps = 1e15;

const char* ToString(VertexKind k) {
  switch (k) {
    case VertexKind::kGpu: return "gpu";
    case VertexKind::kNvSwitch: return "nvswitch";
    case VertexKind::kHostBridge: return "host";
    case VertexKind::kNic: return "nic";
    case VertexKind::kLeaf: return "leaf";
    case VertexKind::kSpine: return "spine";
    case VertexKind::kCore: return "core";
  }
  return "?";
}

void Route::push_back(int32_t link) {
  PARASIM_CHECK(size_ < kMaxLinks, "route longer than ", kMaxLinks, " links");
  links_[size_++] = link;
}

struct Topology::Impl {
  internal::ClusterGraph graph;
  internal::MeshRoutes mesh_routes;
};

Topology::Topology() : impl_(std::make_unique<Impl>()) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

void Topology::AddLinkPair(int a, int b, LinkClass c, double capacity_Bps, double latency_s) {
  for (int dir = 0; dir < 2; ++dir) {
    link_src_.push_back(dir == 0 ? a : b);
    link_dst_.push_back(dir == 0 ? b : a);
    link_class_.push_back(c);
    capacity_Bps_.push_back(capacity_Bps);
    latency_s_.push_back(latency_s);
  }
}

Topology Topology::Build(const ClusterSpec& cluster) {
  Topology t;
  t.cluster_ = cluster;
  t.shape_ = MakeClusterShape(cluster);
  const ClusterShape& s = t.shape_;
  const GpuProfile& gpu = cluster.gpu;
  const InterNodeSpec& in = cluster.inter_node;
  const bool mesh = s.intra == IntraNodeFabric::kHybridCubeMesh;
  const bool switched = s.intra == IntraNodeFabric::kNvSwitch || s.intra == IntraNodeFabric::kNvlDomain;
  if (switched && !(gpu.nvlink_bandwidth.si() > 0))
    throw InvalidInput(gpu.file, "nvlink_bandwidth", "an NVSwitch/NVL domain needs the GPU's NVLink bandwidth (> 0)");
  const double pcie_Bps = gpu.pcie_bandwidth.si() > 0 ? gpu.pcie_bandwidth.si() : kUnlimited_Bps;
  const double nvl_lat = cluster.intra_node.nvlink_latency.si();
  const double pcie_lat = kPcieHopLatency.si();

  // Vertices, by block.
  const int fabric_leaves = s.tiers >= 1 ? s.leaves : 0;
  t.intra_switch_base_ = s.gpus;
  t.nic_vertex_base_ = t.intra_switch_base_ + s.domains;
  const int endpoints = s.tiers >= 1 ? s.endpoints : 0;   // one domain: no NICs in use
  t.leaf_base_ = t.nic_vertex_base_ + endpoints;
  t.spine_base_ = t.leaf_base_ + fabric_leaves;
  t.core_base_ = t.spine_base_ + (s.tiers >= 2 ? s.spines() : 0);
  const int vertices = t.core_base_ + s.cores();
  t.vertex_kind_.assign(vertices, VertexKind::kGpu);
  std::fill(t.vertex_kind_.begin() + t.intra_switch_base_, t.vertex_kind_.begin() + t.nic_vertex_base_,
            switched ? VertexKind::kNvSwitch : VertexKind::kHostBridge);
  std::fill(t.vertex_kind_.begin() + t.nic_vertex_base_, t.vertex_kind_.begin() + t.leaf_base_, VertexKind::kNic);
  std::fill(t.vertex_kind_.begin() + t.leaf_base_, t.vertex_kind_.begin() + t.spine_base_, VertexKind::kLeaf);
  std::fill(t.vertex_kind_.begin() + t.spine_base_, t.vertex_kind_.begin() + t.core_base_, VertexKind::kSpine);
  std::fill(t.vertex_kind_.begin() + t.core_base_, t.vertex_kind_.end(), VertexKind::kCore);

  // Links, by block (the routing computes ids from these bases).
  const size_t est = 2 * (2 * size_t(s.gpus) + size_t(endpoints) + size_t(fabric_leaves) * std::max(1, s.spines_per_pod) +
                          size_t(s.spines()) * std::max(1, s.cores_per_group) + (mesh ? 16 * size_t(s.domains) : 0));
  for (auto* v : {&t.capacity_Bps_, &t.latency_s_}) v->reserve(est);
  t.link_class_.reserve(est);
  t.link_src_.reserve(est);
  t.link_dst_.reserve(est);

  // GPU <-> NVSwitch (one bundle of all its NVLinks) or GPU <-> host bridge (PCIe).
  t.intra_base_ = 0;
  for (int g = 0; g < s.gpus; ++g) {
    const int sw = t.intra_switch_base_ + g / s.domain_gpus;
    if (switched)
      t.AddLinkPair(g, sw, LinkClass::kNvLink, gpu.nvlink_bandwidth.si(), nvl_lat / 2);
    else
      t.AddLinkPair(g, sw, LinkClass::kPcie, pcie_Bps, pcie_lat / 2);
  }
  // Hybrid cube mesh: direct GPU-GPU NVLinks (bonded pairs as one link of twice the bandwidth).
  t.mesh_base_ = t.link_count();
  for (auto& row : t.mesh_pair_) row.fill(-1);
  if (mesh) {
    int n = 0;
    for (int a = 0; a < kHcmGpus; ++a)
      for (int b = a + 1; b < kHcmGpus; ++b)
        if (HcmLinks(a, b) > 0) {
          t.mesh_pair_[a][b] = n;
          t.mesh_pair_[b][a] = n + 1;
          n += 2;
        }
    t.mesh_links_per_node_ = n;
    const double per_link = NvLinkPerLink(gpu).si();
    for (int d = 0; d < s.domains; ++d)
      for (int a = 0; a < kHcmGpus; ++a)
        for (int b = a + 1; b < kHcmGpus; ++b)
          if (HcmLinks(a, b) > 0)
            t.AddLinkPair(d * 8 + a, d * 8 + b, LinkClass::kNvLink, per_link * HcmLinks(a, b), nvl_lat);
    t.impl_->mesh_routes = internal::SearchMeshRoutes();
  }
  // GPU <-> NIC (PCIe); latency is inside the NIC's per-message latency.
  t.pcie_base_ = t.link_count();
  if (s.domains > 1)
    for (int g = 0; g < s.gpus; ++g)
      for (int j = 0; j < s.NicsPerGpu(); ++j) {
        const int nic = t.nic_vertex_base_ + t.DomainOf(g) * s.nics_per_domain + s.FirstNic(g % s.domain_gpus) + j;
        t.AddLinkPair(g, nic, LinkClass::kPcie, pcie_Bps, 0.0);
      }
  // NIC <-> leaf.
  t.nic_base_ = t.link_count();
  const double nic_Bps = in.nic_bandwidth.si();
  const double sw_lat = in.switch_latency.si();
  if (s.tiers >= 1)
    for (int e = 0; e < s.endpoints; ++e) {
      const int d = e / s.nics_per_domain, k = e % s.nics_per_domain;
      const int leaf = t.leaf_base_ + s.LeafOf(d, k);
      const int nic = t.nic_vertex_base_ + e;
      t.link_src_.push_back(nic); t.link_dst_.push_back(leaf);
      t.link_class_.push_back(LinkClass::kNic); t.capacity_Bps_.push_back(nic_Bps);
      t.latency_s_.push_back(in.nic_latency.si() / 2 + sw_lat);
      t.link_src_.push_back(leaf); t.link_dst_.push_back(nic);
      t.link_class_.push_back(LinkClass::kNic); t.capacity_Bps_.push_back(nic_Bps);
      t.latency_s_.push_back(in.nic_latency.si() / 2);
    }
  // Leaf <-> spine trunks (every leaf to every spine of its pod).
  t.leaf_spine_base_ = t.link_count();
  if (s.tiers >= 2)
    for (int leaf = 0; leaf < s.leaves; ++leaf)
      for (int sp = 0; sp < s.spines_per_pod; ++sp)
        t.AddLinkPair(t.leaf_base_ + leaf, t.spine_base_ + s.PodOf(leaf) * s.spines_per_pod + sp,
                      LinkClass::kLeafSpine, s.leaf_spine_ports * nic_Bps, sw_lat);
  // Spine <-> core trunks (spine s of every pod to the cores of group s).
  t.spine_core_base_ = t.link_count();
  if (s.tiers == 3)
    for (int spine = 0; spine < s.spines(); ++spine)
      for (int j = 0; j < s.cores_per_group; ++j)
        t.AddLinkPair(t.spine_base_ + spine, t.core_base_ + (spine % s.spines_per_pod) * s.cores_per_group + j,
                      LinkClass::kSpineCore, s.spine_core_ports * nic_Bps, sw_lat);

  // The Boost graph over the same vertices and links.
  auto& g = t.impl_->graph;
  for (int v = 0; v < vertices; ++v) boost::add_vertex(internal::VertexProps{t.vertex_kind_[v]}, g);
  for (int l = 0; l < t.link_count(); ++l) boost::add_edge(t.link_src_[l], t.link_dst_[l], internal::EdgeProps{l}, g);
  return t;
}

int Topology::CountVertices(VertexKind k) const {
  return static_cast<int>(std::count(vertex_kind_.begin(), vertex_kind_.end(), k));
}

int Topology::CableCount(LinkClass c) const {
  return static_cast<int>(std::count(link_class_.begin(), link_class_.end(), c)) / 2;
}

std::string Topology::VertexName(int v) const {
  switch (vertex_kind_[v]) {
    case VertexKind::kGpu: return StrCat("gpu", v);
    case VertexKind::kNvSwitch: return StrCat("nvsw", v - intra_switch_base_);
    case VertexKind::kHostBridge: return StrCat("host", v - intra_switch_base_);
    case VertexKind::kNic: {
      const int e = v - nic_vertex_base_;
      return StrCat("nic", e / shape_.nics_per_domain, ".", e % shape_.nics_per_domain);
    }
    case VertexKind::kLeaf: return StrCat("leaf", v - leaf_base_);
    case VertexKind::kSpine: return StrCat("spine", v - spine_base_);
    case VertexKind::kCore: return StrCat("core", v - core_base_);
  }
  return "?";
}

void Topology::AppendIntra(int a, int b, Route* r) const {
  if (a == b) return;
  PARASIM_DCHECK(DomainOf(a) == DomainOf(b), "intra route across domains");
  if (shape_.intra != IntraNodeFabric::kHybridCubeMesh) {
    r->push_back(IntraUp(a));
    r->push_back(IntraUp(b) + 1);
    return;
  }
  const int node = DomainOf(a), la = a % 8, lb = b % 8;
  for (const internal::MeshStep& st : impl_->mesh_routes[la][lb]) {
    switch (st.kind) {
      case internal::MeshStep::kNvLink:
        r->push_back(mesh_base_ + node * mesh_links_per_node_ + mesh_pair_[st.a][st.b]);
        break;
      case internal::MeshStep::kHostUp: r->push_back(IntraUp(node * 8 + st.a)); break;
      case internal::MeshStep::kHostDown: r->push_back(IntraUp(node * 8 + st.b) + 1); break;
    }
  }
}

void Topology::AppendFabric(int da, int na, int db, int nb, Route* r) const {
  const ClusterShape& s = shape_;
  const int ea = da * s.nics_per_domain + na, eb = db * s.nics_per_domain + nb;
  r->push_back(NicUp(ea));
  const int la = s.LeafOf(da, na), lb = s.LeafOf(db, nb);
  if (la != lb) {
    PARASIM_DCHECK(s.tiers >= 2, "two leaves in a single-switch fabric");
    // D-mod-K ECMP: pick the spine from the destination's leaf port.
    const int sp = s.LeafPort(db, nb) % s.spines_per_pod;
    const int pa = s.PodOf(la), pb = s.PodOf(lb);
    r->push_back(LeafSpineUp(la, sp));
    if (pa != pb) {
      const int core = (lb % s.leaves_per_pod) % s.cores_per_group;
      r->push_back(SpineCoreUp(pa * s.spines_per_pod + sp, core));
      r->push_back(SpineCoreUp(pb * s.spines_per_pod + sp, core) + 1);
    }
    r->push_back(LeafSpineUp(lb, sp) + 1);
  }
  r->push_back(NicUp(eb) + 1);
}

Route Topology::RouteBetween(int a, int b, int rail) const {
  PARASIM_CHECK(a >= 0 && a < shape_.gpus && b >= 0 && b < shape_.gpus, "GPU id out of range");
  Route r;
  const int da = DomainOf(a), db = DomainOf(b);
  if (da == db) {
    AppendIntra(a, b, &r);
    return r;
  }
  const int D = shape_.domain_gpus;
  const int la = a % D, lb = b % D;
  const int nic_a = rail >= 0 ? rail : shape_.FirstNic(la);
  const int nic_b = rail >= 0 ? rail : shape_.FirstNic(lb);
  PARASIM_CHECK(nic_a < shape_.nics_per_domain && nic_b < shape_.nics_per_domain, "rail out of range");
  // Exit GPU: a itself if attached to the NIC, else the GPU with b's local
  // index if it is (rail-aligned PXN), else the NIC's first GPU.
  const int exit_local = Attached(la, nic_a) ? la : Attached(lb, nic_a) ? lb : shape_.NicOwner(nic_a);
  const int exit_gpu = da * D + exit_local;
  AppendIntra(a, exit_gpu, &r);
  r.push_back(PcieUp(exit_gpu, nic_a - shape_.FirstNic(exit_local)));
  AppendFabric(da, nic_a, db, nic_b, &r);
  const int entry_local = Attached(lb, nic_b) ? lb : shape_.NicOwner(nic_b);
  const int entry_gpu = db * D + entry_local;
  r.push_back(PcieUp(entry_gpu, nic_b - shape_.FirstNic(entry_local)) + 1);
  AppendIntra(entry_gpu, b, &r);
  return r;
}

int Topology::SwitchHops(const Route& r) const {
  int hops = 0;
  for (int32_t l : r) {
    const VertexKind k = vertex_kind_[link_dst_[l]];
    hops += k == VertexKind::kLeaf || k == VertexKind::kSpine || k == VertexKind::kCore;
  }
  return hops;
}

Seconds Topology::RouteLatency(const Route& r) const {
  double s = 0;
  for (int32_t l : r) s += latency_s_[l];
  return Seconds(s);
}

BytesPerSecond Topology::InjectionBandwidth() const {
  if (shape_.domains == 1) return BytesPerSecond(0);
  return cluster_.inter_node.nic_bandwidth * (static_cast<double>(shape_.nics_per_domain) / shape_.domain_gpus);
}

BytesPerSecond Topology::BisectionBandwidth() const {
  const ClusterShape& s = shape_;
  if (s.domains == 1) {
    // One NVLink domain: half the GPUs talk to the other half.
    if (s.intra == IntraNodeFabric::kHybridCubeMesh) {
      // Worst balanced cut of the mesh (search over the 35 ways to halve 8 GPUs).
      int worst = 1 << 30;
      for (uint32_t m = 0; m < 256; ++m) {
        if (__builtin_popcount(m) != 4 || !(m & 1)) continue;
        int cut = 0;
        for (int a = 0; a < 8; ++a)
          for (int b = 0; b < 8; ++b)
            if ((m >> a & 1) && !(m >> b & 1)) cut += HcmLinks(a, b);
        worst = std::min(worst, cut);
      }
      return NvLinkPerLink(cluster_.gpu) * worst;
    }
    const BytesPerSecond per_gpu = s.intra == IntraNodeFabric::kPcie ? cluster_.gpu.pcie_bandwidth
                                                                      : cluster_.gpu.nvlink_bandwidth;
    return per_gpu * (s.gpus / 2);
  }
  // Half the NICs send to the other half; with more than one leaf the worst
  // cut splits leaves, and their uplinks carry 1/oversubscription of it.
  BytesPerSecond half = cluster_.inter_node.nic_bandwidth * (s.endpoints / 2.0);
  if (s.tiers >= 2 && s.leaves > 1) half = half / cluster_.inter_node.oversubscription;
  return half;
}

}  // namespace parasim
