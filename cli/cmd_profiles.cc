// `parasim profiles list | show NAME | stack NAME`: GPU profiles and cluster
// presets with sources, and software stacks as stack files to edit and load.
#include <algorithm>

#include "cli/command.h"
#include "cli/output/writers.h"
#include "facade/catalog.h"

namespace parasim::cli {
namespace {

// Nested objects flattened to dotted keys, one "key  value" line each.
void AppendFlat(const Value& v, const std::string& prefix, Value* flat) {
  for (const auto& [key, value] : v.members()) {
    if (value.kind() == Value::Kind::kObject) {
      AppendFlat(value, prefix + key + ".", flat);
    } else {
      flat->Set(prefix + key, value);
    }
  }
}

// The name column: at least `least` wide, and two spaces past the longest
// name so that a long one never runs into its description.
int NameWidth(const Value& items, int least) {
  int width = least;
  for (const Value& v : items.items()) width = std::max(width, static_cast<int>(v.Find("name")->as_string().size()) + 2);
  return width;
}

std::string CatalogText(const Value& c) {
  Table gpus, clusters, stacks;
  gpus.columns = {{"", 2}, {"", NameWidth(*c.Find("gpus"), 14), /*left=*/true}, {""}};
  for (const Value& g : c.Find("gpus")->items()) gpus.rows.push_back({"", *g.Find("name"), *g.Find("display_name")});
  clusters.columns = {{"", 2}, {"", NameWidth(*c.Find("clusters"), 14), /*left=*/true}, {""}};
  for (const Value& k : c.Find("clusters")->items())
    clusters.rows.push_back({"", *k.Find("name"),
                             std::to_string(k.Find("gpus_per_node")->as_int()) + " x " + k.Find("gpu")->as_string() +
                                 " per node"});
  stacks.columns = {{"", 2}, {"", NameWidth(*c.Find("stacks"), 18), /*left=*/true}, {""}};
  for (const Value& s : c.Find("stacks")->items())
    stacks.rows.push_back({"", *s.Find("name"), *s.Find("description")});
  gpus.header = clusters.header = stacks.header = false;   // each section has its title instead
  auto body = [](const Table& t) { return WriteTable(t); };
  return "GPU profiles:\n" + body(gpus) + "Cluster presets (--nodes N or --gpus N sets the size):\n" + body(clusters) +
         "Software stacks (--stack NAME, or a file from `parasim profiles stack NAME`):\n" + body(stacks);
}

const CommandRegistration kProfiles{
    "profiles", "List GPU profiles, cluster presets and software stacks, or show one", [](CLI::App& cmd) {
      auto out = std::make_shared<OutputOptions>();
      auto name = std::make_shared<std::string>();
      auto nodes = std::make_shared<int>(0);
      cmd.require_subcommand(1);
      CLI::App* list = cmd.add_subcommand("list", "List GPU profiles, cluster presets and software stacks");
      CLI::App* show = cmd.add_subcommand("show", "Show a GPU profile or a cluster preset (name or YAML file)");
      show->add_option("name", *name, "Profile or cluster name, or a YAML file")->required();
      show->add_option("--nodes", *nodes, "Node count for a cluster (default: the preset's)");
      CLI::App* stack = cmd.add_subcommand(
          "stack", "Print a software stack (preset or stack file) as a stack file: edit it, load it with --stack");
      stack->add_option("name", *name, "Stack preset (pytorch-fsdp, ...) or stack YAML file")->required();
      stack->add_option("-o,--output", out->output_file, "Write to FILE (whole or not at all) instead of stdout");
      AddOutputOptions(*list, *out, /*csv_allowed=*/false);
      AddOutputOptions(*show, *out, /*csv_allowed=*/false);
      return std::function<void()>([=] {
        if (stack->parsed()) {
          const ProfileDocument doc = StackFileDocument(*name);
          WriteOutput(*out, WriteYaml(doc.body, doc.comment));
          return;
        }
        const bool json = out->Parsed() == Format::kJson;
        if (list->parsed()) {
          const Value catalog = ProfileCatalog();
          WriteOutput(*out, json ? WriteJson(catalog) + "\n" : CatalogText(catalog));
          return;
        }
        const Value profile = ProfileInfo(*name, *nodes);
        Value flat = Value::Object();
        AppendFlat(profile, "", &flat);
        WriteOutput(*out, json ? WriteJson(profile) + "\n" : WriteFields(flat, 44));
      });
    }};

}  // namespace
}  // namespace parasim::cli
