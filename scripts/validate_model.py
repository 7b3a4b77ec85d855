#!/usr/bin/env python3
"""The cost model against real runs, behind scripts/validate-model.sh.

1. Calibrates this machine: `mpirun -np RANKS hostir calibrate` in
   --calibrations separate jobs, merged into build/calibrated.json by
   taking every figure's median (skipped with --profile FILE). On a small
   VM an Open MPI job now and then runs its collectives several times slower
   than the others from start to end; the median of three jobs is not
   swayed by one such job.
2. For every overlap-benchmark program (scripts/bench_overlap.py's PROGRAMS:
   the row-parallel linear, reduce-scatter and all-gather examples) at its
   compute-bound and communication-bound shape, and every chunk count S,
   runs it with assign-streams under mpirun (the median of --rounds
   interleaved medians of --repeat timed runs) and simulates it with
   `hostir simulate --machine PROFILE`; prints measured ms, predicted ms and
   the error (predicted - measured) / measured, then the median and largest
   absolute error against the goals (median <= 10%, none above 25%).
3. Simulates bench/row_parallel_bf16.hir (nvFuser's shape) on the shipped
   h100-nvlink profile beside the recorded H100 runs and the published
   references.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_overlap import PROGRAMS, ROOT, parse_list, run_timed  # noqa: E402

PREDICTED = re.compile(r"predicted: median_ms=([0-9.]+)")

# docs/performance.md, "Row-parallel layer at nvFuser's shape, bf16": one
# H100 80GB HBM3, one rank, after assign-streams, median of 20 runs.
H100_MEASURED_MS = {1: 5.55, 2: 5.50, 4: 5.55, 8: 5.83}
# nvFuser's published overlap benchmark on 2 x H100 (t = h = 8192, bf16):
# the PyTorch serial reference, and nvFuser's own S = 2 and S = 4.
PYTORCH_SERIAL_2XH100_MS = 3.31
NVFUSER_2XH100_MS = {2: 3.60, 4: 3.70}


def simulate_ms(args, path, machine, ranks, settings):
    command = [args.hostir, "simulate", path, "--machine", machine, "--ranks", str(ranks),
               "--passes", "assign-streams", "--streams", str(args.streams)]
    for name, value in settings.items():
        command += ["--set", f"{name}={value}"]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    match = PREDICTED.search(result.stdout)
    if result.returncode != 0 or not match:
        sys.exit(f"error: hostir simulate failed (exit {result.returncode}):\n  {' '.join(command)}\n{result.stdout}")
    return float(match.group(1))


def measured_ms(args, path, settings):
    command = ["mpirun", "-np", str(args.ranks), args.hostir, "run", path, "--backend", "cpu",
               "--passes", "assign-streams", "--streams", str(args.streams),
               "--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    for name, value in settings.items():
        command += ["--set", f"{name}={value}"]
    return run_timed(command, f"hostir run {os.path.basename(path)} {settings}")


def merge_profiles(profiles):
    """One profile from several calibrations of one machine: each figure's median."""
    def median_of(values):
        return [statistics.median(column) for column in zip(*values)]

    merged = json.loads(json.dumps(profiles[0]))
    for dtype, grid in merged["gemm"].items():
        grid["tflops"] = median_of([p["gemm"][dtype]["tflops"] for p in profiles])
        grid["peak_tflops"] = max(grid["tflops"])
    merged["memory"]["gbps"] = median_of([p["memory"]["gbps"] for p in profiles])
    if "strided" in merged["memory"]:
        merged["memory"]["strided"]["slowdown"] = median_of([p["memory"]["strided"]["slowdown"] for p in profiles])
    for i, entry in enumerate(merged["communication"]):
        entries = [p["communication"][i] for p in profiles]
        entry["us"] = median_of([e["us"] for e in entries])
        entry["latency_us"] = statistics.median(e["latency_us"] for e in entries)
        entry["busbw_gbps"] = statistics.median(e["busbw_gbps"] for e in entries)
    for key, value in merged["overheads_us"].items():
        if isinstance(value, (int, float)):  # the spreads and per-kind costs stay the first job's
            merged["overheads_us"][key] = statistics.median(p["overheads_us"][key] for p in profiles)
    merged["description"] += f" Merged from {len(profiles)} calibration jobs, each figure's median."
    return merged


def calibrate(args):
    args.profile = os.path.join(ROOT, "build", "calibrated.json")
    profiles = []
    for job in range(args.calibrations):
        path = os.path.join(ROOT, "build", f"calibrated-{job + 1}.json")
        # --force: a job that spreads too much is outvoted by the others'
        # medians rather than refused.
        command = ["mpirun", "-np", str(args.ranks), args.hostir, "calibrate", "--force", "-o", path]
        print(f"# calibrating: {' '.join(command)}", flush=True)
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        print(result.stdout.rstrip())
        if result.returncode != 0:
            sys.exit(f"error: hostir calibrate failed (exit {result.returncode}):\n{result.stderr.rstrip()}")
        with open(path, encoding="utf-8") as f:
            profiles.append(json.load(f))
    with open(args.profile, "w", encoding="utf-8") as f:
        json.dump(merge_profiles(profiles), f, indent=2)
    print(f"# wrote {args.profile}")


