# Writes the bad-input corpus (tests/testdata/invalid: files and manifest.tsv) from the cases below.
# Run from the repository root: python3 scripts/make_invalid_corpus.py .
import os, sys, json
root = sys.argv[1]
D = os.path.join(root, "tests/testdata/invalid")
cases = []  # (name, args, code, expect)
def f(name, content):
    p = os.path.join(D, name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(p, mode) as fh: fh.write(content)
def case(name, args, code, expect): cases.append((name, args, code, expect))

MODEL_OK = "schema_version: 1\nname: m\nhidden_size: 64\nnum_layers: 2\nnum_attention_heads: 4\nnum_kv_heads: 2\nffn_hidden_size: 256\nvocab_size: 1000\n"
PLAN = "plan --global-batch 64 --nodes 1 -o {OUT}"
# ---- model YAML
models = {
 "m_syntax.yaml": ("hidden_size: [64\n", "invalid YAML"),
 "m_neg_layers.yaml": (MODEL_OK.replace("num_layers: 2", "num_layers: -2"), "num_layers"),
 "m_zero_hidden.yaml": (MODEL_OK.replace("hidden_size: 64", "hidden_size: 0"), "hidden_size"),
 "m_huge_layers.yaml": (MODEL_OK.replace("num_layers: 2", "num_layers: 1000000000"), "num_layers"),
 "m_float_heads.yaml": (MODEL_OK.replace("num_attention_heads: 4", "num_attention_heads: 4.5"), "num_attention_heads"),
 "m_kv_not_dividing.yaml": (MODEL_OK.replace("num_kv_heads: 2", "num_kv_heads: 3"), "num_kv_heads"),
 "m_unknown_key.yaml": (MODEL_OK + "hiden_size: 64\n", "hiden_size: unknown key"),
 "m_missing_vocab.yaml": (MODEL_OK.replace("vocab_size: 1000\n", ""), "vocab_size"),
 "m_list_root.yaml": ("- 1\n- 2\n", "mapping"),
 "m_nan.yaml": (MODEL_OK.replace("vocab_size: 1000", "vocab_size: .nan"), "vocab_size"),
 "m_binary.yaml": (bytes(range(256)) * 4, "m_binary.yaml:1:1: expected a mapping"),
 "m_alias_bomb.yaml": ("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n", "unknown key"),
 "m_deep.yaml": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "m_deep"),
 "m_empty.yaml": ("", "m_empty"),
 "m_bad_mlp.yaml": (MODEL_OK + "mlp: relu2\n", "mlp"),
}
for name, (content, expect) in models.items():
    f(name, content); case(name, f"{PLAN} --model {{DIR}}/{name}", 2, expect)
# ---- HF config.json
HF = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}
def hf(**kw):
    d = dict(HF); d.update(kw); return json.dumps(d)
hfs = {
 "hf_syntax.json": ('{"model_type": "llama", "hidden_size": 4096,,}', "byte offset"),
 "hf_overflow.json": (hf().replace('"hidden_size": 4096', '"hidden_size": 1e400'), "number overflow"),
 "hf_string_layers.json": (hf(num_hidden_layers="32"), "num_hidden_layers"),
 "hf_float_hidden.json": (hf(hidden_size=4096.5), "hidden_size"),
 "hf_negative_vocab.json": (hf(vocab_size=-5), "vocab_size"),
 "hf_missing_heads.json": (json.dumps({k: v for k, v in HF.items() if k != "num_attention_heads"}), "num_attention_heads"),
 "hf_unknown_arch.json": (hf(model_type="gpt5"), "gpt5"),
 "hf_array_root.json": ("[1, 2, 3]", "JSON object"),
 "hf_huge_layers.json": (hf(num_hidden_layers=10**12), "num_layers: 1000000000000 is implausibly large"),
 "hf_deep.json": ("[" * 100000 + "]" * 100000, "hf_deep"),
 "hf_empty.json": ("", "hf_empty"),
 "hf_kv_not_dividing.json": (hf(num_key_value_heads=5), "num_kv_heads"),
}
for name, (content, expect) in hfs.items():
    f(name, content); case(name, f"{PLAN} --model {{DIR}}/{name}", 2, expect)
