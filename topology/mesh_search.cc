// Routes inside a hybrid-cube-mesh node, found by breadth-first search on a
// template of one node. GPUs do not forward NVLink traffic, so each GPU is
// split into an "out" vertex (sends) and an "in" vertex (receives, no exits):
// a path can use one NVLink, or go up to the host bridge and down over PCIe.
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include "core/check.h"
#include "topology/hybrid_cube_mesh.h"
#include "topology/internal/graph.h"

namespace parasim::internal {

MeshRoutes SearchMeshRoutes() {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, MeshStep>;
  constexpr int kHost = 2 * kHcmGpus;
  Graph g(kHost + 1);
  // NVLink edges first: among equally short paths BFS keeps the first found.
  for (int a = 0; a < kHcmGpus; ++a)
    for (int b = 0; b < kHcmGpus; ++b)
      if (a != b && HcmLinks(a, b) > 0) boost::add_edge(a, kHcmGpus + b, MeshStep{MeshStep::kNvLink, a, b}, g);
  for (int a = 0; a < kHcmGpus; ++a) {
    boost::add_edge(a, kHost, MeshStep{MeshStep::kHostUp, a, 0}, g);
    boost::add_edge(kHost, kHcmGpus + a, MeshStep{MeshStep::kHostDown, 0, a}, g);
  }
  MeshRoutes routes;
  for (int a = 0; a < kHcmGpus; ++a) {
    std::vector<Graph::edge_descriptor> pred(boost::num_vertices(g));
    std::vector<char> reached(boost::num_vertices(g), 0);
    reached[a] = 1;
    boost::breadth_first_search(
        g, a,
        boost::visitor(boost::make_bfs_visitor(std::make_pair(
            boost::record_edge_predecessors(pred.data(), boost::on_tree_edge()),
            boost::put_property(reached.data(), char{1}, boost::on_discover_vertex())))));
    for (int b = 0; b < kHcmGpus; ++b) {
      if (a == b) continue;
      int v = kHcmGpus + b;
      PARASIM_CHECK(reached[v], "mesh GPU unreachable");
      std::vector<MeshStep> steps;
      while (v != a) {
        steps.push_back(g[pred[v]]);
        v = static_cast<int>(boost::source(pred[v], g));
      }
      routes[a][b].assign(steps.rbegin(), steps.rend());
    }
  }
  return routes;
}

}  // namespace parasim::internal
