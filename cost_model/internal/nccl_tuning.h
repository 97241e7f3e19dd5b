// NCCL's own tuning-model constants (NVIDIA/nccl v2.30.7-1, src/graph/tuning.cc,
// src/graph/topo.h, src/graph/search.cc, src/tuning/cost_model.cc), as read in
// the project's hardware-and-collectives notes §3. Latencies in µs, bandwidths
// in GB/s, exactly as NCCL writes them; collective_cost.cc converts to SI.
// Index order follows NCCL: protocols LL, LL128, Simple.
#pragma once

namespace parasim::nccl {

enum Arch { kVolta = 0, kAmpere = 1, kHopper = 2, kBlackwell = 3 };

inline Arch ArchOf(int compute_capability) {
  if (compute_capability >= 100) return kBlackwell;
  if (compute_capability >= 90) return kHopper;
  if (compute_capability >= 80) return kAmpere;
  return kVolta;
}

// Base latency per algorithm (µs) — tuning.cc baseLat.
inline constexpr double kRingBaseUs[3] = {6.6, 14.0, 8.4};
inline constexpr double kTreeBaseUs[3] = {6.8, 14.0, 8.4};
inline constexpr double kPatBaseUs = 8.0;   // NVLS, NVLSTree, CollNet: 0

// Hardware latency per hop (µs) by link class — tuning.cc hwLat[NVLINK|PCI|NET].
inline constexpr double kRingNvlinkUs[3] = {0.6, 1.9, 3.4};
inline constexpr double kTreeNvlinkUs[3] = {0.6, 1.25, 4.0};
inline constexpr double kRingPciUs[3] = {1.0, 2.5, 5.7};
inline constexpr double kTreePciUs[3] = {1.0, 1.9, 4.0};
inline constexpr double kRingNetUs[3] = {2.7, 4.0, 14.0};
inline constexpr double kTreeNetUs[3] = {5.0, 8.5, 14.0};
inline constexpr double kCollNetDirectIntraUs = 3.7;   // NVLink and PCI, Simple
inline constexpr double kCollNetDirectNetUs = 31.0;
inline constexpr double kCollNetArityUs = 0.4;         // "arity serialization" per local rank
inline constexpr double kNvlsNvlinkUs = 25.0;          // NVLS and NVLSTree, Simple
inline constexpr double kNvlsNetUs = 18.0;
inline constexpr double kNvlsTreeNetUs = 20.9;
inline constexpr double kPatNetUs = 14.0;
inline constexpr double kPatPerRankUs = 2.8;           // PAT: + 2.8 µs × nRanks
inline constexpr double kPatNetDivisor = 3.5;          // PAT: log2(nNodes) × interLat / 3.5

// Ring + Simple + AllReduce across nodes: latency × 1.4 on cc ≥ 80 (1.9 before)
// for the "plateau effect of ring" (tuning.cc, ncclTopoGetAlgoTime).
inline constexpr double kRingPlateauFactor[4] = {1.9, 1.4, 1.4, 1.4};

// Protocol bandwidth efficiency: LL carries 4 data bytes per 8-byte line
// (0.5); LL128 carries 120 of 128 bytes (0.92 in tuning.cc, = 120/128 rounded).
inline constexpr double kLLEfficiency = 0.5;
inline constexpr double kLL128Efficiency = 0.92;
// Tree LL: busBw / 3.8; tree LL128: × 7/9 on one node, × 120/128 across nodes.
inline constexpr double kTreeLLDivisor = 3.8;
inline constexpr double kTreeLL128OneNode = 7.0 / 9.0;
inline constexpr double kTreeLL128MultiNode = 120.0 / 128.0;
inline constexpr double kPatEfficiency = 0.75;
// CollNetDirect: 0.9 × bwInter per channel; × 0.85 on cc ≥ 90.
inline constexpr double kCollNetNetFactor = 0.9;
inline constexpr double kCollNetHopperFactor = 0.85;

// LL bandwidth cap (GB/s): one node by architecture; across nodes by CPU
// (Intel/other: 39.0 on 2 nodes, 20.4 beyond) — tuning.cc llMaxBws.
inline constexpr double kLLMaxOneNode[4] = {39.0, 87.7, 141.0, 282.0};
inline constexpr double kLLMaxTwoNodes = 39.0;
inline constexpr double kLLMaxManyNodes = 20.4;

// Per-channel caps (GB/s), columns: 1 node, 2 nodes, > 2 nodes.
inline constexpr double kPerChRingLL128[4] = {20.0, 20.0, 36.7, 40.0};
inline constexpr double kPerChTreeLL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
inline constexpr double kPerChTree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
inline constexpr double kPerChNvlsTree[4][3] = {
    {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};

// NVLS efficiency (0 = no NVLink SHARP) — tuning.cc nvlsEfficiency.
inline constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// NVLS channels (transport/nvls.cc): 16 Hopper, 24 one-node / 32 multi-node Blackwell.
inline constexpr int kNvlsChannels[4][2] = {{0, 0}, {0, 0}, {16, 16}, {24, 32}};
// NVLS arity limit for non-AllReduce collectives (NCCL_MAX_NVLS_ARITY).
inline constexpr int kNvlsMaxArity = 32;
// CollNet: at most 8 local ranks.
inline constexpr int kCollNetMaxLocalRanks = 8;

// NCCL's link model vs the spec: per-link NVLink bandwidth NCCL assigns
// (topo.h: sm70 20.0, sm80 20.0, sm90 20.6, sm100 40.1 GB/s) over the spec
// per-link rate per direction (25, 25, 25, 50 GB/s): ~80-82%.
inline constexpr double kNvlinkModelFraction[4] = {20.0 / 25.0, 20.0 / 25.0, 20.6 / 25.0, 40.1 / 50.0};
// PCIe: NCCL x16 Gen5 = 48 GB/s vs 64 GB/s raw (topo.h: width × 240 / 80).
inline constexpr double kPcieModelFraction = 48.0 / 64.0;

// Tree AllReduce bandwidth correction by floor(log2(nBytes / 64)), 64 B ... 512 MB
// (src/tuning/cost_model.cc treeCorrectionFactor, 24 entries per protocol).
inline constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

}  // namespace parasim::nccl
