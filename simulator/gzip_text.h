// gzip for trace files (`--trace FILE.json.gz`): deterministic bytes (no
// file name, time 0 in the header), so the same trace compresses alike on
// every run. Builds without zlib say so (bad input, exit 2).
#pragma once

#include <string>

namespace parasim::simulator {

// True when this build has zlib (found at configure time).
bool CanGzip();

// `text` as a gzip stream. Throws InvalidInput naming `where` in a build
// without zlib.
std::string GzipText(const std::string& text, const std::string& where = "--trace");

// Whether a file name asks for gzip (ends in ".gz").
bool WantsGzip(const std::string& file_name);

}  // namespace parasim::simulator
