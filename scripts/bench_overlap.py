#!/usr/bin/python3
"""The overlap benchmark behind scripts/bench-overlap.sh.

For each program (row-parallel linear, reduce-scatter, all-gather) and each
shape, runs `mpirun -np N hostir run` with assign-streams for every chunk
count S, plus the compute-only (strip-communication) and communication-only
(strip-compute) variants of the same program at the same S, and, for the
row-parallel linear, the PyTorch + gloo peer (scripts/peer_torch.py). Prints
one table per program and shape:

  T_S         median ms of the whole program with S chunks (each figure: the
              median over --rounds rounds of --repeat timed runs; every round
              runs every S, variant and the peer, so drift hits all alike)
  speedup     T_1 / T_S
  T_compute   median ms of the compute-only variant at S
  T_comm      median ms of the communication-only variant at S
  E           overlap efficiency (T_compute + T_comm - T_S) / min(T_compute, T_comm):
              0 when nothing overlaps, 1 when the shorter one is hidden entirely
  algbw       bytes / T_comm, busbw = algbw * the nccl-tests factor
              (allreduce 2(n-1)/n, allgather and reduce-scatter (n-1)/n)
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

Run it through scripts/bench-overlap.sh, which builds hostir and sets the
Open MPI environment; `--help` lists the flags.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

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


def hostir_ms(args, path, shape, chunks, variant):
    passes = (variant + "," if variant else "") + "assign-streams"
    command = launch(args, ["run", path] + shape_settings(shape) +
                     ["--set", f"S={chunks}", "--passes", passes, "--streams", str(args.streams),
                      "--warmup", str(args.warmup), "--repeat", str(args.repeat)])
    if variant:
        # The stripped variants compute on data never communicated (or the
        # reverse): reads of uninitialized memory by design, which `run`
        # refuses unless told not to prove the program.
        command.append("--unchecked")
    return run_timed(command, f"hostir {os.path.basename(path)} S={chunks} {variant or 'full'}")


def predicted(args, path, shape, chunks):
    """(T_S, T_compute, T_comm, E) that `hostir simulate` predicts for the measured program."""
    command = [args.hostir, "simulate", path, "--machine", args.predict, "--ranks", str(args.ranks),
               "--streams", str(args.streams), "--passes", "assign-streams", "--set", f"S={chunks}"]
    command += shape_settings(shape)
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


def torch_ms(args, shape, chunks):
    m, k, n = shape
    command = ["mpirun", "-np", str(args.ranks), sys.executable, os.path.join(ROOT, "scripts", "peer_torch.py"),
               "--m", str(m), "--k", str(k), "--n", str(n), "--chunks", str(chunks),
               "--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    return run_timed(command, f"the PyTorch peer S={chunks}")


def overlap_efficiency(total, compute, comm):
    shorter = min(compute, comm)
    return (compute + comm - total) / shorter if shorter > 0 else float("nan")


def bench_program(args, name, shape_name, shape):
    path, collective, elements, bus_factor, _, _ = PROGRAMS[name]
    m, k, n = shape
    if k % args.ranks or n % args.ranks:
        print(f"skipping {name} at {shape}: K and N must divide over {args.ranks} ranks")
        return None
    with_torch = name == "row_parallel_linear" and not args.no_torch and args.launcher == "mpirun" \
        and args.backend == "cpu"
    size_bytes = elements(m, k, n) * 4
    chunk_counts = []
    for chunks in args.chunks:
        if m % chunks:
            print(f"skipping S={chunks}: M={m} does not divide into {chunks} chunks")
            continue
        chunk_counts.append(chunks)
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
            samples[chunks, "total"].append(hostir_ms(args, path, shape, chunks, ""))
            samples[chunks, "compute"].append(hostir_ms(args, path, shape, chunks, "strip-communication"))
            samples[chunks, "comm"].append(hostir_ms(args, path, shape, chunks, "strip-compute"))
            if with_torch:
                samples[chunks, "peer"].append(torch_ms(args, shape, chunks))
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
            predictions[chunks] = predicted(args, path, shape, chunks)
    if not rows:
        return None

    where = f"{args.backend}, {args.launcher}" + (f", {args.communicator} communicator"
                                                  if args.communicator != "auto" else "")
    print(f"\n### {name}: {shape_name} M={m} K={k} N={n}, f32, {args.ranks} ranks ({where}), {args.streams} streams, "
          f"{collective} of {size_bytes / 2**20:.1f} MiB, median of {args.rounds} x {args.repeat} runs")
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
        algbw = size_bytes / (comm / 1e3) / 1e9
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
    parser.add_argument("--compute-bound", type=parse_shape, metavar="M,K,N",
                        help="the compute-bound shape for every program (default: per program, "
                             "1024,2048,1024; all_gather 1024,1024,2048)")
    parser.add_argument("--comm-bound", type=parse_shape, metavar="M,K,N",
                        help="the communication-bound shape for every program (default: per program, "
                             "row_parallel_linear 8192,16,1024; reduce_scatter 8192,64,1024; all_gather 8192,1024,64)")
    parser.add_argument("--programs", default="row_parallel_linear,reduce_scatter,all_gather",
                        help="comma-separated subset of " + ", ".join(PROGRAMS))
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per measurement (default 3)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per measurement (default 10)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds per measurement; the median of their medians is shown (default 3)")
    parser.add_argument("--no-torch", action="store_true",
                        help="skip the PyTorch + gloo peer (it runs only with mpirun on the CPU backend)")
    parser.add_argument("--no-ring", action="store_true", help="skip the ring (sendrecv) forms")
    args = parser.parse_args()

    programs = [p for p in args.programs.split(",") if p]
    for p in programs:
        if p not in PROGRAMS:
            parser.error(f"unknown program '{p}' (known: {', '.join(PROGRAMS)})")
    if not os.access(args.hostir, os.X_OK):
        parser.error(f"no hostir binary at {args.hostir}: build it first (scripts/bench-overlap.sh does)")

    cores = os.cpu_count()
    print(f"# hostir overlap benchmark: {args.ranks} ranks ({args.launcher}, {args.backend}) on {cores} cores, "
          f"S in {args.chunks}, warmup {args.warmup}, repeat {args.repeat}, rounds {args.rounds}")
    for name in programs:
        compute_bound, comm_bound = PROGRAMS[name][4:]
        for shape_name, shape in (("compute-bound", args.compute_bound or compute_bound),
                                  ("communication-bound", args.comm_bound or comm_bound)):
            bench_program(args, name, shape_name, shape)


if __name__ == "__main__":
    main()
