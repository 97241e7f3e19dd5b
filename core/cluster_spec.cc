#include "core/cluster_spec.h"

namespace parasim {

const char* ToString(NetworkTransport t) {
  switch (t) {
    case NetworkTransport::kInfiniBand: return "infiniband";
    case NetworkTransport::kRoce: return "roce";
    case NetworkTransport::kAwsEfa: return "efa";
  }
  return "infiniband";
}

}  // namespace parasim
