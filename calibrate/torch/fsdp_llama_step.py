#!/usr/bin/env python3
"""One eager-PyTorch FSDP training step of a Llama-style model, timed and profiled.

The reference measurement for calibrating parasim's software stack on eager
PyTorch: a plain-torch Llama (RMSNorm, SwiGLU, RoPE, grouped-query attention
through F.scaled_dot_product_attention, untied or tied embeddings), wrapped
per decoder layer in FSDP with bf16 mixed precision (fp32 master weights and
fp32 gradient reduction), AdamW, random tokens. No torch.compile, no fused
kernels beyond what eager PyTorch picks itself.

It writes into OUT_DIR:
  summary.json        model, config, versions, timed step times (no profiler),
                      peak memory, tokens/s and MFU (6N + attention FLOPs)
  trace.json.gz       Kineto trace of --profile-steps steps after warm-up,
                      each step a ProfilerStep#N annotation (what
                      `parasim calibrate import-trace` and `fit-stack` read)

Launch (one process per GPU, torch.distributed with the nccl backend; world
size 1 works and still runs FSDP's collectives):
  MASTER_ADDR=localhost MASTER_PORT=29500 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 \
    python3 calibrate/torch/fsdp_llama_step.py --out OUT_DIR
or torchrun --nproc-per-node N calibrate/torch/fsdp_llama_step.py --out OUT_DIR.

The default model is the shape of Llama 3.2 1B (Hugging Face
meta-llama/Llama-3.2-1B config.json: hidden 2048, 16 layers, 32 heads,
8 KV heads, intermediate 8192, vocabulary 128256, tied embeddings,
rope_theta 500000); calibrate/torch/llama3.2-1b.yaml is the same model as a
parasim model file.
"""
import argparse
import gzip
import json
import os
import shutil
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        # Normalise in fp32 as Hugging Face's LlamaRMSNorm does.
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


def rope_tables(seq, head_dim, theta, device):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    t = torch.arange(seq, device=device).float()
    freqs = torch.outer(t, inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):
    # x: [b, heads, s, d]; cos/sin: [s, d] in fp32, cast to x's dtype.
    return x * cos.to(x.dtype) + rotate_half(x) * sin.to(x.dtype)


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.h, self.kv, self.d = a.heads, a.kv_heads, a.hidden // a.heads
        self.q = nn.Linear(a.hidden, self.h * self.d, bias=False)
        self.k = nn.Linear(a.hidden, self.kv * self.d, bias=False)
        self.v = nn.Linear(a.hidden, self.kv * self.d, bias=False)
        self.o = nn.Linear(self.h * self.d, a.hidden, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.h, self.d).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv, self.d).transpose(1, 2)
        v = self.v(x).view(b, s, self.kv, self.d).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # GQA through SDPA's enable_gqa (no repeat_interleave copy).
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv != self.h)
        return self.o(y.transpose(1, 2).reshape(b, s, self.h * self.d))


class Mlp(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.gate = nn.Linear(a.hidden, a.ffn, bias=False)
        self.up = nn.Linear(a.hidden, a.ffn, bias=False)
        self.down = nn.Linear(a.ffn, a.hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(a.hidden), Attention(a)
        self.mlp_norm, self.mlp = RMSNorm(a.hidden), Mlp(a)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)
        if a.tied:
            self.head.weight = self.embed.weight
        self.theta, self.head_dim = a.rope_theta, a.hidden // a.heads

    def forward(self, tokens):
        cos, sin = rope_tables(tokens.shape[1], self.head_dim, self.theta, tokens.device)
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.head(self.norm(x))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--ffn", type=int, default=8192)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--tied", type=int, default=1, help="1: tied input/output embeddings")
    p.add_argument("--rope-theta", type=float, default=500000.0)
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--mbs", type=int, default=2, help="micro-batch size per GPU")
    p.add_argument("--fsdp", choices=["fsdp2", "fsdp1"], default="fsdp2",
                   help="fsdp2: torch.distributed.fsdp.fully_shard; fsdp1: FullyShardedDataParallel")
    p.add_argument("--sharding", choices=["full", "grad_op"], default="full",
                   help="full: FULL_SHARD / reshard after forward (ZeRO-3); grad_op: SHARD_GRAD_OP (ZeRO-2)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    p.add_argument("--timed", type=int, default=10, help="steps timed without the profiler")
    p.add_argument("--profile-steps", type=int, default=5, help="profiled steps (after 1 wait + 2 warm-up)")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--peak-tflops", type=float, default=989.0,
                   help="dense bf16 peak for MFU (H100 SXM datasheet: 989 TFLOP/s)")
    return p.parse_args()


