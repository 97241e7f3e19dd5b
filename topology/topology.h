// The cluster as a graph: GPUs, NVSwitches (or the PCIe host bridge), NICs
// and leaf/spine/core switches joined by directed links, each with a class,
// a capacity per direction and a latency. Held twice: as a Boost.Graph
// adjacency_list (inside topology/*.cc only: searches, Graphviz) and as this
// flat structure-of-arrays view for the flow-level simulator (tier C).
//
// Links come in pairs: link 2i goes "up" (towards the core), 2i+1 is its
// reverse. A link stands for one cable bundle: a GPU's NVLinks to the switch
// fabric, a leaf-spine trunk of several ports, ...
//
// Routing is closed-form on the fat-tree (O(1) per query, O(N) memory, no
// tables): up to the lowest common switch level and back down, with
// deterministic ECMP by destination (D-mod-K: the spine is the destination's
// leaf port mod the spine count, the core the destination leaf mod the core
// group size), which spreads shift permutations such as rings evenly.
// Inside a hybrid-cube-mesh node, routes come from a breadth-first search.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/units.h"
#include "topology/cluster_shape.h"
#include "topology/group_path.h"

namespace parasim {

enum class VertexKind { kGpu, kNvSwitch, kHostBridge, kNic, kLeaf, kSpine, kCore };
const char* ToString(VertexKind k);

// A route: the directed link ids from source to destination, in order.
class Route {
 public:
  static constexpr int kMaxLinks = 16;
  void push_back(int32_t link);
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int32_t operator[](int i) const { return links_[i]; }
  const int32_t* begin() const { return links_.data(); }
  const int32_t* end() const { return links_.data() + size_; }

 private:
  std::array<int32_t, kMaxLinks> links_{};
  int size_ = 0;
};

class Topology {
 public:
  // Throws parasim::Error for clusters that cannot be built.
  static Topology Build(const ClusterSpec& cluster);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  const ClusterSpec& cluster() const { return cluster_; }
  const ClusterShape& shape() const { return shape_; }
  int gpu_count() const { return shape_.gpus; }
  int DomainOf(int gpu) const { return gpu / shape_.domain_gpus; }

  // --- vertices ---
  int vertex_count() const { return static_cast<int>(vertex_kind_.size()); }
  VertexKind vertex_kind(int v) const { return vertex_kind_[v]; }
  std::string VertexName(int v) const;
  int GpuVertex(int gpu) const { return gpu; }
  int CountVertices(VertexKind k) const;

  // --- links (structure of arrays, indexed by link id) ---
  int link_count() const { return static_cast<int>(capacity_Bps_.size()); }
  const std::vector<double>& capacity_Bps() const { return capacity_Bps_; }
  const std::vector<double>& latency_s() const { return latency_s_; }
  const std::vector<LinkClass>& link_class() const { return link_class_; }
  const std::vector<int32_t>& link_src() const { return link_src_; }
  const std::vector<int32_t>& link_dst() const { return link_dst_; }
  // Cables (link pairs) of a class.
  int CableCount(LinkClass c) const;

  // --- routing ---
  // Route from GPU a to GPU b. Across domains the traffic leaves through NIC
  // `rail` of a's domain and enters through NIC `rail` of b's (rail < 0: each
  // GPU's own first NIC). A GPU not attached to the rail's NIC reaches it over
  // NVLink through the GPU that is (PXN), preferring the one with b's local index.
  Route RouteBetween(int gpu_a, int gpu_b, int rail = -1) const;
  // Fabric switches (leaf, spine, core) the route traverses.
  int SwitchHops(const Route& r) const;
  Seconds RouteLatency(const Route& r) const;

  // --- whole-fabric figures ---
  BytesPerSecond InjectionBandwidth() const;   // per GPU: its share of the domain's NICs
  // Bisection bandwidth per direction: the worst balanced cut (closed form).
  BytesPerSecond BisectionBandwidth() const;

  // Graphviz text (boost::write_graphviz), one edge per cable.
  std::string ToDot() const;

 private:
  struct Impl;
  Topology();

  void AddLinkPair(int a, int b, LinkClass c, double capacity_Bps, double latency_s);
  int IntraUp(int gpu) const { return intra_base_ + 2 * gpu; }
  int PcieUp(int gpu, int j) const { return pcie_base_ + 2 * (gpu * shape_.NicsPerGpu() + j); }
  int NicUp(int endpoint) const { return nic_base_ + 2 * endpoint; }
  int LeafSpineUp(int leaf, int spine_in_pod) const {
    return leaf_spine_base_ + 2 * (leaf * shape_.spines_per_pod + spine_in_pod);
  }
  int SpineCoreUp(int spine, int core_in_group) const {
    return spine_core_base_ + 2 * (spine * shape_.cores_per_group + core_in_group);
  }
  void AppendIntra(int gpu_a, int gpu_b, Route* r) const;
  void AppendFabric(int domain_a, int nic_a, int domain_b, int nic_b, Route* r) const;
  bool Attached(int local_gpu, int nic) const {
    const int f = shape_.FirstNic(local_gpu);
    return nic >= f && nic < f + shape_.NicsPerGpu();
  }

  ClusterSpec cluster_;
  ClusterShape shape_;
  std::vector<VertexKind> vertex_kind_;
  std::vector<double> capacity_Bps_;
  std::vector<double> latency_s_;
  std::vector<LinkClass> link_class_;
  std::vector<int32_t> link_src_;
  std::vector<int32_t> link_dst_;
  // First vertex of each kind and first link of each block.
  int intra_switch_base_ = 0, nic_vertex_base_ = 0, leaf_base_ = 0, spine_base_ = 0, core_base_ = 0;
  int intra_base_ = 0, mesh_base_ = 0, pcie_base_ = 0, nic_base_ = 0, leaf_spine_base_ = 0, spine_core_base_ = 0;
  // Hybrid cube mesh: link id offset (within a node's mesh block) per directed GPU pair, -1 = none,
  // and the searched route template between local GPUs (offsets into that block or intra links).
  std::array<std::array<int, 8>, 8> mesh_pair_{};
  int mesh_links_per_node_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parasim
