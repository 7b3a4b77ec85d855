#!/usr/bin/python3
"""The overlap benchmark behind scripts/bench-overlap.sh.

For each program (row-parallel linear, reduce-scatter, all-gather, and the
layers of examples/layers/: the SwiGLU MLP and the expert-parallel MoE) and
each shape, runs `mpirun -np N hostir run` with assign-streams (or the
pass --schedule names: `pipeline`, `pipeline{depth=2}`) for every chunk
count S, plus the compute-only (strip-communication) and
communication-only (strip-compute) variants of the same program at the same
S, and, for the row-parallel linear and the two layers, the PyTorch + gloo
peer (scripts/peer_torch.py, always under mpirun). Prints one table per
program and shape:

  T_S         median ms of the whole program with S chunks (each figure: the
              median over --rounds rounds of --repeat timed runs; every round
              runs every S, variant and the peer, so drift hits all alike)
  speedup     T_1 / T_S
  T_compute   median ms of the compute-only variant at S
  T_comm      median ms of the communication-only variant at S
  E           overlap efficiency (T_compute + T_comm - T_S) / min(T_compute, T_comm), held in [0, 1]:
              0 when nothing overlaps, 1 when the shorter one is hidden entirely
  algbw       bytes / T_comm, busbw = algbw * the nccl-tests factor
              (allreduce 2(n-1)/n, allgather, reduce-scatter and
              all-to-all (n-1)/n); for the MoE layer the bytes are what one
              rank sends in all its dispatches and combines
  torch       median ms of the PyTorch + gloo peer with S chunks

With --predict MACHINE every S also gets the cost model's figures for the
same program, passes, parameters, ranks and streams (`hostir simulate`):
predicted T_S, T_compute, T_comm and E, side by side with the measured ones.

--launcher in-process runs the ranks as threads of one hostir process
(`--ranks N`) instead of under mpirun; with --backend cuda and
--communicator copy-engine that puts several ranks on one GPU, their GEMMs
on the SMs and their communication on the copy engines (scripts/gpu-check.sh).

Beside the all-gather and reduce-scatter programs it runs their ring forms
(RINGS: the collective as a ring of sendrecv steps, as written and with
each step's transfer on a communication stream, double-buffered), with the
same compute-only and communication-only variants, in a second table.

The layers take their shape as T,H,F (the SwiGLU MLP: tokens, hidden, FFN
width) or T,E,F (the MoE: tokens, hidden, expert FFN width; 8 experts, top-2
routing drawn at random, capacity 1.25 x the mean load of a chunk).

Run it through scripts/bench-overlap.sh, which builds hostir and sets the
Open MPI environment; `--help` lists the flags.
"""

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

