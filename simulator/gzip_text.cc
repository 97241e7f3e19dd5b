#include "simulator/gzip_text.h"

#include "core/check.h"
#include "core/error.h"

#ifdef PARASIM_HAVE_ZLIB
#include <zlib.h>
#endif

namespace parasim::simulator {

bool WantsGzip(const std::string& file_name) {
  return file_name.size() > 3 && file_name.compare(file_name.size() - 3, 3, ".gz") == 0;
}

#ifdef PARASIM_HAVE_ZLIB

bool CanGzip() { return true; }

std::string GzipText(const std::string& text, const std::string& where) {
  if (text.size() >= (1ull << 32) - 1) throw InvalidInput("", where, "over 4 GB: write it as .json, or trace fewer ranks");
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper; zlib writes time 0 and no name unless told.
  PARASIM_CHECK(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
                "deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const size_t written = z.total_out;
  deflateEnd(&z);
  PARASIM_CHECK(rc == Z_STREAM_END, "deflate did not finish (", rc, ")");
  out.resize(written);
  return out;
}

#else

bool CanGzip() { return false; }

std::string GzipText(const std::string&, const std::string& where) {
  throw InvalidInput("", where, "this build has no zlib: write the trace as .json (or rebuild with zlib1g-dev)");
}

#endif

}  // namespace parasim::simulator
