// Per-thread memo tables for the tier-A evaluator: a planner asks for many
// configs that share parts (unit costs, collective times, overlap phases),
// so each thread keeps small fixed-size tables of pure results keyed by
// exactly what they depend on. Lookups only (never iterated), so output
// never depends on what a table holds.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <cstddef>
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

// A memo key: flat words, compared whole. Hash: independent multiplies (no
// serial chain), then a finalizer; only slot choice depends on it.
template <size_t N>
struct WordKey {
  std::array<uint64_t, N> w{};
  bool operator==(const WordKey& o) const {
    for (size_t i = 0; i < N; ++i)   // (inline: a memcmp call costs more than the words)
      if (w[i] != o.w[i]) return false;
    return true;
  }
  uint64_t Hash() const {
    static constexpr std::array<uint64_t, N> kMul = [] {   // odd multipliers from an LCG
      std::array<uint64_t, N> k{};
      uint64_t x = 0x9e3779b97f4a7c15ull;
      for (uint64_t& m : k) {
        m = x | 1;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
      }
      return k;
    }();
    uint64_t h = 0;
    for (size_t i = 0; i < N; ++i) h += w[i] * kMul[i];
    return HashFinish(h);
  }
};

// Two 32-bit values in one key word.
inline uint64_t Pack(int lo, int hi) {
  return static_cast<uint64_t>(static_cast<uint32_t>(lo)) | (static_cast<uint64_t>(static_cast<uint32_t>(hi)) << 32);
}

// A placement order ("tp-cp-ep-dp-pp") as three key words; false when the
// text is longer than fits (such a config bypasses the memos).
inline bool PackOrder(const std::string& s, uint64_t* out) {
  char buf[24] = {};
  if (s.size() > 23) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[23] = static_cast<char>(s.size());
  std::memcpy(out, buf, sizeof buf);
  return true;
}

// Two-way set associative (a planner alternates between a few configs'
// keys): on a miss the less recently used way is overwritten. Key needs
// Hash() and ==; Value is a pure function of Key. Each set's hashes sit in a
// small array of their own (a few KiB, cache resident): a lookup compares
// the full key only where the hash matches, so a miss touches no key or
// value (equal keys have equal hashes, so the results are the same).
template <class Key, class Value, size_t Sets>
class SlotMemo {
 public:
  template <class Make>
  const Value& Get(const Key& key, Make&& make) {
    if (!table_) table_ = std::make_unique<Table>();   // heap: keeps thread-local storage small
    const uint64_t h = key.Hash();
    const size_t s = h % Sets;
    Tag& tag = table_->tags[s];
    Slot* way = table_->slots[s].data();
    for (int w = 0; w < 2; ++w) {
      if (tag.used[w] && tag.hash[w] == h && way[w].key == key) {
        tag.mru = static_cast<uint8_t>(w);
        return way[w].value;
      }
    }
    const int w = tag.used[0] ? (tag.used[1] ? 1 - tag.mru : 1) : 0;
    Slot& slot = way[w];
    slot.value = make();
    slot.key = key;
    tag.hash[w] = h;
    tag.used[w] = true;
    tag.mru = static_cast<uint8_t>(w);
    return slot.value;
  }

 private:
  struct Slot {
    Key key;
    Value value;
  };
  struct Tag {
    uint64_t hash[2] = {0, 0};
    bool used[2] = {false, false};
    uint8_t mru = 0;
  };
  struct Table {
    std::array<Tag, Sets> tags;
    std::array<std::array<Slot, 2>, Sets> slots;
  };
  std::unique_ptr<Table> table_;
};

}  // namespace parasim
