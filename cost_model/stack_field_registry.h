// The software stack's part of the field registry (core/field_registry.h):
// every scalar field of SoftwareStack and of its attention kernels, with its
// key (the member's name, as in stack files), range and meaning. Read by the
// stack file reader and writer (software_stack_io.cc), Validate and --vary.
#pragma once

#include <string>
#include <vector>

#include "core/field_registry.h"
#include "cost_model/software_stack.h"

namespace parasim {

using StackField = FieldEntry<SoftwareStack>;
using AttentionField = FieldEntry<AttentionKernel>;

// Every scalar field of SoftwareStack except name, description and
// nccl_version (text); attention_by_arch is AttentionFields per architecture.
const std::vector<StackField>& StackFields();
// Every field of AttentionKernel except name.
const std::vector<AttentionField>& AttentionFields();

// Every field out of range, and the attention kernels' joint rules, keyed
// as in a stack file ("attention.hopper.forward_efficiency").
std::vector<Issue> ValidateSoftwareStack(const SoftwareStack& stack, const std::string& file);

}  // namespace parasim
