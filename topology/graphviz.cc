// Topology::ToDot: Graphviz text through Boost.Graph's writer, one edge per
// cable (link pair), labelled with its class and bandwidth per direction.
#include <sstream>

#include <boost/graph/graphviz.hpp>

#include "core/error.h"
#include "topology/topology.h"

namespace parasim {
namespace {

struct DotVertex {
  std::string name;
  VertexKind kind;
};
struct DotEdge {
  LinkClass cls;
  double capacity_Bps;
};
using DotGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, DotVertex, DotEdge>;

const char* Shape(VertexKind k) {
  switch (k) {
    case VertexKind::kGpu: return "box";
    case VertexKind::kNic: return "ellipse";
    case VertexKind::kNvSwitch:
    case VertexKind::kHostBridge: return "hexagon";
    default: return "diamond";
  }
}

}  // namespace

std::string Topology::ToDot() const {
  DotGraph g(vertex_count());
  for (int v = 0; v < vertex_count(); ++v) g[v] = DotVertex{VertexName(v), vertex_kind_[v]};
  for (int l = 0; l < link_count(); l += 2)
    boost::add_edge(link_src_[l], link_dst_[l], DotEdge{link_class_[l], capacity_Bps_[l]}, g);
  std::ostringstream os;
  boost::write_graphviz(
      os, g,
      [&g](std::ostream& o, DotGraph::vertex_descriptor v) {
        o << "[label=\"" << g[v].name << "\",shape=" << Shape(g[v].kind) << "]";
      },
      [&g](std::ostream& o, DotGraph::edge_descriptor e) {
        o << "[label=\"" << ToString(g[e].cls) << " " << StrCat(g[e].capacity_Bps / 1e9) << " GB/s\"]";
      },
      [this](std::ostream& o) {
        o << "graph [label=\"" << cluster_.name << ": " << shape_.gpus << " GPUs\",overlap=false];\n";
      });
  return os.str();
}

}  // namespace parasim
