#!/usr/bin/python3
"""PyTorch + gloo peers of hostir's overlap benchmarks.

Each --layer computes what one hostir program computes, the way a user would
write it without hostir, overlapping gloo's asynchronous collectives with
the computation in S chunks:

  row_parallel_linear (default; examples/row_parallel_linear.hir):
    y[M, N] = allreduce_sum(x_r @ w_r^T) on W ranks, where rank r holds
    columns [r*K/W, (r+1)*K/W) of the global x[M, K] and w[N, K]. The rows
    of y are split into S chunks, and per chunk the partial product is
    written into the chunk of y and an asynchronous gloo allreduce of that
    chunk is started; all handles are waited at the end.
  swiglu_mlp (examples/layers/swiglu_mlp.hir; --m T, --k H, --n F):
    y[T, H] = allreduce_sum((silu(x @ wg_r^T) * (x @ wu_r^T)) @ wd_r^T), the
    gate and up weights split by rows over F, the down weight by columns;
    per row chunk as above.
  moe_expert_parallel (examples/layers/moe_expert_parallel.hir; --m T,
    --k E, --n F, --experts X, --capacity C): every rank routes its T / W
    tokens to the top 2 of X experts (X / W per rank), C slots per expert
    and token chunk; per chunk it gathers the buckets and starts an
    asynchronous all_to_all, then, chunk by chunk, waits for the dispatch,
    runs the local SwiGLU experts (batched matmuls, one per sender) and
    starts the all_to_all that returns the results; finally it waits for
    each return and adds the weighted results into the tokens' rows.

Rank 0 prints `timing: median_ms=X min_ms=Y max_ms=Z runs=R`, the line
`hostir run --repeat` prints, so one regex parses both.

Run (the Debian python3-torch package is importable by /usr/bin/python3):
    mpirun -np 2 /usr/bin/python3 scripts/peer_torch.py --m 1024 --k 2048 --n 1024 --chunks 4 --check
    mpirun -np 2 /usr/bin/python3 scripts/peer_torch.py --layer moe_expert_parallel --m 512 --k 128 \
        --n 256 --experts 8 --capacity 64 --chunks 4 --check
    /usr/bin/python3 scripts/peer_torch.py --m 256 --k 512 --n 128   # one rank, no mpirun
"""

import argparse
import os
import statistics
import sys
import time

try:
    import torch
    import torch.distributed as dist
except ImportError:
    sys.stderr.write(
        f"peer_torch.py: cannot import torch with {sys.executable}; "
        "the Debian python3-torch package is for /usr/bin/python3\n")
    sys.exit(1)

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
# Per-element tolerance of --check: |y - ref| <= ATOL_PER_SQRT_K * sqrt(K) + RTOL * |ref|.
TOLERANCES = {"f32": (1e-5, 1e-5), "bf16": (2e-2, 1e-2)}


def mpi_rank_and_world():
    """Rank, world size and ranks on this node from Open MPI's environment, or one rank."""
    env = os.environ
    if "OMPI_COMM_WORLD_RANK" in env and "OMPI_COMM_WORLD_SIZE" in env:
        rank = int(env["OMPI_COMM_WORLD_RANK"])
        world = int(env["OMPI_COMM_WORLD_SIZE"])
        local = int(env.get("OMPI_COMM_WORLD_LOCAL_SIZE", world))
        return rank, world, local
    return 0, 1, 1