def wrap_fsdp(model, a):
    if a.fsdp == "fsdp2":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        reshard = a.sharding == "full"
        for layer in model.layers:
            fully_shard(layer, mp_policy=mp, reshard_after_forward=reshard)
        fully_shard(model, mp_policy=mp, reshard_after_forward=reshard)
        return model
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
    strategy = ShardingStrategy.FULL_SHARD if a.sharding == "full" else ShardingStrategy.SHARD_GRAD_OP
    return FSDP(model, sharding_strategy=strategy, mixed_precision=mp,
                auto_wrap_policy=ModuleWrapPolicy({Block}), device_id=torch.cuda.current_device(),
                use_orig_params=True)


def count_params(a):
    d = a.hidden // a.heads
    attn = a.hidden * (a.heads * d) * 2 + a.hidden * (a.kv_heads * d) * 2
    mlp = 3 * a.hidden * a.ffn
    layer = attn + mlp + 2 * a.hidden
    emb = a.vocab * a.hidden * (1 if a.tied else 2)
    return a.layers * layer + emb + a.hidden


def step_flops(a, tokens):
    """Model FLOPs of one step: 6 x (non-embedding params + LM head) x tokens plus causal attention."""
    n = count_params(a) - a.vocab * a.hidden * (1 if a.tied else 2) + a.vocab * a.hidden
    attn = 6 * 2 * a.layers * a.hidden * a.seq * tokens / 2  # QK^T and PV, causal half, fwd + 2x bwd
    return 6 * n * tokens + attn


def main():
    a = parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    torch.manual_seed(0)
    model = Llama(a).cuda()
    model = wrap_fsdp(model, a)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1)
    gen = torch.Generator(device="cuda").manual_seed(rank)
    tokens = torch.randint(0, a.vocab, (a.mbs, a.seq + 1), device="cuda", generator=gen)
    inputs, labels = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    def step():
        logits = model(inputs)
        loss = F.cross_entropy(logits.float().view(-1, a.vocab), labels.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(a.timed):
        t0 = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    peak = torch.cuda.max_memory_allocated()

    os.makedirs(a.out, exist_ok=True)
    raw = os.path.join(a.out, f"trace_rank{rank}.json")
    sched = torch.profiler.schedule(wait=1, warmup=2, active=a.profile_steps, repeat=1)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, schedule=sched,
                                on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(3 + a.profile_steps):
            step()
            prof.step()
    torch.cuda.synchronize()
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)

    tok = a.mbs * a.seq * world
    med = sorted(times)[len(times) // 2]
    flops = step_flops(a, a.mbs * a.seq)
    summary = {
        "kind": "torch_fsdp_step",
        "model": {k: getattr(a, k) for k in ("hidden", "layers", "heads", "kv_heads", "ffn", "vocab", "tied", "rope_theta")},
        "params": count_params(a),
        "seq": a.seq, "micro_batch": a.mbs, "world_size": world,
        "fsdp": a.fsdp, "sharding": a.sharding,
        "mixed_precision": {"param": "bf16", "reduce": "fp32"},
        "optimizer": "torch.optim.AdamW (default implementation: foreach on CUDA)",
        "versions": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                     "cudnn": torch.backends.cudnn.version(),
                     "device": torch.cuda.get_device_name()},
        "step_times_s": times,
        "step_time_median_s": med,
        "tokens_per_s_per_gpu": tok / med / world,
        "model_flops_per_step_per_gpu": flops,
        "mfu": flops / med / (a.peak_tflops * 1e12),
        "peak_memory_bytes": peak,
        "final_loss": float(loss.detach()),
        "profiled_steps": a.profile_steps,
    }
    if rank == 0:
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        print(json.dumps({k: summary[k] for k in ("params", "step_time_median_s", "tokens_per_s_per_gpu", "mfu",
                                                  "peak_memory_bytes", "versions")}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
