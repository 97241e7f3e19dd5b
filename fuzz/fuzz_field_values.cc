// Values with units ("400 Gb/s", "700 W") through the field registry: the
// first byte picks the unit.
#include <cmath>

#include "core/field_registry.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto unit = static_cast<parasim::FieldUnit>(data[0] % 8);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  parasim_fuzz::ExpectValueOrInvalidInput([&] {
    const double v = parasim::ParseFieldValue(unit, text, "fuzz");
    // Every value read is finite, and written text reads back to it.
    if (!std::isfinite(v)) std::abort();
    if (parasim::ParseFieldValue(unit, parasim::FormatFieldValue(unit, v), "fuzz") != v &&
        unit != parasim::FieldUnit::kFlag) {
      std::abort();
    }
  });
  return 0;
}
