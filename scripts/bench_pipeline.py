#!/usr/bin/python3
"""The pipeline benchmark behind scripts/bench-pipeline.sh.

For the row-parallel linear and the SwiGLU MLP at a communication-bound
shape, on N ranks in-process (`hostir run --ranks N`) and under mpirun,
measures the program as written at S=1 against `--passes pipeline` at each
chunk count S, in interleaved rounds (every round runs every case, so drift
hits all alike). Each case's figure is the median over the rounds of
`hostir run --warmup W --repeat R`'s median; the fastest and slowest round
medians show the spread, which on a VM can be bimodal. Prints one table per
program and launcher:

  case          as written (S=1), or pipeline at S
  median ms     the median of the round medians
  range ms      the fastest and slowest round medians
  vs S=1        as written S=1's median over this case's

Run it through scripts/bench-pipeline.sh, which builds hostir and sets the
Open MPI environment; `--help` lists the flags.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMING = re.compile(r"timing: median_ms=([0-9.]+)")

# Communication-bound on a 2-vCPU VM: the allreduce of y takes longer than
# the GEMMs (the overlap benchmark's communication-bound shapes).
PROGRAMS = {
    "row_parallel_linear": ("examples/row_parallel_linear.hir", ("M", "K", "N"), (8192, 16, 1024)),
    "swiglu_mlp": ("examples/layers/swiglu_mlp.hir", ("T", "H", "F"), (4096, 1024, 16)),
}


def run_ms(args, launcher, path, names, shape, chunks, pipelined):
    settings = [arg for name, value in zip(names, shape) for arg in ("--set", f"{name}={value}")]
    hostir = [args.hostir, "run", path, *settings, "--set", f"S={chunks}", "--warmup", str(args.warmup),
              "--repeat", str(args.repeat)] + (["--passes", "pipeline"] if pipelined else [])
    if launcher == "in-process":
        command = hostir + ["--ranks", str(args.ranks)]
    else:
        command = ["mpirun", "-np", str(args.ranks)] + hostir
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    match = TIMING.search(result.stdout)
    if result.returncode != 0 or not match:
        sys.stderr.write(f"error: {' '.join(command)} failed (exit {result.returncode}):\n{result.stdout[-2000:]}\n")
        sys.exit(1)
    return float(match.group(1))


def measure(args, launcher, name):
    path, names, default = PROGRAMS[name]
    shape = tuple(int(v) for v in args.shape.split(",")) if args.shape else default
    cases = [("as written, S=1", 1, False)] + [(f"pipeline, S={s}", s, True) for s in args.chunks]
    rounds = {label: [] for label, _, _ in cases}
    for _ in range(args.rounds):
        for label, chunks, pipelined in cases:
            rounds[label].append(run_ms(args, launcher, path, names, shape, chunks, pipelined))
    shape_text = " ".join(f"{n}={v}" for n, v in zip(names, shape))
    print(f"\n### {name}: {shape_text}, f32, {args.ranks} ranks ({launcher}), median of {args.rounds} rounds "
          f"of {args.repeat} runs")
    print("| case | median ms | range ms | vs S=1 |")
    print("|---|--:|--:|--:|")
    baseline = statistics.median(rounds[cases[0][0]])
    for label, _, _ in cases:
        median = statistics.median(rounds[label])
        print(f"| {label} | {median:.2f} | {min(rounds[label]):.2f}-{max(rounds[label]):.2f} | "
              f"{baseline / median:.2f}x |")


def main():
    parser = argparse.ArgumentParser(description="The pipeline benchmark behind scripts/bench-pipeline.sh.")
    parser.add_argument("--hostir", default=os.path.join(ROOT, "build", "bin", "hostir"), help="the hostir binary")
    parser.add_argument("--ranks", type=int, default=2, help="ranks (default 2)")
    parser.add_argument("--launchers", default="in-process,mpirun", help="in-process, mpirun or both (default)")
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="row_parallel_linear, swiglu_mlp or both")
    parser.add_argument("--chunks", default="2,4", help="the pipelined chunk counts S (default 2,4)")
    parser.add_argument("--shape", help="the shape for every program (M,K,N or T,H,F; default: communication-bound)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per measurement (default 3)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per measurement (default 10)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    args = parser.parse_args()
    args.chunks = [int(s) for s in args.chunks.split(",")]
    print(f"# hostir pipeline benchmark: {args.ranks} ranks on {os.cpu_count()} cores, warmup {args.warmup}, "
          f"repeat {args.repeat}, rounds {args.rounds}")
    for launcher in args.launchers.split(","):
        for name in args.programs.split(","):
            measure(args, launcher, name)


if __name__ == "__main__":
    main()