# ---- cluster
CL = "schema_version: 1\nname: c\ngpu: h100-sxm\ngpus_per_node: 8\nnodes: 2\n"
clusters = {
 "c_gpus_per_node_huge.yaml": (CL.replace("gpus_per_node: 8", "gpus_per_node: 1e9"), "gpus_per_node: must be in [1, 1e+06]"),
 "c_nodes_zero.yaml": (CL.replace("nodes: 2", "nodes: 0"), "nodes: must be in [1, 1e+06], got 0"),
 "c_nic_zero.yaml": (CL + "inter_node:\n  nic_bandwidth: \"0 Gb/s\"\n", "inter_node.nic_bandwidth: must be in (0"),
 "c_nic_negative.yaml": (CL + "inter_node:\n  nic_bandwidth: \"-400 Gb/s\"\n", "inter_node.nic_bandwidth"),
 "c_nic_nan.yaml": (CL + "inter_node:\n  nic_bandwidth: \"nan Gb/s\"\n", "inter_node.nic_bandwidth"),
 "c_override_bf16_zero.yaml": (CL + "overrides:\n  bf16_dense: \"0 TFLOP/s\"\n", "overrides.bf16_dense: must be in (0"),
 "c_override_unknown.yaml": (CL + "overrides:\n  bf16: \"900 TFLOP/s\"\n", "overrides.bf16: unknown key"),
 "c_domain_not_dividing.yaml": (CL + "intra_node:\n  nvlink_domain_size: 3\n", "intra_node.nvlink_domain_size"),
 "c_unknown_gpu.yaml": (CL.replace("gpu: h100-sxm", "gpu: h100-sxn"), "h100-sxn"),
 "c_too_many_gpus.yaml": (CL.replace("gpus_per_node: 8", "gpus_per_node: 1000").replace("nodes: 2", "nodes: 5000"), "exceed the limit"),
 "c_oversub_low.yaml": (CL + "inter_node:\n  oversubscription: 0.5\n", "inter_node.oversubscription"),
 "c_bad_fabric.yaml": (CL + "intra_node:\n  fabric: nvswitchh\n", "intra_node.fabric"),
 "c_syntax.yaml": ("name: c\n  gpu: : h100\n", "invalid YAML"),
 "c_empty.yaml": ("", "c_empty"),
 "c_latency_inf.yaml": (CL + "inter_node:\n  nic_latency: \"inf us\"\n", "inter_node.nic_latency"),
 "c_tiers_bad.yaml": (CL + "inter_node:\n  tiers: 9\n", "inter_node.tiers"),
}
for name, (content, expect) in clusters.items():
    f(name, content); case(name, f"plan --global-batch 64 --cluster {{DIR}}/{name} -o {{OUT}}", 2, expect)
# ---- GPU profile (through whatif --vary gpu=FILE)
GPU = open(os.path.join(root, "hw_profiles/gpus/h100-sxm.yaml")).read()
gpus = {
 "g_arch_unknown.yaml": (GPU.replace("architecture: hopper", "architecture: hoppr"), "architecture: 'hoppr' is not one of"),
 "g_bf16_zero.yaml": (GPU.replace('bf16: "989 TFLOP/s"', 'bf16: "0 TFLOP/s"'), "peak.bf16: must be in (0"),
 "g_bare_bandwidth.yaml": (GPU.replace('bandwidth: "3.35 TB/s"', 'bandwidth: 3.35'), "memory.bandwidth"),
 "g_tdp_zero.yaml": (GPU.replace('tdp: "700 W"', 'tdp: "0 W"'), "power.tdp: must be in (0"),
 "g_idle_above_tdp.yaml": (GPU.replace('idle: "121 W"', 'idle: "900 W"'), "power.idle: idle power exceeds tdp"),
 "g_eff_above_one.yaml": (GPU.replace("gemm_max: 0.746", "gemm_max: 1.5"), "efficiency.gemm_max: must be in [0.01, 1]"),
 "g_sm_huge.yaml": (GPU.replace("sm_count: 132", "sm_count: 99999999999999999999"), "sm_count"),
 "g_missing_peak.yaml": (GPU.replace('  bf16: "989 TFLOP/s"\n', ''), "peak.bf16: required key is missing"),
 "g_unknown_key.yaml": (GPU.replace("sm_count: 132", "sm_count: 132\nsm_cnt: 132"), "sm_cnt: unknown key"),
 "g_k0_alone.yaml": (GPU.replace("  gemm_half_outputs: 415709\n", ""), "efficiency.gemm_k0"),
}
for name, (content, expect) in gpus.items():
    f(name, content); case(name, f"whatif --global-batch 64 --nodes 1 --vary gpu={{DIR}}/{name} -o {{OUT}}", 2, expect)
