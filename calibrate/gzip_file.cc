#include "calibrate/gzip_file.h"

#include <fstream>
#include <sstream>

#ifdef PARASIM_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/error.h"
#include "core/input_file.h"

namespace parasim::calibrate {
namespace {

bool HasGzipMagic(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

#ifdef PARASIM_HAVE_ZLIB
// Inflates every gzip member in `bytes` (gzip files may be concatenated).
std::string Inflate(const std::string& bytes, const std::string& path) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw InvalidInput(path, "", "zlib could not start inflating");
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > kMaxTraceFileBytes) {   // a gzip bomb is bad input, not an out-of-memory
      inflateEnd(&z);
      throw InvalidInput(path, "", StrCat("inflates to more than ", kMaxTraceFileBytes >> 20, " MiB"));
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (z.avail_in == 0 && z.avail_out != 0) break;  // input ended inside a member
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    throw InvalidInput(path, "", "a truncated or corrupt gzip stream (zlib: " + std::string(z.msg ? z.msg : "unexpected end") + ")");
  }
  return out;
}
#endif

}  // namespace

bool GzipSupported() {
#ifdef PARASIM_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

std::string ReadMaybeGzipFile(const std::string& path) {
  std::string bytes = ReadInputFile(path, "", kMaxTraceFileBytes);   // a regular file, bounded
  if (!HasGzipMagic(bytes)) return bytes;
#ifdef PARASIM_HAVE_ZLIB
  return Inflate(bytes, path);
#else
  throw InvalidInput(path, "", "a gzip file, and this build has no zlib (configure with zlib1g-dev); gunzip it first");
#endif
}

}  // namespace parasim::calibrate
