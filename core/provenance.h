// What a report was computed from (DESIGN.md §5): the report schema version,
// the parasim version and a SHA-256 per input file (cluster, GPU profile,
// stack, job, calibration), so a plan can be audited and replayed. Presets
// are hashed as the text compiled into the library.
#pragma once

#include <string>
#include <vector>

namespace parasim {

// Bumped when a report field changes meaning or disappears (adding one does not).
inline constexpr int kReportSchemaVersion = 1;

// "0.1.0": the CMake project version.
const char* ParasimVersion();

struct InputRecord {
  std::string role;     // "model", "cluster", "gpu_profile", "stack", "job", "hw_profile"
  std::string name;     // the preset name or the path as given
  std::string sha256;   // of the file's bytes or the embedded preset's text; "" = built in, no text
};

// SHA-256 of a file's bytes; throws InvalidInput naming `path` when unreadable.
std::string FileSha256(const std::string& path);
// SHA-256 of an embedded profile file ("gpus/h100-sxm.yaml"); "" when there is none.
std::string EmbeddedSha256(const std::string& relative_path);

}  // namespace parasim
