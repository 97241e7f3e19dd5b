// Strong unit types: a quantity carries its dimension in the type, so seconds
// cannot be added to bytes, and conversions out are explicit divisions.
// Everything is stored as a double in SI base units (s, B, FLOP, W, J).
#pragma once

#include <cmath>
#include <compare>

namespace parasim {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double si) : v_(si) {}
  // The value in SI base units; prefer dividing by a unit (x / Seconds(1)).
  constexpr double si() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator-() const { return Quantity(-v_); }
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr Quantity& operator*=(double k) { v_ *= k; return *this; }
  constexpr Quantity& operator/=(double k) { v_ /= k; return *this; }
  // Same dimension divided gives a plain ratio.
  constexpr double operator/(Quantity o) const { return v_ / o.v_; }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double v_ = 0.0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) { return q * k; }
template <class Tag>
constexpr Quantity<Tag> Max(Quantity<Tag> a, Quantity<Tag> b) { return a < b ? b : a; }
template <class Tag>
constexpr Quantity<Tag> Min(Quantity<Tag> a, Quantity<Tag> b) { return b < a ? b : a; }
template <class Tag>
inline bool IsFinite(Quantity<Tag> q) { return std::isfinite(q.si()); }

struct SecondsTag {};
struct BytesTag {};
struct FlopTag {};
struct FlopRateTag {};
struct ByteRateTag {};
struct WattsTag {};
struct JoulesTag {};

using Seconds = Quantity<SecondsTag>;
using Bytes = Quantity<BytesTag>;          // a double: byte counts reach 1e15+ and feed rates
using Flops = Quantity<FlopTag>;           // floating-point operations (a count)
using FlopsPerSecond = Quantity<FlopRateTag>;
using BytesPerSecond = Quantity<ByteRateTag>;
using Watts = Quantity<WattsTag>;
using Joules = Quantity<JoulesTag>;

// Cross-dimension arithmetic: only the combinations physics allows.
constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.si() / r.si()); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.si() / r.si()); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.si() * t.si()); }
constexpr Bytes operator*(Seconds t, BytesPerSecond r) { return r * t; }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.si() * t.si()); }
constexpr Flops operator*(Seconds t, FlopsPerSecond r) { return r * t; }
constexpr BytesPerSecond operator/(Bytes b, Seconds t) { return BytesPerSecond(b.si() / t.si()); }
constexpr FlopsPerSecond operator/(Flops f, Seconds t) { return FlopsPerSecond(f.si() / t.si()); }
constexpr Joules operator*(Watts p, Seconds t) { return Joules(p.si() * t.si()); }
constexpr Joules operator*(Seconds t, Watts p) { return p * t; }
constexpr Watts operator/(Joules e, Seconds t) { return Watts(e.si() / t.si()); }

// Factories (decimal prefixes, as datasheets and nccl-tests use; GiB is binary).
constexpr Seconds Microseconds(double v) { return Seconds(v * 1e-6); }
constexpr Seconds Milliseconds(double v) { return Seconds(v * 1e-3); }
constexpr Seconds Nanoseconds(double v) { return Seconds(v * 1e-9); }
constexpr Bytes KB(double v) { return Bytes(v * 1e3); }
constexpr Bytes MB(double v) { return Bytes(v * 1e6); }
constexpr Bytes GB(double v) { return Bytes(v * 1e9); }
constexpr Bytes GiB(double v) { return Bytes(v * 1073741824.0); }
constexpr Bytes MiB(double v) { return Bytes(v * 1048576.0); }
constexpr BytesPerSecond GBps(double v) { return BytesPerSecond(v * 1e9); }
constexpr BytesPerSecond Gbps(double v) { return BytesPerSecond(v * 1e9 / 8.0); }
constexpr FlopsPerSecond TFlops(double v) { return FlopsPerSecond(v * 1e12); }

}  // namespace parasim
