#include "facade/cli_support.h"

#include <cctype>
#include <cmath>

#include "core/error.h"
#include "core/unit_parse.h"

namespace parasim {

double ParseSizeBytes(const std::string& text, const std::string& where) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t.push_back(c);
  if (!t.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
    const double mult = last == 'K' ? 1024.0 : last == 'M' ? 1048576.0 : last == 'G' ? 1073741824.0
                        : last == 'T' ? 1099511627776.0 : 1.0;
    const std::string digits = mult > 1.0 ? t.substr(0, t.size() - 1) : t;
    if (!digits.empty() && digits.find_first_not_of("0123456789.") == std::string::npos) {
      const double v = std::stod(digits) * mult;
      if (v < 0 || !std::isfinite(v)) throw InvalidInput("", where, StrCat("'", text, "' is not a size"));
      return std::floor(v);
    }
  }
  return ParseBytes(text, where).si();
}

}  // namespace parasim