# ---- stack
stacks = {
 "s_negative_gap.yaml": ("schema_version: 1\nbase: pytorch-fsdp\nkernel_gap_s: -1\n", "kernel_gap_s: must be >= 0"),
 "s_nan_reserve.yaml": ("schema_version: 1\nbase: pytorch-fsdp\nreserve_bytes: .nan\n", "reserve_bytes"),
 "s_unknown_base.yaml": ("schema_version: 1\nbase: pytorch-fdsp\n", "base"),
 "s_unknown_arch.yaml": ("schema_version: 1\nbase: pytorch-fsdp\nattention:\n  pascal:\n    forward_efficiency: 0.5\n", "attention.pascal"),
 "s_count_float.yaml": ("schema_version: 1\nbase: pytorch-fsdp\nnccl_channels: 2.5\n", "nccl_channels"),
 "s_eff_above_one.yaml": ("schema_version: 1\nbase: pytorch-fsdp\nattention:\n  hopper:\n    forward_efficiency: 1.5\n", "attention.hopper.forward_efficiency"),
 "s_syntax.yaml": ("base: [pytorch\n", "invalid YAML"),
 "s_fragmentation_low.yaml": ("schema_version: 1\nbase: pytorch-fsdp\nfragmentation: 0.5\n", "fragmentation: must be >= 1"),
}
for name, (content, expect) in stacks.items():
    f(name, content); case(name, f"plan --global-batch 64 --nodes 1 --stack {{DIR}}/{name} -o {{OUT}}", 2, expect)
# ---- job
jobs = {
 "j_batch_huge.yaml": ("global_batch: 99999999999999999999\n", "global_batch: must be in [1, 1e+08]"),
 "j_batch_zero.yaml": ("global_batch: 0\n", "global_batch: must be in [1, 1e+08], got 0"),
 "j_seq_nan.yaml": ("global_batch: 64\nseq_len: .nan\n", "seq_len"),
 "j_precision.yaml": ("global_batch: 64\nprecision: fp4\n", "precision"),
 "j_unknown_key.yaml": ("global_batch: 64\nglobal_bach: 64\n", "global_bach: unknown key"),
 "j_batch_string.yaml": ("global_batch: lots\n", "global_batch: 'lots' is not an integer"),
 "j_no_batch.yaml": ("seq_len: 2048\n", "has no global_batch"),
 "j_syntax.yaml": ("global_batch: {64\n", "invalid YAML"),
}
for name, (content, expect) in jobs.items():
    f(name, content); case(name, f"plan --nodes 1 --job {{DIR}}/{name} -o {{OUT}}", 2, expect)
# ---- parallel-config strings (simulate --config)
SIM = "simulate --global-batch 64 --nodes 1 -o {OUT} --config"
for i, (cfg, expect) in enumerate([
    ("dp=3,tp=2", "dp"), ("dp=8,tp=0", "tp"), ("dp=8,foo=1", "foo"), ("dp=8,pp=2,vpp=3", "vpp"),
    ("dp=8,micro_batch=-1", "micro_batch"), ("dp=99999999999999999999", "dp"), ("dp=8,sharding=zero9", "sharding"),
    ("dp=8,,tp", "tp")]):
    case(f"config_{i}", f"{SIM} '{cfg}'", 2, expect)
# ---- CLI flags
for i, (args, expect) in enumerate([
    ("plan --global-batch 1e10 -o {OUT}", "--global-batch: must be in [1, 1e+08], got 1e+10"),
    ("plan --global-batch 99999999999999999999 -o {OUT}", "--global-batch: must be in [1, 1e+08], got 1e+20"),
    ("plan --global-batch 64 --nodes 0 -o {OUT}", "--nodes: must be in [1, 1e+06], got 0"),
    ("plan --global-batch 64 --nodes -3 -o {OUT}", "--nodes"),
    ("plan --global-batch 64 --gpus 12 -o {OUT}", "--gpus"),
    ("plan --global-batch 64 --seq-len nan -o {OUT}", "--seq-len"),
    ("plan --global-batch 64 --objective cost --gpu-hour-price nan -o {OUT}", "--gpu-hour-price"),
    ("plan --global-batch 64 --objective time-to-train --tokens inf -o {OUT}", "--tokens"),
    ("plan --global-batch 64 --top 0 -o {OUT}", "--top"),
    ("plan --global-batch 64 --model llama2-7c -o {OUT}", "did you mean 'llama2-7b'"),
    ("plan --global-batch 64 --cluster dgx-h1000 -o {OUT}", "did you mean 'dgx-h100'"),
    ("plan --global-batch 64 --stack pytorch-fsdp9 -o {OUT}", "stack"),
    ("plan --job {DIR}/does_not_exist.yaml -o {OUT}", "no such file"),
    ("plan --global-batch 64 --model {DIR}/does_not_exist.yaml -o {OUT}", "--model"),
    ]):
    case(f"flag_{i}", args, 2, expect)
