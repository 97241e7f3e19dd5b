#include <catch2/catch.hpp>

#include "core/error.h"
#include "planner/constraints.h"

using namespace parasim;
using namespace parasim::planner;

TEST_CASE("planner: constraints fix and bound numeric keys", "[planner]") {
  const ConstraintSet c = ConstraintSet::Parse("tp=8, pp<=4,cp>=2, ep<4, dp>1, mbs!=3");
  REQUIRE(c.terms().size() == 6);
  CHECK(c.Allows(ConstraintKey::kTp, 8));
  CHECK_FALSE(c.Allows(ConstraintKey::kTp, 4));
  CHECK(c.Allows(ConstraintKey::kPp, 4));
  CHECK_FALSE(c.Allows(ConstraintKey::kPp, 8));
  CHECK(c.Allows(ConstraintKey::kCp, 2));
  CHECK_FALSE(c.Allows(ConstraintKey::kCp, 1));
  CHECK(c.Allows(ConstraintKey::kEp, 3));
  CHECK_FALSE(c.Allows(ConstraintKey::kEp, 4));
  CHECK_FALSE(c.Allows(ConstraintKey::kDp, 1));
  CHECK_FALSE(c.Allows(ConstraintKey::kMbs, 3));
  CHECK(c.Allows(ConstraintKey::kMbs, 2));
  CHECK(c.Allows(ConstraintKey::kVpp, 7));   // unconstrained keys allow everything
}

TEST_CASE("planner: constraint sets with 'in' and '|'", "[planner]") {
  for (const char* text : {"tp in 1|2|4", "tp=1|2|4", "TP IN 1 | 2 | 4"}) {
    const ConstraintSet c = ConstraintSet::Parse(text);
    CHECK(c.Allows(ConstraintKey::kTp, 1));
    CHECK(c.Allows(ConstraintKey::kTp, 4));
    CHECK_FALSE(c.Allows(ConstraintKey::kTp, 8));
  }
}

TEST_CASE("planner: word constraints", "[planner]") {
  const ConstraintSet c = ConstraintSet::Parse("sharding=zero2,recompute=none,sp=on,schedule in 1f1b|interleaved");
  CHECK(c.Allows(ConstraintKey::kSharding, std::string("zero2")));
  CHECK_FALSE(c.Allows(ConstraintKey::kSharding, std::string("zero3")));
  CHECK(c.Allows(ConstraintKey::kRecompute, std::string("none")));
  CHECK_FALSE(c.Allows(ConstraintKey::kRecompute, std::string("full")));
  CHECK(c.Allows(ConstraintKey::kSp, std::string("on")));
  CHECK_FALSE(c.Allows(ConstraintKey::kSp, std::string("off")));
  CHECK(c.Allows(ConstraintKey::kSchedule, std::string("interleaved")));
  CHECK_FALSE(c.Allows(ConstraintKey::kSchedule, std::string("gpipe")));

  const ConstraintSet h = ConstraintSet::Parse("sharding=hsdp");
  CHECK(h.Allows(ConstraintKey::kSharding, std::string("hsdp:8")));
  CHECK_FALSE(h.Allows(ConstraintKey::kSharding, std::string("zero3")));
  const ConstraintSet h8 = ConstraintSet::Parse("sharding=hsdp:8");
  CHECK(h8.Allows(ConstraintKey::kSharding, std::string("hsdp:8")));
  CHECK_FALSE(h8.Allows(ConstraintKey::kSharding, std::string("hsdp:4")));
  const ConstraintSet not_ddp = ConstraintSet::Parse("sharding!=ddp");
  CHECK_FALSE(not_ddp.Allows(ConstraintKey::kSharding, std::string("ddp")));
  CHECK(not_ddp.Allows(ConstraintKey::kSharding, std::string("zero1")));

  const ConstraintSet o = ConstraintSet::Parse("order=dp-tp-cp-ep-pp");
  REQUIRE(o.ListedWords(ConstraintKey::kOrder) == std::vector<std::string>{"dp-tp-cp-ep-pp"});
}

TEST_CASE("planner: every term must hold", "[planner]") {
  ConstraintSet c = ConstraintSet::Parse("tp>=2,tp<=8");
  c.Merge(ConstraintSet::Parse("tp!=4"));
  CHECK_FALSE(c.Allows(ConstraintKey::kTp, 1));
  CHECK(c.Allows(ConstraintKey::kTp, 2));
  CHECK_FALSE(c.Allows(ConstraintKey::kTp, 4));
  CHECK(c.Allows(ConstraintKey::kTp, 8));
  CHECK_FALSE(c.Allows(ConstraintKey::kTp, 16));
  CHECK(c.ToString() == "tp>=2,tp<=8,tp!=4");
  CHECK(ConstraintSet::Parse("").empty());
}

TEST_CASE("planner: bad constraints name the key", "[planner]") {
  CHECK_THROWS_WITH(ConstraintSet::Parse("tp=8,bogus=3"), Catch::Contains("bogus"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("tp=eight"), Catch::Contains("tp"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("sharding=zero9"), Catch::Contains("sharding") && Catch::Contains("zero9"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("sharding<=zero2"), Catch::Contains("sharding"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("recompute=some"), Catch::Contains("recompute"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("order=tp-dp-pp"), Catch::Contains("order"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("tp"), Catch::Contains("operator"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("tp<=1|2"), Catch::Contains("tp"));
  CHECK_THROWS_WITH(ConstraintSet::Parse("tp=8,,pp=2"), Catch::Contains("empty"));
  CHECK_THROWS_AS(ConstraintSet::Parse("pp=-1"), InvalidInput);
}