def parse_arguments():
    parser = argparse.ArgumentParser(
        description="PyTorch + gloo peers of hostir's layers, overlapped in S chunks.")
    parser.add_argument("--layer", choices=sorted(LAYERS), default="row_parallel_linear",
                        help="what to compute (default row_parallel_linear)")
    parser.add_argument("--m", type=int, default=256, help="rows of x and y; T for the layers (default 256)")
    parser.add_argument("--k", type=int, default=512,
                        help="columns of x and w, sharded over ranks; H or E for the layers (default 512)")
    parser.add_argument("--n", type=int, default=128, help="rows of w, columns of y; F for the layers (default 128)")
    parser.add_argument("--experts", type=int, default=8, help="moe_expert_parallel: experts X (default 8)")
    parser.add_argument("--capacity", type=int, default=64,
                        help="moe_expert_parallel: slots C per expert and chunk, over all ranks (default 64)")
    parser.add_argument("--chunks", type=int, default=4, help="S: row chunks of y (default 4)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs (default 10)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch.set_num_threads (default: CPU count / ranks on this node)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the global x and w (default 0)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="f32", help="element type (default f32)")
    parser.add_argument("--port", type=int, default=29511,
                        help="TCP port of the rendezvous on 127.0.0.1 (default 29511; "
                             "MASTER_ADDR/MASTER_PORT override)")
    parser.add_argument("--check", action="store_true",
                        help="rank 0 compares y with x @ w^T computed in float64")
    return parser.parse_args()


def validation_error(args, world):
    """The reason the arguments cannot run on `world` ranks, or None."""
    for name in ("m", "k", "n", "chunks", "repeat"):
        if getattr(args, name) < 1:
            return f"--{name} must be at least 1, got {getattr(args, name)}"
    if args.warmup < 0:
        return f"--warmup must not be negative, got {args.warmup}"
    if args.threads is not None and args.threads < 1:
        return f"--threads must be at least 1, got {args.threads}"
    if args.layer == "row_parallel_linear" and args.k % world:
        return f"K={args.k} does not divide evenly over {world} ranks"
    if args.layer == "swiglu_mlp" and args.n % world:
        return f"F={args.n} does not divide evenly over {world} ranks"
    if args.layer == "moe_expert_parallel":
        for name, value in (("T", args.m), ("X", args.experts), ("C", args.capacity)):
            if value % world:
                return f"{name}={value} does not divide evenly over {world} ranks"
        if (args.m // world) % args.chunks:
            return f"T / ranks = {args.m // world} does not divide evenly into {args.chunks} chunks"
    elif args.m % args.chunks:
        return f"M={args.m} does not divide evenly into {args.chunks} chunks"
    return None


def rendezvous_address(port):
    addr = os.environ.get("MASTER_ADDR")
    env_port = os.environ.get("MASTER_PORT")
    if addr or env_port:
        return f"tcp://{addr or '127.0.0.1'}:{env_port or port}"
    return f"tcp://127.0.0.1:{port}"


def global_inputs(args, dtype):
    """The global x[M, K] and w[N, K], identical on every rank for a given seed."""
    generator = torch.Generator().manual_seed(args.seed)
    x = torch.randn(args.m, args.k, generator=generator, dtype=torch.float32)
    w = torch.randn(args.n, args.k, generator=generator, dtype=torch.float32)
    return x.to(dtype), w.to(dtype)


def column_shard(tensor, rank, world):
    """Columns [rank*K/W, (rank+1)*K/W) of `tensor`, as a contiguous tensor this rank owns."""
    width = tensor.shape[1] // world
    return tensor[:, rank * width:(rank + 1) * width].contiguous()


def row_shard(tensor, rank, world):
    """Rows [rank*N/W, (rank+1)*N/W) of `tensor` (axis 0), as a contiguous tensor this rank owns."""
    height = tensor.shape[0] // world
    return tensor[rank * height:(rank + 1) * height].contiguous()


def row_parallel_linear(x_r, w_r, y, chunks):
    """Per row chunk: partial product into y's chunk, then an async allreduce; wait all."""
    rows = y.shape[0] // chunks
    w_r_t = w_r.t()
    handles = []
    for i in range(chunks):
        y_i = y[i * rows:(i + 1) * rows]
        torch.matmul(x_r[i * rows:(i + 1) * rows], w_r_t, out=y_i)
        handles.append(dist.all_reduce(y_i, op=dist.ReduceOp.SUM, async_op=True))
    for handle in handles:
        handle.wait()


class RowParallelLinear:
    """y = allreduce(x_r @ w_r^T), x and w split by columns."""

    formula = "x @ w^T"

    def __init__(self, args, rank, world, dtype):
        x, w = global_inputs(args, dtype)
        self.x_r, self.w_r = column_shard(x, rank, world), column_shard(w, rank, world)
        self.inputs = (x, w) if args.check else None
        self.y = torch.empty(args.m, args.n, dtype=dtype)
        self.chunks, self.contraction = args.chunks, args.k

    def run(self):
        row_parallel_linear(self.x_r, self.w_r, self.y, self.chunks)

    def output(self):
        return self.y

    def reference(self):
        x, w = self.inputs
        return x.double() @ w.double().t()


def swiglu(x, wg_t, wu_t, wd_t, out):
    """out = (silu(x @ wg_t) * (x @ wu_t)) @ wd_t, the hidden activation computed in place."""
    gate = torch.matmul(x, wg_t)
    torch.nn.functional.silu(gate, inplace=True)
    gate.mul_(torch.matmul(x, wu_t))
    torch.matmul(gate, wd_t, out=out)


class SwigluMlp:
    """y = allreduce((silu(x @ wg_r^T) * (x @ wu_r^T)) @ wd_r^T): wg, wu split by rows, wd by columns."""

    formula = "(silu(x @ wg^T) * (x @ wu^T)) @ wd^T"

    def __init__(self, args, rank, world, dtype):
        t, h, f = args.m, args.k, args.n
        generator = torch.Generator().manual_seed(args.seed)
        x = torch.randn(t, h, generator=generator).to(dtype)
        wg, wu = (torch.randn(f, h, generator=generator).div_(h ** 0.5).to(dtype) for _ in range(2))
        wd = torch.randn(h, f, generator=generator).div_(f ** 0.5).to(dtype)
        self.x = x
        # Transposed once, as a module would keep them.
        self.wg_t, self.wu_t = row_shard(wg, rank, world).t(), row_shard(wu, rank, world).t()
        self.wd_t = column_shard(wd, rank, world).t()
        self.inputs = (x, wg, wu, wd) if args.check else None
        self.y = torch.empty(t, h, dtype=dtype)
        self.chunks, self.contraction = args.chunks, max(h, f)

    def run(self):
        rows = self.y.shape[0] // self.chunks
        handles = []
        for i in range(self.chunks):
            y_i = self.y[i * rows:(i + 1) * rows]
            swiglu(self.x[i * rows:(i + 1) * rows], self.wg_t, self.wu_t, self.wd_t, y_i)
            handles.append(dist.all_reduce(y_i, op=dist.ReduceOp.SUM, async_op=True))
        for handle in handles:
            handle.wait()

    def output(self):
        return self.y

    def reference(self):
        x, wg, wu, wd = (t.double() for t in self.inputs)
        return (torch.nn.functional.silu(x @ wg.t()) * (x @ wu.t())) @ wd.t()


def moe_routing(generator, world, chunks, tokens, experts, slots, top_k=2):
    """Every token's top_k experts and weights, bucketed: idx [W, S, X, slots] (-1: empty), weights alike."""
    idx = torch.full((world, chunks, experts, slots), -1, dtype=torch.int64)
    weights = torch.zeros(world, chunks, experts, slots)
    for r in range(world):
        for i in range(chunks):
            filled = [0] * experts
            for row in range(tokens):
                chosen = torch.randperm(experts, generator=generator)[:top_k].tolist()
                p = torch.softmax(torch.randn(top_k, generator=generator), 0).tolist()
                for e, weight in zip(chosen, p):
                    if filled[e] < slots:  # a full bucket drops the token
                        idx[r, i, e, filled[e]] = row
                        weights[r, i, e, filled[e]] = weight
                        filled[e] += 1
    return idx, weights


class MoeExpertParallel:
    """Expert-parallel MoE with SwiGLU experts; dispatch and combine overlap the experts in chunks."""

    formula = "sum over each token's experts of p * SwiGLU_e(x)"

    def __init__(self, args, rank, world, dtype):
        t, e, f, x_count = args.m, args.k, args.n, args.experts
        self.world, self.chunks, self.local_experts = world, args.chunks, x_count // world
        self.tokens = t // world // args.chunks  # per rank and chunk
        self.slots = args.capacity // world
        generator = torch.Generator().manual_seed(args.seed)
        x = torch.randn(t, e, generator=generator).to(dtype)
        wg, wu = (torch.randn(x_count, e, f, generator=generator).div_(e ** 0.5).to(dtype) for _ in range(2))
        wd = torch.randn(x_count, f, e, generator=generator).div_(f ** 0.5).to(dtype)
        idx, weights = moe_routing(generator, world, args.chunks, self.tokens, x_count, self.slots)
        self.wg_r, self.wu_r, self.wd_r = (row_shard(w, rank, world) for w in (wg, wu, wd))
        # A zero row after every chunk's tokens: an empty slot (-1) gathers it, and scatters into it.
        self.x_pad = torch.zeros(args.chunks, self.tokens + 1, e, dtype=dtype)
        self.x_pad[:, :self.tokens] = row_shard(x, rank, world).view(args.chunks, self.tokens, e)
        self.idx_r = torch.where(idx[rank] < 0, self.tokens, idx[rank])  # [S, X, slots]
        self.weights_r = weights[rank].to(dtype).unsqueeze(-1)  # [S, X, slots, 1]
        self.y_pad = torch.zeros_like(self.x_pad)
        self.inputs = (x, wg, wu, wd, idx, weights) if args.check else None
        self.contraction = max(e, f)

    def experts(self, recv):
        """Every local expert on what each rank sent it: recv part j is [X / W, slots, E] from rank j."""
        done = torch.empty_like(recv)
        xl = self.local_experts
        for j in range(self.world):
            sent = recv[j * xl:(j + 1) * xl]
            gate = torch.bmm(sent, self.wg_r)
            torch.nn.functional.silu(gate, inplace=True)
            gate.mul_(torch.bmm(sent, self.wu_r))
            torch.bmm(gate, self.wd_r, out=done[j * xl:(j + 1) * xl])
        return done

    def run(self):
        dispatched = []
        for i in range(self.chunks):
            send = self.x_pad[i][self.idx_r[i]]  # [X, slots, E], part j for rank j's experts
            recv = torch.empty_like(send)
            dispatched.append((recv, dist.all_to_all_single(recv, send, async_op=True)))
        combined = []
        for recv, handle in dispatched:
            handle.wait()
            done = self.experts(recv)
            back = torch.empty_like(done)
            combined.append((back, dist.all_to_all_single(back, done, async_op=True)))
        self.y_pad.zero_()
        for i, (back, handle) in enumerate(combined):
            handle.wait()
            back.mul_(self.weights_r[i])
            self.y_pad[i].index_add_(0, self.idx_r[i].reshape(-1), back.view(-1, back.shape[-1]))

    def output(self):
        """The global y, gathered on every rank."""
        mine = self.y_pad[:, :self.tokens].reshape(-1, self.y_pad.shape[-1]).contiguous()
        parts = [torch.empty_like(mine) for _ in range(self.world)]
        dist.all_gather(parts, mine)
        return torch.cat(parts)

    def reference(self):
        x, wg, wu, wd, idx, weights = self.inputs
        x, wg, wu, wd = (t.double() for t in (x, wg, wu, wd))
        y = torch.zeros_like(x)
        local = x.shape[0] // self.world
        for r in range(self.world):
            for i in range(self.chunks):
                for e in range(wg.shape[0]):
                    used = idx[r, i, e] >= 0
                    rows = r * local + i * self.tokens + idx[r, i, e][used]
                    z = x[rows]
                    out = (torch.nn.functional.silu(z @ wg[e]) * (z @ wu[e])) @ wd[e]
                    y.index_add_(0, rows, out * weights[r, i, e][used].double().unsqueeze(-1))
        return y


LAYERS = {"row_parallel_linear": RowParallelLinear, "swiglu_mlp": SwigluMlp,
          "moe_expert_parallel": MoeExpertParallel}


def backend_reduces(dtype):
    """Whether this torch's gloo can allreduce `dtype` (gloo in torch 1.13 cannot do bfloat16)."""
    try:
        dist.all_reduce(torch.zeros(1, dtype=dtype))
        return True
    except RuntimeError:
        return False


def timed_run_ms(layer):
    dist.barrier()
    start = time.perf_counter()
    layer.run()
    dist.barrier()
    return (time.perf_counter() - start) * 1e3


def timing_line(millis):
    return (f"timing: median_ms={statistics.median(millis):.3f} min_ms={min(millis):.3f} "
            f"max_ms={max(millis):.3f} runs={len(millis)}")


def check_result(y, reference, layer, args):
    """Compares y with the layer's formula in float64; returns (ok, message)."""
    atol_per_sqrt_k, rtol = TOLERANCES[args.dtype]
    error = (y.double() - reference).abs()
    allowed = atol_per_sqrt_k * layer.contraction ** 0.5 + rtol * reference.abs()
    ratio = error / allowed
    worst = int(ratio.argmax())
    row, col = divmod(worst, y.shape[1])
    worst_ratio = float(ratio.view(-1)[worst])
    detail = (f"worst y[{row},{col}] = {float(y[row, col]):.6g}, expected {float(reference[row, col]):.6g}, "
              f"error {float(error[row, col]):.3g} = {worst_ratio:.3g} of the {args.dtype} tolerance")
    if worst_ratio <= 1.0 and bool(torch.isfinite(y).all()):
        return True, f"check: ok\noutput 'y' matches {layer.formula} in float64 ({y.numel()} elements, {detail})"
    return False, f"check: FAILED {detail}"


def main():
    args = parse_arguments()
    rank, world, ranks_on_node = mpi_rank_and_world()

    problem = validation_error(args, world)
    if problem:
        if rank == 0:
            sys.stderr.write(f"peer_torch.py: error: {problem}\n")
        sys.exit(2)

    threads = args.threads or max(1, (os.cpu_count() or 1) // ranks_on_node)
    torch.set_num_threads(threads)
    dist.init_process_group("gloo", init_method=rendezvous_address(args.port), rank=rank, world_size=world)

    dtype = DTYPES[args.dtype]
    if not backend_reduces(dtype):
        if rank == 0:
            sys.stderr.write(f"peer_torch.py: error: gloo in torch {torch.__version__} cannot allreduce "
                             f"{args.dtype}; use --dtype f32\n")
        sys.exit(2)
    layer = LAYERS[args.layer](args, rank, world, dtype)

    for _ in range(args.warmup):
        timed_run_ms(layer)
    millis = [timed_run_ms(layer) for _ in range(args.repeat)]

    exit_code = 0
    if rank == 0:
        print(timing_line(millis), flush=True)
    if args.check:
        status = torch.zeros(1, dtype=torch.int32)
        y = layer.output()
        if rank == 0:
            ok, message = check_result(y, layer.reference(), layer, args)
            print(message, flush=True)
            status[0] = 0 if ok else 1
        dist.broadcast(status, src=0)
        exit_code = int(status[0])

    dist.barrier()
    dist.destroy_process_group()
    sys.exit(exit_code)


if __name__ == "__main__":
    main()
