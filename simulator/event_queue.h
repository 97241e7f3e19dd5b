// The simulator's future-event set: a 4-ary min-heap keyed by (time, sequence
// number). The sequence number is assigned when an event is pushed, so events
// at the same time pop in the order they were scheduled (SimGrid's stable
// heap; STYLE.md §4.6) and never by pointer or hash order.
//
//   EventQueue q;
//   q.Reserve(1 << 16);
//   q.Push(1.5e-3, /*target=*/7, /*version=*/0);
//   Event e = q.Pop();   // e.time_s == 1.5e-3, e.target == 7
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace parasim::simulator {

struct Event {
  double time_s = 0;      // simulated time, seconds
  uint64_t sequence = 0;  // push order: breaks ties in time
  int32_t target = 0;     // what the event is about (an activity index)
  uint32_t version = 0;   // lets the owner drop events made stale by a reschedule
};

class EventQueue {
 public:
  // Capacity up front: Push never allocates while size() stays below it.
  void Reserve(size_t capacity) { heap_.reserve(capacity); }
  void Clear() { heap_.clear(); next_sequence_ = 0; }

  void Push(double time_s, int32_t target, uint32_t version);
  // Earliest event; the queue must not be empty.
  Event Pop();
  const Event& Top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

 private:
  static bool Before(const Event& a, const Event& b) {
    return a.time_s < b.time_s || (a.time_s == b.time_s && a.sequence < b.sequence);
  }
  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace parasim::simulator
