#!/usr/bin/python3
"""PyTorch + gloo peer of hostir's row-parallel linear benchmark.

Computes y[M, N] = allreduce_sum(x_r @ w_r^T) on W ranks, where rank r holds
columns [r*K/W, (r+1)*K/W) of the global x[M, K] and w[N, K], the way a user
would write it without hostir: the rows of y are split into S chunks, and per
chunk the partial product is written into the chunk of y and an asynchronous
gloo allreduce of that chunk is started; all handles are waited at the end.
This is the program examples/row_parallel_linear.hir expresses.

Rank 0 prints `timing: median_ms=X min_ms=Y max_ms=Z runs=R`, the line
`hostir run --repeat` prints, so one regex parses both.

Run (the Debian python3-torch package is importable by /usr/bin/python3):
    mpirun -np 2 /usr/bin/python3 scripts/peer_torch.py --m 1024 --k 2048 --n 1024 --chunks 4 --check
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
        description="PyTorch + gloo row-parallel linear: y = allreduce(x_r @ w_r^T) in S row chunks.")
    parser.add_argument("--m", type=int, default=256, help="rows of x and y (default 256)")
    parser.add_argument("--k", type=int, default=512, help="columns of x and w, sharded over ranks (default 512)")
    parser.add_argument("--n", type=int, default=128, help="rows of w, columns of y (default 128)")
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
    if args.k % world:
        return f"K={args.k} does not divide evenly over {world} ranks"
    if args.m % args.chunks:
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


def backend_reduces(dtype):
    """Whether this torch's gloo can allreduce `dtype` (gloo in torch 1.13 cannot do bfloat16)."""
    try:
        dist.all_reduce(torch.zeros(1, dtype=dtype))
        return True
    except RuntimeError:
        return False


def timed_run_ms(x_r, w_r, y, chunks):
    dist.barrier()
    start = time.perf_counter()
    row_parallel_linear(x_r, w_r, y, chunks)
    dist.barrier()
    return (time.perf_counter() - start) * 1e3


def timing_line(millis):
    return (f"timing: median_ms={statistics.median(millis):.3f} min_ms={min(millis):.3f} "
            f"max_ms={max(millis):.3f} runs={len(millis)}")


def check_result(y, x, w, args):
    """Compares y with x @ w^T in float64; returns (ok, message)."""
    reference = x.double() @ w.double().t()
    atol_per_sqrt_k, rtol = TOLERANCES[args.dtype]
    error = (y.double() - reference).abs()
    allowed = atol_per_sqrt_k * args.k ** 0.5 + rtol * reference.abs()
    ratio = error / allowed
    worst = int(ratio.argmax())
    row, col = divmod(worst, args.n)
    worst_ratio = float(ratio.view(-1)[worst])
    detail = (f"worst y[{row},{col}] = {float(y[row, col]):.6g}, expected {float(reference[row, col]):.6g}, "
              f"error {float(error[row, col]):.3g} = {worst_ratio:.3g} of the {args.dtype} tolerance")
    if worst_ratio <= 1.0 and bool(torch.isfinite(y).all()):
        return True, f"check: ok\noutput 'y' matches x @ w^T in float64 ({y.numel()} elements, {detail})"
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
    x, w = global_inputs(args, dtype)
    x_r, w_r = column_shard(x, rank, world), column_shard(w, rank, world)
    if not args.check:
        del x, w
    y = torch.empty(args.m, args.n, dtype=dtype)

    for _ in range(args.warmup):
        timed_run_ms(x_r, w_r, y, args.chunks)
    millis = [timed_run_ms(x_r, w_r, y, args.chunks) for _ in range(args.repeat)]

    exit_code = 0
    if rank == 0:
        print(timing_line(millis), flush=True)
    if args.check:
        status = torch.zeros(1, dtype=torch.int32)
        if rank == 0:
            ok, message = check_result(y, x, w, args)
            print(message, flush=True)
            status[0] = 0 if ok else 1
        dist.broadcast(status, src=0)
        exit_code = int(status[0])

    dist.barrier()
    dist.destroy_process_group()
    sys.exit(exit_code)


if __name__ == "__main__":
    main()