def error(predicted, measured):
    return (predicted - measured) / measured


def validate_here(args):
    cases = []
    for name in args.programs:
        path, _, _, _, compute_bound, comm_bound = PROGRAMS[name]
        for shape_name, (m, k, n) in (("compute-bound", compute_bound), ("comm-bound", comm_bound)):
            for s in args.chunks:
                cases.append((name, path, shape_name, {"M": m, "K": k, "N": n, "S": s}))
    samples = {i: [] for i in range(len(cases))}
    for _ in range(args.rounds):  # interleaved, so drift hits every case alike
        for i, (_, path, _, settings) in enumerate(cases):
            samples[i].append(measured_ms(args, path, settings))

    print(f"\n### This machine: {args.ranks} ranks on {os.cpu_count()} cores, profile {args.profile}")
    print("| program | shape | S | measured ms | predicted ms | error |")
    print("|---|---|--:|--:|--:|--:|")
    errors = []
    for i, (name, path, shape_name, settings) in enumerate(cases):
        measured = statistics.median(samples[i])
        predicted = simulate_ms(args, path, args.profile, args.ranks, settings)
        e = error(predicted, measured)
        errors.append(abs(e))
        shape = f"{shape_name} {settings['M']}x{settings['K']}x{settings['N']}"
        print(f"| {name} | {shape} | {settings['S']} | {measured:.3f} | {predicted:.3f} | {e:+.1%} |")
    median, largest = statistics.median(errors), max(errors)
    verdict = "met" if median <= 0.10 and largest <= 0.25 else "missed"
    print(f"\nmedian |error| {median:.1%}, largest {largest:.1%} over {len(errors)} cases "
          f"(goal: median <= 10%, none above 25%): {verdict}")
    return verdict == "met"


def validate_h100(args):
    path = "bench/row_parallel_bf16.hir"
    print("\n### h100-nvlink profile: bench/row_parallel_bf16.hir (T = H = 8192, bf16), after assign-streams")
    print("| ranks | S | reference | reference ms | predicted ms | error |")
    print("|--:|--:|---|--:|--:|--:|")
    ok = True
    for s, measured in H100_MEASURED_MS.items():
        predicted = simulate_ms(args, path, "h100-nvlink", 1, {"S": s})
        e = error(predicted, measured)
        ok &= abs(e) <= 0.10
        print(f"| 1 | {s} | hostir on 1x H100 (docs/performance.md) | {measured:.2f} | {predicted:.3f} | {e:+.1%} |")
    predicted = simulate_ms(args, path, "h100-nvlink", 2, {"S": 1})
    e = error(predicted, PYTORCH_SERIAL_2XH100_MS)
    ok &= abs(e) <= 0.10
    print(f"| 2 | 1 | PyTorch serial, 2x H100 (nvFuser) | {PYTORCH_SERIAL_2XH100_MS:.2f} | {predicted:.3f} | {e:+.1%} |")
    for s, published in NVFUSER_2XH100_MS.items():
        predicted = simulate_ms(args, path, "h100-nvlink", 2, {"S": s})
        print(f"| 2 | {s} | nvFuser overlap, 2x H100 (published) | {published:.2f} | {predicted:.3f} | "
              f"{error(predicted, published):+.1%} |")
    print(f"\nh100-nvlink goals (1-rank runs and the 2-GPU serial case within 10%): {'met' if ok else 'missed'}")
    return ok


def add_common_arguments(parser):
    """The flags of both validation scripts (this one and validate_schedule.py)."""
    parser.add_argument("--hostir", default=os.path.join(ROOT, "build", "bin", "hostir"), help="the hostir binary")
    parser.add_argument("--profile", help="a profile that `hostir calibrate` wrote, instead of calibrating anew")
    parser.add_argument("--ranks", type=int, default=2, help="MPI ranks (default 2)")
    parser.add_argument("--calibrations", type=int, default=3,
                        help="calibration jobs merged into the profile, each figure's median (default 3)")
    parser.add_argument("--chunks", type=parse_list, default=[1, 2, 4, 8], help="chunk counts S (default 1,2,4,8)")
    parser.add_argument("--streams", type=int, default=4, help="hostir's stream pool size (default 4)")
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated subset of " + ", ".join(PROGRAMS))
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per measurement (default 3)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per measurement (default 10)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="interleaved rounds per measurement; the median of their medians counts (default 5)")


def parse_common_arguments(parser, wrapper):
    """Parses, checks the programs and the binary, and calibrates unless --profile was given."""
    args = parser.parse_args()
    args.programs = [p for p in args.programs.split(",") if p]
    for p in args.programs:
        if p not in PROGRAMS:
            parser.error(f"unknown program '{p}' (known: {', '.join(PROGRAMS)})")
    if not os.access(args.hostir, os.X_OK):
        parser.error(f"no hostir binary at {args.hostir}: build it first ({wrapper} does)")
    if not args.profile:
        calibrate(args)
    return args


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    args = parse_common_arguments(parser, "scripts/validate-model.sh")
    here = validate_here(args)
    h100 = validate_h100(args)
    sys.exit(0 if here and h100 else 1)


if __name__ == "__main__":
    main()
