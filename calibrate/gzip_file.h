// Reading a file that may be gzip-compressed (torch.profiler writes
// `.pt.trace.json.gz`): the bytes as they are, or inflated when the file
// starts with the gzip magic. Builds without zlib reject gzip input with a
// hint to gunzip it.
#pragma once

#include <string>

namespace parasim::calibrate {

// True when this build can inflate gzip (zlib found at configure time).
bool GzipSupported();

// The file's content, inflated if it is gzip. Throws parasim::Error naming
// the file when it cannot be read, is a truncated or corrupt gzip stream, or
// is gzip in a build without zlib.
std::string ReadMaybeGzipFile(const std::string& path);

}  // namespace parasim::calibrate
