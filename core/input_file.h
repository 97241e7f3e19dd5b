// Reading user-named input files with bounds: a path that is too long, names
// a directory, a device or a FIFO (`--model /dev/zero`), or a file larger than
// the limit is bad input (parasim::InvalidInput naming the file), never a
// crash or a 4 GB read. Every loader reads its files through here.
#pragma once

#include <cstdint>
#include <string>

namespace parasim {

// Far above any config, profile, log or measurement file parasim reads.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{64} << 20;    // 64 MiB
// Profiler traces of one step run to hundreds of MB.
inline constexpr uint64_t kMaxTraceFileBytes = uint64_t{1} << 30;     // 1 GiB
// PATH_MAX on Linux; a longer name cannot be opened anyway.
inline constexpr size_t kMaxPathLength = 4096;

// The whole file; throws InvalidInput(path, key, ...) when it cannot be read
// or breaks a limit. `key` names the flag or key that gave the path ("" if none).
std::string ReadInputFile(const std::string& path, const std::string& key = "",
                          uint64_t max_bytes = kMaxInputFileBytes);

// Whether `path` names something on disk; false (not an exception) for a name
// too long, a dangling link, a permission error.
bool PathExists(const std::string& path) noexcept;

}  // namespace parasim