# ---- --vary values
for i, (v, expect) in enumerate([
    ("gpu.tdp=0W", "--vary gpu.tdp: must be in (0, 100000] W, got 0 W"),
    ("gpu.tdp=nanW", "gpu.tdp"),
    ("nodes=0", "--vary nodes: must be in [1, 1e+06], got 0"),
    ("inter_node.nic_bandwith=400Gb/s", "did you mean 'inter_node.nic_bandwidth'"),
    ("inter_node.nic_bandwidth=400", "has no unit"),
    ("global_batch=1e10", "--vary global_batch: must be in [1, 1e+08]"),
    ("inter_node.oversubscription=0.5", "inter_node.oversubscription"),
    ("stack.kernel_gap_s=-1", "stack.kernel_gap_s: must be >= 0"),
    ("nodes=", "no values given"),
    ("gpu.memory.bandwidth=0TB/s", "gpu.memory.bandwidth: must be in (0"),
    ]):
    case(f"vary_{i}", f"whatif --global-batch 64 --nodes 1 --vary '{v}' -o {{OUT}}", 2, expect)
# ---- nccl-tests logs
HEAD = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
ROW = "     1048576        262144     float     sum      -1    44.38   23.63   41.35      0    43.46   24.13   42.23      0\n"
nccl = {
 "n_empty.out": ("", "n_empty"),
 "n_binary.out": (bytes(range(256)) * 8, "n_binary"),
 "n_no_table.out": ("# nccl-tests\n# nothing here\n", "n_no_table"),
 "n_nan_time.out": (HEAD + ROW.replace("44.38", "  nan"), "n_nan_time"),
 "n_negative_size.out": (HEAD + ROW.replace("     1048576", "    -1048576"), "n_negative_size"),
 "n_huge_size.out": (HEAD + ROW.replace("     1048576", "99999999999999999999999"), "line 2: size and count must be non-negative integers"),
 "n_short_row.out": (HEAD + "     1048576        262144     float\n", "n_short_row"),
}
for name, (content, expect) in nccl.items():
    f(name, content); case(name, f"calibrate import-nccl-tests {{DIR}}/{name} -o {{OUT}}", 2, expect)
# ---- Kineto traces
TE = lambda evs: json.dumps({"traceEvents": evs})
K = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0}
traces = {
 "t_syntax.json": ('{"traceEvents": [', "t_syntax"),
 "t_overflow.json": ('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e400, "dur": 2}]}', "t_overflow"),
 "t_nan_dur.json": (TE([dict(K, dur="nan")]), "t_nan_dur"),
 "t_negative_dur.json": (TE([dict(K, dur=-5)]), "t_negative_dur"),
 "t_not_object.json": ("[1,2,3]", "t_not_object"),
 "t_empty.json": ("", "t_empty"),
 "t_deep.json": ('{"traceEvents": ' + "[" * 100000 + "]" * 100000 + "}", "t_deep"),
 "t_gzip.json": (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "corrupt gzip"),
}
for name, (content, expect) in traces.items():
    f(name, content); case(name, f"calibrate import-trace --trace {{DIR}}/{name} -o {{OUT}}", 2, expect)
# ---- measurement JSON (calibrate fit --measurements DIR)
meas = {
 "syntax": ("hbm_bandwidth.json", '{"benchmark": "hbm_bandwidth", "results": [', "hbm_bandwidth.json"),
 "overflow": ("hbm_bandwidth.json", '{"benchmark": "hbm_bandwidth", "results": [{"op": "triad", "array_bytes": 1e400}]}', "hbm_bandwidth.json"),
 "wrong_type": ("gemm_sweep.json", '{"benchmark": "gemm_sweep", "results": "none"}', "gemm_sweep.json"),
 "negative": ("launch_overhead.json", '{"benchmark": "launch_overhead", "results": [{"kernels": -1, "seconds": -1}]}', "launch_overhead.json"),
 "empty": ("power_states.json", "", "power_states.json"),
 "binary": ("gemm_sweep.json", bytes(range(256)), "gemm_sweep.json"),
}
for name, (fn, content, expect) in meas.items():
    f(f"measurements_{name}/{fn}", content); case(f"measurements_{name}", f"calibrate fit --measurements {{DIR}}/measurements_{name} -o {{OUT}}", 2, expect)

with open(os.path.join(D, "manifest.tsv"), "w") as m:
    m.write("# Bad-input corpus (tests/cli/invalid_corpus_test.cc): case<TAB>exit code<TAB>stderr substring<TAB>parasim arguments.\n")
    m.write("# {DIR} = this folder, {OUT} = an output path that must not appear. Device files, directories,\n# huge files and symlink loops are made by the test itself.\n")
    for name, args, code, expect in cases:
        m.write(f"{name}\t{code}\t{expect}\t{args}\n")
print(len(cases), "cases")
