// core: unit types and unit-string parsing.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/unit_parse.h"
#include "core/units.h"

using namespace parasim;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

template <class A, class B>
concept Addable = requires(A a, B b) { a + b; };
template <class A, class B>
concept Comparable = requires(A a, B b) { a < b; };

// Units that differ must not mix: these are compile-time facts.
static_assert(!Addable<Seconds, Bytes>);
static_assert(!Addable<BytesPerSecond, FlopsPerSecond>);
static_assert(!Comparable<Watts, Joules>);
static_assert(Addable<Seconds, Seconds>);
static_assert(sizeof(Seconds) == sizeof(double));

TEST_CASE("core: cross-dimension arithmetic follows physics", "[core]") {
  const Seconds t = GB(100) / GBps(50);
  REQUIRE_THAT(t / Seconds(1), WithinRel(2.0, 1e-15));
  REQUIRE_THAT((Watts(700) * Seconds(2)) / Joules(1), WithinRel(1400.0, 1e-15));
  REQUIRE_THAT((TFlops(989) * Seconds(1)) / Flops(1), WithinRel(989e12, 1e-15));
  REQUIRE_THAT(Gbps(400) / GBps(1), WithinRel(50.0, 1e-15));  // bits are not bytes
}

TEST_CASE("core: unit strings parse with decimal and binary prefixes", "[core]") {
  REQUIRE_THAT(ParseBandwidth("400 Gb/s", "k") / GBps(1), WithinRel(50.0, 1e-12));
  REQUIRE_THAT(ParseBandwidth("3.35 TB/s", "k") / GBps(1), WithinRel(3350.0, 1e-12));
  REQUIRE_THAT(ParseBytes("80 GiB", "k") / Bytes(1), WithinRel(80.0 * 1073741824.0, 1e-12));
  REQUIRE_THAT(ParseBytes("80GB", "k") / Bytes(1), WithinRel(80e9, 1e-12));
  REQUIRE_THAT(ParseDuration("5 us", "k") / Seconds(1), WithinRel(5e-6, 1e-12));
  REQUIRE_THAT(ParseDuration("200 ns", "k") / Seconds(1), WithinRel(2e-7, 1e-12));
  REQUIRE_THAT(ParseFlopRate("989 TFLOP/s", "k") / FlopsPerSecond(1), WithinRel(989e12, 1e-12));
  REQUIRE_THAT(ParsePower("10.2 kW", "k") / Watts(1), WithinRel(10200.0, 1e-12));
}

TEST_CASE("core: bad unit strings name the key and what would be valid", "[core]") {
  REQUIRE_THROWS_WITH(ParseBandwidth("400", "inter_node.nic_bandwidth"),
                      Contains("inter_node.nic_bandwidth") && Contains("has no unit"));
  REQUIRE_THROWS_WITH(ParseBandwidth("400 Gbps", "nic"), Contains("unknown bandwidth unit 'Gbps'") && Contains("Gb/s"));
  REQUIRE_THROWS_WITH(ParseBytes("lots", "memory.capacity"), Contains("is not a size"));
  REQUIRE_THROWS_WITH(ParseDuration("-1 us", "lat"), Contains("negative"));
}
