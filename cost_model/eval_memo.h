// Per-thread memo tables for the tier-A evaluator: a planner asks for many
// configs that share parts (unit costs, collective times, overlap phases),
// so each thread keeps small fixed-size tables of pure results keyed by
// exactly what they depend on. Lookups only (never iterated), so output
// never depends on what a table holds.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

namespace parasim {

inline uint64_t HashMix(uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; }   // FNV-1a step
inline constexpr uint64_t kHashSeed = 1469598103934665603ull;
// FNV's low bits depend only on the inputs' low bits: spread the high ones
// down before taking a slot (MurmurHash3's finalizer).
inline uint64_t HashFinish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}
inline uint64_t DoubleBits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// A placement order ("tp-cp-ep-dp-pp") held inline so keys stay flat; Fits()
// is false for a longer text, whose config then bypasses the memos.
struct OrderText {
  std::array<char, 23> text{};
  uint8_t size = 0;
  explicit OrderText(const std::string& s) {
    if (s.size() > text.size()) {
      size = 0xff;
      return;
    }
    size = static_cast<uint8_t>(s.size());
    std::memcpy(text.data(), s.data(), s.size());
  }
  OrderText() = default;
  bool Fits() const { return size != 0xff; }
  bool operator==(const OrderText&) const = default;
  uint64_t Hash(uint64_t h) const {
    uint64_t w[3];
    std::memcpy(w, text.data(), 16);
    std::memcpy(&w[2], text.data() + 16, 7);
    w[2] &= 0x00ffffffffffffffull;
    for (uint64_t x : w) h = HashMix(h, x);
    return HashMix(h, size);
  }
};

// Two-way set associative (a planner alternates between a few configs'
// keys): on a miss the less recently used way is overwritten. Key needs
// Hash() and ==; Value is a pure function of Key.
template <class Key, class Value, size_t Sets>
class SlotMemo {
 public:
  template <class Make>
  const Value& Get(const Key& key, Make&& make) {
    Set& set = sets_[key.Hash() % Sets];
    for (int w = 0; w < 2; ++w) {
      if (set.used[w] && set.way[w].key == key) {
        set.mru = w;
        return set.way[w].value;
      }
    }
    const int w = set.used[0] ? (set.used[1] ? 1 - set.mru : 1) : 0;
    Slot& slot = set.way[w];
    slot.value = make();
    slot.key = key;
    set.used[w] = true;
    set.mru = w;
    return slot.value;
  }

 private:
  struct Slot {
    Key key;
    Value value;
  };
  struct Set {
    bool used[2] = {false, false};
    int mru = 0;
    Slot way[2];
  };
  std::array<Set, Sets> sets_{};
};

}  // namespace parasim
