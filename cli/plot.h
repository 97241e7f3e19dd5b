// `--plot FILE.svg|FILE.png`: draws a study's picture with gnuplot. Beside the
// picture it keeps the data table (FILE.dat, deterministic) and the script
// (FILE.gp) that re-draws it. Every file is written to a temporary name and
// moved into place, so a failure leaves nothing half-written.
#pragma once

#include <string>

#include "facade/plot_data.h"

namespace CLI {
class App;
}

namespace parasim::cli {

// Adds `--plot FILE` to a command.
void AddPlotOption(CLI::App& cmd, std::string& plot_file);

// Checks before the study runs: the extension names a terminal and gnuplot is
// on PATH. Throws InvalidInput naming --plot otherwise (exit 2).
void CheckPlotRequest(const std::string& plot_file);

// Writes FILE.dat and FILE.gp, then runs gnuplot to draw FILE.
void WritePlot(const PlotData& spec, const std::string& plot_file);

}  // namespace parasim::cli
