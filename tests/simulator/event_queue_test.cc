#include "simulator/event_queue.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

namespace parasim::simulator {
namespace {

TEST_CASE("simulator: event queue pops by time, then by push order", "[simulator]") {
  EventQueue q;
  q.Push(2.0, 0, 0);
  q.Push(1.0, 1, 0);
  q.Push(2.0, 2, 0);
  q.Push(1.0, 3, 0);
  q.Push(0.5, 4, 0);
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.Pop().target);
  REQUIRE(order == std::vector<int>{4, 1, 3, 0, 2});
}

TEST_CASE("simulator: event queue matches a stable sort on random keys", "[simulator]") {
  // Expectation: many ties (times drawn from 16 values); the pop order equals
  // a stable sort of the push order by time.
  std::mt19937_64 rng(42);
  EventQueue q;
  std::vector<std::pair<double, int>> pushed;
  for (int i = 0; i < 5000; ++i) {
    double t = static_cast<double>(rng() % 16);
    q.Push(t, i, 0);
    pushed.emplace_back(t, i);
    if (i % 3 == 2) {  // interleave pops with pushes
      auto it = std::min_element(pushed.begin(), pushed.end(),
                                 [](auto& a, auto& b) { return a.first < b.first; });
      Event e = q.Pop();
      REQUIRE(e.target == it->second);
      pushed.erase(it);
    }
  }
  std::stable_sort(pushed.begin(), pushed.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [t, id] : pushed) {
    Event e = q.Pop();
    REQUIRE(e.time_s == t);
    REQUIRE(e.target == id);
  }
  REQUIRE(q.empty());
}

}  // namespace
}  // namespace parasim::simulator
