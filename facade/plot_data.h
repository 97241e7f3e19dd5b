// A study's picture as plain text (`--plot`): a deterministic data table and
// a gnuplot script that reads it from the variable `datafile`; the CLI sets
// the terminal and the output and runs gnuplot (cli/plot.h). Not installed.
#pragma once

#include <string>

namespace parasim {

struct PlotData {
  std::string data;     // whitespace-separated table; '#' lines are comments
  std::string script;   // gnuplot commands, no terminal or output
};

// A gnuplot string literal (single-quoted, quotes doubled).
std::string GnuplotQuote(const std::string& text);

}  // namespace parasim