TIMING = re.compile(r"timing: median_ms=([0-9.]+)")
PREDICTED = re.compile(r"predicted: median_ms=([0-9.]+) compute_ms=([0-9.]+) comm_ms=([0-9.]+) "
                       r"exposed_comm_ms=([0-9.]+) E=(-?[0-9.]+|nan)")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each program: its example file, what its collective moves (nccl-tests
# "size" in elements, from the global shape), the busbw factor, and its
# default compute-bound and communication-bound shapes (M, K, N). The
# communication-bound shapes are the ones whose communication-only variant
# takes longer than their compute-only one on a 2-core machine (for the
# row-parallel layer K=64 did not: its GEMMs took as long as the allreduce).
PROGRAMS = {
    "row_parallel_linear": ("examples/row_parallel_linear.hir", "allreduce", lambda m, k, n: m * n,
                            lambda w: 2 * (w - 1) / w, (1024, 2048, 1024), (8192, 16, 1024)),
    "reduce_scatter": ("examples/reduce_scatter.hir", "reduce_scatter", lambda m, k, n: m * n,
                       lambda w: (w - 1) / w, (1024, 2048, 1024), (8192, 64, 1024)),
    "all_gather": ("examples/all_gather.hir", "allgather", lambda m, k, n: m * k, lambda w: (w - 1) / w,
                   (1024, 1024, 2048), (8192, 1024, 64)),
}


# The ring forms of a program: the same product, its collective decomposed
# into sendrecv steps around the ring (examples/ring_*.hir).
RINGS = {
    "all_gather": ["ring_all_gather_linear", "ring_all_gather_linear_overlapped", "ring_bidirectional",
                   "ring_bidirectional_overlapped"],
    "reduce_scatter": ["ring_reduce_scatter", "ring_reduce_scatter_overlapped"],
}


class MatmulBench:
    """A program of PROGRAMS: parameters M, K, N and S, inputs from the seed."""

    def __init__(self, name, ranks):
        self.name, self.ranks = name, ranks
        self.path, self.collective, self.elements, self.bus_factor, _, _ = PROGRAMS[name]
        self.peer = "row_parallel_linear" if name == "row_parallel_linear" else None

    def describe(self, shape):
        return "M={} K={} N={}".format(*shape)

    def settings(self, shape, chunks):
        return shape_settings(shape) + (["--set", f"S={chunks}"] if chunks else [])

    def skip_reason(self, shape):
        _, k, n = shape
        return f"K and N must divide over {self.ranks} ranks" if k % self.ranks or n % self.ranks else None

    def chunk_skip_reason(self, shape, chunks):
        return f"M={shape[0]} does not divide into {chunks} chunks" if shape[0] % chunks else None

    def size_bytes(self, shape, chunks):
        return self.elements(*shape) * 4

    def inputs(self, args, shape, chunks):
        return []

    def peer_args(self, shape, chunks):
        m, k, n = shape
        return ["--m", str(m), "--k", str(k), "--n", str(n), "--chunks", str(chunks)]


class SwigluBench(MatmulBench):
    """examples/layers/swiglu_mlp.hir: shape T,H,F; an allreduce of y [T, H] per run."""

    def __init__(self, ranks):
        self.name, self.path, self.collective, self.peer = ("swiglu_mlp", "examples/layers/swiglu_mlp.hir",
                                                            "allreduce", "swiglu_mlp")
        self.ranks, self.bus_factor = ranks, lambda w: 2 * (w - 1) / w

    def describe(self, shape):
        return "T={} H={} F={}".format(*shape)

    def settings(self, shape, chunks):
        t, h, f = shape
        return ["--set", f"T={t}", "--set", f"H={h}", "--set", f"F={f}"] + (["--set", f"S={chunks}"] if chunks else [])

    def skip_reason(self, shape):
        return f"F must divide over {self.ranks} ranks" if shape[2] % self.ranks else None

    def chunk_skip_reason(self, shape, chunks):
        return f"T={shape[0]} does not divide into {chunks} chunks" if shape[0] % chunks else None

    def size_bytes(self, shape, chunks):
        return shape[0] * shape[1] * 4

    def peer_args(self, shape, chunks):
        t, h, f = shape
        return ["--layer", self.name, "--m", str(t), "--k", str(h), "--n", str(f), "--chunks", str(chunks)]


class MoeBench(MatmulBench):
    """examples/layers/moe_expert_parallel.hir: shape T,E,F, 8 experts, top-2, capacity factor 1.25."""

    EXPERTS, TOP_K, CAPACITY_FACTOR = 8, 2, 1.25

    def __init__(self, ranks):
        self.name, self.path, self.collective, self.peer = ("moe_expert_parallel",
                                                            "examples/layers/moe_expert_parallel.hir",
                                                            "all_to_all", "moe_expert_parallel")
        self.ranks, self.bus_factor = ranks, lambda w: (w - 1) / w
        self.routings = {}

    def capacity(self, shape, chunks):
        """C: slots per expert and chunk over all ranks, rounded up to a multiple of the ranks."""
        load = math.ceil(self.CAPACITY_FACTOR * self.TOP_K * shape[0] / (chunks * self.EXPERTS))
        return -(-load // self.ranks) * self.ranks

    def describe(self, shape):
        return "T={} E={} F={} X={}".format(*shape, self.EXPERTS)

    def settings(self, shape, chunks):
        t, e, f = shape
        sets = ["--set", f"T={t}", "--set", f"E={e}", "--set", f"F={f}", "--set", f"X={self.EXPERTS}"]
        if chunks:
            sets += ["--set", f"S={chunks}", "--set", f"C={self.capacity(shape, chunks)}"]
        return sets

    def skip_reason(self, shape):
        if self.EXPERTS % self.ranks or shape[0] % self.ranks:
            return f"T and the {self.EXPERTS} experts must divide over {self.ranks} ranks"
        return None

    def chunk_skip_reason(self, shape, chunks):
        if (shape[0] // self.ranks) % chunks:
            return f"T / ranks = {shape[0] // self.ranks} tokens do not divide into {chunks} chunks"
        return None

    def size_bytes(self, shape, chunks):
        # Every chunk dispatches and combines X buckets of C / ranks rows of E.
        return 2 * chunks * self.EXPERTS * (self.capacity(shape, chunks) // self.ranks) * shape[1] * 4

    def inputs(self, args, shape, chunks):
        """--input idx= and cw=: a random top-2 routing bucketed as the program reads it."""
        key = (shape, chunks)
        if key not in self.routings:
            self.routings[key] = write_moe_routing(args, shape, chunks, self.EXPERTS, self.TOP_K,
                                                   self.capacity(shape, chunks))
        return self.routings[key]

    def peer_args(self, shape, chunks):
        t, e, f = shape
        return ["--layer", self.name, "--m", str(t), "--k", str(e), "--n", str(f), "--experts", str(self.EXPERTS),
                "--capacity", str(self.capacity(shape, chunks)), "--chunks", str(chunks)]


def write_moe_routing(args, shape, chunks, experts, top_k, capacity):
    """Writes idx and cw (examples/layers/moe_routing.py) into args.workdir; returns the --input options."""
    sys.path.insert(0, os.path.join(ROOT, "examples", "layers"))
    import numpy as np  # only the MoE layer needs NumPy
    import moe_routing

    params = {"T": shape[0], "X": experts, "C": capacity, "S": chunks}
    idx, cw = moe_routing.route(np.random.default_rng(0), params, args.ranks, top_k)
    stem = os.path.join(args.workdir, f"moe_{'_'.join(map(str, shape))}_S{chunks}")
    np.save(stem + "_idx.npy", idx)
    np.save(stem + "_cw.npy", cw)
    # The activations and weights come from --seed.
    return ["--input", f"idx={stem}_idx.npy", "--input", f"cw={stem}_cw.npy", "--fill-missing"]


# The layers of examples/layers/ in the benchmark: (T, H or E, F) shapes,
# compute-bound and communication-bound on a 2-core machine.
LAYERS = {
    "swiglu_mlp": (SwigluBench, (512, 512, 2048), (4096, 1024, 16)),
    "moe_expert_parallel": (MoeBench, (2048, 256, 1024), (8192, 512, 16)),
}


def bench_for(name, ranks):
    return LAYERS[name][0](ranks) if name in LAYERS else MatmulBench(name, ranks)


def default_shapes(name):
    return LAYERS[name][1:] if name in LAYERS else PROGRAMS[name][4:]


def parse_shape(text):
    try:
        m, k, n = (int(v) for v in text.split(","))
        return m, k, n
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected M,K,N, got '{text}'")


def parse_list(text):
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of integers, got '{text}'")


def run_timed(command, what):
    """Runs a command that prints a `timing: median_ms=` line; returns the median in ms."""
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    match = TIMING.search(result.stdout)
    if result.returncode != 0 or not match:
        sys.stderr.write(f"error: {what} failed (exit {result.returncode}):\n  {' '.join(command)}\n"
                         f"{result.stdout[-2000:]}\n")
        sys.exit(1)
    return float(match.group(1))


def launch(args, hostir_args):
    """The command that runs `hostir run ...` on args.ranks ranks, as args.launcher says."""
    common = ["--backend", args.backend, "--communicator", args.communicator]
    if args.launcher == "in-process":
        return [args.hostir] + hostir_args + ["--ranks", str(args.ranks)] + common
    return ["mpirun", "-np", str(args.ranks), args.hostir] + hostir_args + common


def shape_settings(shape):
    m, k, n = shape
    return ["--set", f"M={m}", "--set", f"K={k}", "--set", f"N={n}"]


def hostir_ms(args, bench, shape, chunks, variant):
    passes = (variant + "," if variant else "") + args.schedule
    path = bench.path
    command = launch(args, ["run", path] + bench.settings(shape, chunks) + bench.inputs(args, shape, chunks) +
                     ["--passes", passes, "--streams", str(args.streams),
                      "--warmup", str(args.warmup), "--repeat", str(args.repeat)])
    if variant:
        # The stripped variants compute on data never communicated (or the
        # reverse): reads of uninitialized memory by design, which `run`
        # refuses unless told not to prove the program.
        command.append("--unchecked")
    return run_timed(command, f"hostir {os.path.basename(path)} S={chunks} {variant or 'full'}")


def predicted(args, bench, shape, chunks):
    """(T_S, T_compute, T_comm, E) that `hostir simulate` predicts for the measured program."""
    command = [args.hostir, "simulate", bench.path, "--machine", args.predict, "--ranks", str(args.ranks),
               "--streams", str(args.streams), "--passes", args.schedule]
    command += bench.settings(shape, chunks)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    match = PREDICTED.search(result.stdout)
    if result.returncode != 0 or not match:
        sys.stderr.write(f"error: the prediction failed (exit {result.returncode}):\n  {' '.join(command)}\n"
                         f"{result.stdout[-2000:]}\n")
        sys.exit(1)
    total, compute, comm, _, efficiency = match.groups()
    return float(total), float(compute), float(comm), float(efficiency)


def ring_ms(args, ring, shape, variant):
    """A ring program as written (its own streams, no pass) or stripped."""
    command = launch(args, ["run", f"examples/{ring}.hir"] + shape_settings(shape) +
                     ["--streams", str(args.streams), "--warmup", str(args.warmup), "--repeat", str(args.repeat)])
    if variant:
        command += ["--passes", variant, "--unchecked"]  # as in hostir_ms
    return run_timed(command, f"hostir {ring} {variant or 'full'}")


def torch_ms(args, bench, shape, chunks):
    command = ["mpirun", "-np", str(args.ranks), sys.executable, os.path.join(ROOT, "scripts", "peer_torch.py")]
    command += bench.peer_args(shape, chunks) + ["--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    return run_timed(command, f"the PyTorch peer S={chunks}")


def overlap_efficiency(total, compute, comm):
    """E as docs/cost-model.md defines it: the hidden part of the shorter one, in [0, 1]."""
    shorter = min(compute, comm)
    if shorter <= 0:
        return float("nan")
    hidden = min(max(compute + comm - total, 0.0), shorter)
    return hidden / shorter


def bench_program(args, name, shape_name, shape):
    bench = bench_for(name, args.ranks)
    collective, bus_factor = bench.collective, bench.bus_factor
    m, k, n = shape
    reason = bench.skip_reason(shape)
    if reason:
        print(f"skipping {name} at {shape}: {reason}")
        return None
    # The peer always runs under mpirun; beside in-process ranks only when asked (--torch).
    with_torch = bench.peer is not None and not args.no_torch and args.backend == "cpu" \
        and (args.launcher == "mpirun" or args.torch)
    chunk_counts = []
    for chunks in args.chunks:
        reason = bench.chunk_skip_reason(shape, chunks)
        if reason:
            print(f"skipping S={chunks}: {reason}")
            continue
        chunk_counts.append(chunks)
    if not chunk_counts:
        return None
    size_bytes = bench.size_bytes(shape, chunk_counts[0])
    # Each round runs every S, every variant and the peer, so that a slow
    # spell of a shared machine hits all of them alike (the speed of this
    # kind of VM drifts within minutes); each figure is the median of the
    # rounds' medians.
    samples = {(chunks, kind): [] for chunks in chunk_counts for kind in ("total", "compute", "comm", "peer")}
    # A ring passes blocks of M / ranks rows (all-gather) or N / ranks columns.
    rings = [] if args.no_ring or m % args.ranks or n % args.ranks else RINGS.get(name, [])
    samples.update({(ring, kind): [] for ring in rings for kind in ("total", "compute", "comm")})
    for _ in range(args.rounds):
        for chunks in chunk_counts:
            samples[chunks, "total"].append(hostir_ms(args, bench, shape, chunks, ""))
            samples[chunks, "compute"].append(hostir_ms(args, bench, shape, chunks, "strip-communication"))
            samples[chunks, "comm"].append(hostir_ms(args, bench, shape, chunks, "strip-compute"))
            if with_torch:
                samples[chunks, "peer"].append(torch_ms(args, bench, shape, chunks))
        for ring in rings:
            samples[ring, "total"].append(ring_ms(args, ring, shape, ""))
            samples[ring, "compute"].append(ring_ms(args, ring, shape, "strip-communication"))
            samples[ring, "comm"].append(ring_ms(args, ring, shape, "strip-compute"))
    rows = []
    predictions = {}
    for chunks in chunk_counts:
        total, compute, comm = (statistics.median(samples[chunks, k]) for k in ("total", "compute", "comm"))
        peer = statistics.median(samples[chunks, "peer"]) if with_torch else None
        rows.append((chunks, total, compute, comm, peer))
        if args.predict:
            predictions[chunks] = predicted(args, bench, shape, chunks)
    if not rows:
        return None

    where = f"{args.backend}, {args.launcher}" + (f", {args.communicator} communicator"
                                                  if args.communicator != "auto" else "")
    print(f"\n### {name}: {shape_name} {bench.describe(shape)}, f32, {args.ranks} ranks ({where}), "
          f"{args.schedule}, {args.streams} streams, {collective} of {size_bytes / 2**20:.1f} MiB, "
          f"median of {args.rounds} x {args.repeat} runs")
    header = "| S | T_S ms | speedup | T_compute ms | T_comm ms | E | algbw GB/s | busbw GB/s |"
    rule = "|--:|--:|--:|--:|--:|--:|--:|--:|"
    if with_torch:
        header += " torch+gloo ms |"
        rule += "--:|"
    if args.predict:
        header += f" predicted T_S ms | predicted T_compute ms | predicted T_comm ms | predicted E ({args.predict}) |"
        rule += "--:|--:|--:|--:|"
    print(header)
    print(rule)
    base = rows[0][1]
    for chunks, total, compute, comm, peer in rows:
        algbw = bench.size_bytes(shape, chunks) / (comm / 1e3) / 1e9
        line = (f"| {chunks} | {total:.2f} | {base / total:.2f}x | {compute:.2f} | {comm:.2f} | "
                f"{overlap_efficiency(total, compute, comm):.2f} | {algbw:.2f} | {algbw * bus_factor(args.ranks):.2f} |")
        if with_torch:
            line += f" {peer:.2f} |"
        if args.predict:
            p_total, p_compute, p_comm, p_efficiency = predictions[chunks]
            line += f" {p_total:.2f} | {p_compute:.2f} | {p_comm:.2f} | {p_efficiency:.2f} |"
        print(line)
    _, _, compute_1, comm_1, _ = rows[0]
    bound_by = "communication" if comm_1 > compute_1 else "compute"
    if not shape_name.startswith(bound_by):
        print(f"note: at S={rows[0][0]} T_compute {compute_1:.2f} ms and T_comm {comm_1:.2f} ms: "
              f"on this machine this shape is {bound_by}-bound, not {shape_name}")
    best = min(rows, key=lambda r: r[1])
    summary = f"best hostir: S={best[0]} {best[1]:.2f} ms ({base / best[1]:.2f}x over S=1)"
    if with_torch:
        best_peer = min(rows, key=lambda r: r[4])
        verdict = "faster" if best[1] < best_peer[4] else "SLOWER"
        summary += (f"; best torch+gloo: S={best_peer[0]} {best_peer[4]:.2f} ms; hostir is "
                    f"{best_peer[4] / best[1]:.2f}x ({verdict})")
    print(summary)
    if rings:
        print(f"\n{name} as a ring of sendrecv steps ({args.ranks} steps), same shape:")
        print("| ring program | T ms | against best S | T_compute ms | T_comm ms | E |")
        print("|---|--:|--:|--:|--:|--:|")
        for ring in rings:
            total, compute, comm = (statistics.median(samples[ring, k]) for k in ("total", "compute", "comm"))
            print(f"| {ring} | {total:.2f} | {best[1] / total:.2f}x | {compute:.2f} | {comm:.2f} | "
                  f"{overlap_efficiency(total, compute, comm):.2f} |")
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hostir", default=os.path.join(ROOT, "build", "bin", "hostir"), help="the hostir binary")
    parser.add_argument("--ranks", type=int, default=2, help="ranks (default 2)")
    parser.add_argument("--launcher", choices=["mpirun", "in-process"], default="mpirun",
                        help="MPI processes under mpirun, or threads of one hostir process (default mpirun)")
    parser.add_argument("--backend", choices=["cpu", "cuda"], default="cpu", help="hostir's backend (default cpu)")
    parser.add_argument("--communicator", choices=["auto", "nccl", "copy-engine"], default="auto",
                        help="what carries the collectives (default auto)")
    parser.add_argument("--predict", metavar="MACHINE",
                        help="also print hostir simulate's prediction on this machine profile (a shipped name or a "
                             "file)")
    parser.add_argument("--chunks", type=parse_list, default=[1, 2, 4, 8], help="chunk counts S (default 1,2,4,8)")
    parser.add_argument("--streams", type=int, default=4, help="hostir's stream pool size (default 4)")
    parser.add_argument("--schedule", default="assign-streams",
                        choices=("assign-streams", "pipeline", "pipeline{depth=2}"),
                        help="the pass that schedules each chunked program (default assign-streams)")
    parser.add_argument("--compute-bound", type=parse_shape, metavar="M,K,N",
                        help="the compute-bound shape for every program, T,H,F or T,E,F for the layers (default: "
                             "per program, 1024,2048,1024; all_gather 1024,1024,2048; swiglu_mlp 512,512,2048; "
                             "moe_expert_parallel 2048,256,1024)")
    parser.add_argument("--comm-bound", type=parse_shape, metavar="M,K,N",
                        help="the communication-bound shape for every program (default: per program, "
                             "row_parallel_linear 8192,16,1024; reduce_scatter 8192,64,1024; all_gather 8192,1024,64; "
                             "swiglu_mlp 4096,1024,16; moe_expert_parallel 8192,512,16)")
    parser.add_argument("--programs", default=",".join(PROGRAMS),
                        help="comma-separated programs out of " + ", ".join(list(PROGRAMS) + list(LAYERS)) +
                             " (default: the first three)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per measurement (default 3)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per measurement (default 10)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds per measurement; the median of their medians is shown (default 3)")
    parser.add_argument("--no-torch", action="store_true",
                        help="skip the PyTorch + gloo peer (it runs on the CPU backend, with --launcher mpirun or "
                             "--torch)")
    parser.add_argument("--torch", action="store_true",
                        help="with --launcher in-process, run the PyTorch + gloo peer too (always under mpirun)")
    parser.add_argument("--no-ring", action="store_true", help="skip the ring (sendrecv) forms")
    args = parser.parse_args()

    programs = [p for p in args.programs.split(",") if p]
    for p in programs:
        if p not in PROGRAMS and p not in LAYERS:
            parser.error(f"unknown program '{p}' (known: {', '.join(list(PROGRAMS) + list(LAYERS))})")
    if not os.access(args.hostir, os.X_OK):
        parser.error(f"no hostir binary at {args.hostir}: build it first (scripts/bench-overlap.sh does)")

    cores = os.cpu_count()
    print(f"# hostir overlap benchmark: {args.ranks} ranks ({args.launcher}, {args.backend}) on {cores} cores, "
          f"S in {args.chunks}, warmup {args.warmup}, repeat {args.repeat}, rounds {args.rounds}")
    with tempfile.TemporaryDirectory(prefix="hostir-bench.") as workdir:
        args.workdir = workdir  # the MoE layer's routing inputs
        for name in programs:
            compute_bound, comm_bound = default_shapes(name)
            for shape_name, shape in (("compute-bound", args.compute_bound or compute_bound),
                                      ("communication-bound", args.comm_bound or comm_bound)):
                bench_program(args, name, shape_name, shape)


if __name__ == "__main__":
    main()
