// `parasim models list | show NAME_OR_FILE`: the model shapes parasim knows.
#include "cli/command.h"
#include "cli/output/writers.h"
#include "facade/catalog.h"

namespace parasim::cli {
namespace {

int64_t Int(const Value& model, const char* key) { return model.Find(key)->as_int(); }

Table ListTable(const Value& models, bool csv) {
  Table t;
  if (csv) {
    const char* keys[] = {"name", "parameters", "hidden_size", "num_layers", "num_attention_heads",
                          "num_kv_heads", "ffn_hidden_size", "vocab_size", "num_experts"};
    for (const char* k : keys) t.columns.push_back({k});
    for (const Value& m : models.items()) {
      std::vector<Value> row;
      for (const char* k : keys) row.push_back(*m.Find(k));
      t.rows.push_back(std::move(row));
    }
    return t;
  }
  t.columns = {{"model", 14, /*left=*/true}, {"params", 10}, {"layers", 8}, {"hidden", 8}, {"heads", 7},
               {"kv", 5},  {"ffn", 8}, {"vocab", 8}, {"experts", 8}};
  for (const Value& m : models.items()) {
    const bool moe = Int(m, "num_experts") > 0;
    t.rows.push_back({*m.Find("name"), FormatCell(static_cast<double>(Int(m, "parameters")) / 1e9, 2) + "B",
                      Int(m, "num_layers"), Int(m, "hidden_size"), Int(m, "num_attention_heads"),
                      Int(m, "num_kv_heads"), Int(m, moe ? "moe_ffn_hidden_size" : "ffn_hidden_size"),
                      Int(m, "vocab_size"),
                      moe ? std::to_string(Int(m, "num_experts")) + "x" + std::to_string(Int(m, "experts_per_token"))
                          : std::string("-")});
  }
  return t;
}

std::string Render(const Value& v, const OutputOptions& out, bool list) {
  switch (out.Parsed()) {
    case Format::kJson: return WriteJson(v) + "\n";
    case Format::kCsv: return WriteCsv(ListTable(v, /*csv=*/true));
    case Format::kTable: break;
  }
  return list ? WriteTable(ListTable(v, /*csv=*/false)) : WriteFields(v, 22);
}

const CommandRegistration kModels{
    "models", "List the built-in models or show one (preset, YAML file or HF config.json)", [](CLI::App& cmd) {
      auto out = std::make_shared<OutputOptions>();
      auto name = std::make_shared<std::string>();
      cmd.require_subcommand(1);
      CLI::App* list = cmd.add_subcommand("list", "List the built-in models");
      CLI::App* show = cmd.add_subcommand("show", "Show one model's shape and exact parameter count");
      show->add_option("model", *name, "Preset name or path")->required();
      AddOutputOptions(*list, *out);
      AddOutputOptions(*show, *out, /*csv_allowed=*/false);
      return std::function<void()>([=] {
        if (list->parsed()) {
          WriteOutput(*out, Render(ModelCatalog(), *out, /*list=*/true));
        } else {
          WriteOutput(*out, Render(ModelInfo(*name), *out, /*list=*/false));
        }
      });
    }};

}  // namespace
}  // namespace parasim::cli
