// `parasim topology` through the facade (not installed): the cluster graph's
// counts, injection and bisection bandwidth, and with a parallel config what
// each dimension's group sees (closed form and graph).
#pragma once

#include <string>

#include "facade/spec_inputs.h"
#include "facade/value.h"

namespace parasim {

// The cluster of `inputs` (cluster, nodes or gpus, hw_profile) as a report:
// graph counts and bandwidths; with `config` ("dp=..,tp=..", "" = none) also
// "config" and "groups", one per dimension.
Value TopologyReport(const SpecInputs& inputs, const std::string& config);

// The cluster graph in Graphviz dot.
std::string TopologyDot(const SpecInputs& inputs);

}  // namespace parasim
