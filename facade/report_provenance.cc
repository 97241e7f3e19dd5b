#include "facade/report_provenance.h"

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

namespace parasim {

namespace {
std::map<std::string, InputRecord>& Inputs() {
  static std::map<std::string, InputRecord> inputs;   // by role: a stable order
  return inputs;
}
}  // namespace

void RecordInput(InputRecord input) {
  const std::string role = input.role;
  Inputs()[role] = std::move(input);
}

void RecordFileOrPreset(const std::string& role, const std::string& name_or_path,
                        const std::string& preset_relative) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) {
    RecordInput({role, name_or_path, FileSha256(name_or_path)});
  } else {
    RecordInput({role, name_or_path, preset_relative.empty() ? "" : EmbeddedSha256(preset_relative)});
  }
}

std::string ProvenanceMembers() {
  nlohmann::ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["parasim_version"] = ParasimVersion();
  nlohmann::ordered_json inputs = nlohmann::ordered_json::object();
  for (const auto& [role, in] : Inputs()) {
    nlohmann::ordered_json e;
    e["name"] = in.name;
    e["sha256"] = in.sha256.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(in.sha256);
    inputs[role] = e;
  }
  j["inputs"] = inputs;
  // "{\n  a,\n  b\n}" -> "  a,\n  b": members at the report's own indent.
  const std::string text = j.dump(2);
  return text.substr(2, text.size() - 4);
}

}  // namespace parasim
