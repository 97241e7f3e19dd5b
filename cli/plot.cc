// Runs gnuplot for `--plot` (see plot.h).
#include "cli/plot.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "parasim/error.h"

extern char** environ;

namespace parasim::cli {
namespace fs = std::filesystem;
namespace {

// The gnuplot terminal for the picture's extension ("" when none fits).
std::string Terminal(const std::string& plot_file) {
  const std::string ext = fs::path(plot_file).extension().string();
  if (ext == ".svg") return "set terminal svg size 1000,700 dynamic background rgb 'white' font 'Sans,11'\n";
  if (ext == ".png") return "set terminal pngcairo size 1000,700 background rgb 'white' font 'Sans,10'\n";
  return "";
}

// gnuplot's path, from PATH ("" when absent).
std::string FindGnuplot() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start).empty() ? "." : dirs.substr(start, end - start)) / "gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

fs::path Sibling(const std::string& plot_file, const std::string& ext) {
  return fs::path(plot_file).replace_extension(ext);
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.flush();
  if (!f) throw InvalidInput(path.string(), "--plot", "cannot write");
}

void MoveIntoPlace(const fs::path& tmp, const fs::path& target) {
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InvalidInput(target.string(), "--plot", "cannot move the finished file into place");
  }
}

// Runs `gnuplot script`; returns its exit status (-1 when it cannot start).
int RunGnuplot(const std::string& gnuplot, const fs::path& script) {
  const std::string script_arg = script.string();
  char* argv[] = {const_cast<char*>(gnuplot.c_str()), const_cast<char*>(script_arg.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, gnuplot.c_str(), nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

void AddPlotOption(CLI::App& cmd, std::string& plot_file) {
  cmd.add_option("--plot", plot_file,
                 "Draw a picture with gnuplot: FILE.svg or FILE.png (keeps FILE.dat, the data, and FILE.gp, the script)");
}

void CheckPlotRequest(const std::string& plot_file) {
  if (plot_file.empty()) return;
  if (Terminal(plot_file).empty())
    throw InvalidInput(plot_file, "--plot", "the picture's name must end in .svg or .png");
  if (FindGnuplot().empty())
    throw InvalidInput(plot_file, "--plot", "gnuplot is not on PATH (install gnuplot-nox, or drop --plot)");
}

void WritePlot(const PlotData& spec, const std::string& plot_file) {
  if (OutputSuppressed()) return;
  CheckPlotRequest(plot_file);
  const fs::path picture(plot_file);
  const fs::path data = Sibling(plot_file, ".dat");
  const fs::path script = Sibling(plot_file, ".gp");
  fs::path data_tmp = data, script_tmp = script, picture_tmp = picture;
  data_tmp += ".parasim-tmp";
  script_tmp += ".parasim-tmp";
  picture_tmp += ".parasim-tmp";
  const std::string terminal = Terminal(plot_file);
  // The kept script names the kept files; the one gnuplot runs names the temporaries.
  const auto script_text = [&](const fs::path& d, const fs::path& out) {
    return "datafile = " + GnuplotQuote(d.string()) + "\n" + terminal +
           "set output " + GnuplotQuote(out.string()) + "\n" + spec.script;
  };
  WriteText(data_tmp, spec.data);
  WriteText(script_tmp, script_text(data_tmp, picture_tmp));
  const int rc = RunGnuplot(FindGnuplot(), script_tmp);
  std::error_code ec;
  if (rc != 0 || !fs::exists(picture_tmp)) {
    for (const fs::path& p : {data_tmp, script_tmp, picture_tmp}) fs::remove(p, ec);
    throw Error("gnuplot failed (exit " + std::to_string(rc) + ") drawing " + plot_file);
  }
  WriteText(script_tmp, script_text(data.filename(), picture.filename()));
  MoveIntoPlace(data_tmp, data);
  MoveIntoPlace(script_tmp, script);
  MoveIntoPlace(picture_tmp, picture);
}

}  // namespace parasim::cli
