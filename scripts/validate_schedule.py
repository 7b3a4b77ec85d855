#!/usr/bin/env python3
"""The overlap pass and `hostir tune` against real runs, behind scripts/validate-schedule.sh.

1. Calibrates this machine as scripts/validate_model.py does (three
   `mpirun -np RANKS hostir calibrate` jobs merged by each figure's median
   into build/calibrated.json), unless --profile names a profile.
2. For every overlap-benchmark program (scripts/bench_overlap.py's PROGRAMS)
   at its compute-bound and communication-bound shape:
   - `hostir tune --param S=... --passes overlap` on the profile: the
     predicted table and the S it picks;
   - for every S, `hostir opt --passes overlap --remarks`: whether the pass
     rewrites the loop or leaves the program as written;
   - runs the program as written at every S under mpirun and, where the pass
     changed it, the pass's output (`run --passes overlap --machine
     PROFILE`); each figure is the median of --rounds interleaved medians of
     --repeat timed runs.
3. Checks the three goals and prints each verdict:
   - the S that tune picks runs within 10% of the best S measured (both
     after the overlap pass);
   - the overlap pass's output is never more than 5% slower than the
     program as written;
   - on compute-bound shapes the pass leaves every S as written.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_overlap import PROGRAMS, ROOT, parse_shape, run_timed  # noqa: E402
from validate_model import add_common_arguments, parse_common_arguments  # noqa: E402

TUNE_ROW = re.compile(r"^\s*(\d+)\s+([0-9.]+)\s", re.MULTILINE)
TUNE_BEST = re.compile(r"^best: S=(\d+) predicted_ms=([0-9.]+)", re.MULTILINE)

TUNED_WITHIN = 0.10  # the tuned S runs within 10% of the best S measured
SLOWER_AT_MOST = 0.05  # the pass's output is at most 5% slower than as written


def hostir(args, command, what):
    result = subprocess.run([args.hostir] + command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"error: {what} failed (exit {result.returncode}):\n  hostir {' '.join(command)}\n{result.stdout}")
    return result.stdout


def settings_flags(settings):
    flags = []
    for name, value in settings.items():
        flags += ["--set", f"{name}={value}"]
    return flags


def tune(args, path, shape, passes):
    """`hostir tune` over args.chunks: ({S: predicted ms}, best S)."""
    m, k, n = shape
    command = ["tune", path, "--machine", args.profile, "--ranks", str(args.ranks), "--streams", str(args.streams),
               "--param", "S=" + ",".join(str(s) for s in args.chunks)] + settings_flags({"M": m, "K": k, "N": n})
    if passes:
        command += ["--passes", passes]
    out = hostir(args, command, f"hostir tune {os.path.basename(path)}")
    table = {int(s): float(ms) for s, ms in TUNE_ROW.findall(out)}
    best = TUNE_BEST.search(out)
    if not best or set(table) != set(args.chunks):
        sys.exit(f"error: could not read hostir tune's table:\n{out}")
    return table, int(best.group(1))


def overlap_rewrites(args, path, settings):
    out = hostir(args, ["opt", path, "--passes", "overlap", "--machine", args.profile, "--ranks", str(args.ranks),
                        "--streams", str(args.streams), "--remarks"] + settings_flags(settings),
                 f"hostir opt --passes overlap {os.path.basename(path)}")
    if "overlap: loop rewritten" in out:
        return True
    if "overlap: loop left as it is" in out:
        return False
    sys.exit(f"error: hostir opt --passes overlap made no decision on the loop:\n{out}")


def measured_ms(args, path, settings, variant):
    """Runs `path` as written, after `--passes overlap` or after `--passes assign-streams`."""
    command = ["mpirun", "-np", str(args.ranks), args.hostir, "run", path, "--backend", "cpu", "--streams",
               str(args.streams), "--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    if variant == "overlap":
        command += ["--passes", "overlap", "--machine", args.profile]
    elif variant == "assign-streams":
        command += ["--passes", "assign-streams"]
    return run_timed(command + settings_flags(settings), f"hostir run {os.path.basename(path)} {settings} {variant}")


def validate(args):
    cases = []  # (program, path, shape name, shape, S, rewritten)
    tuned = {}  # (program, shape name) -> (predicted as written, predicted after overlap, tuned S)
    for name in args.programs:
        path, _, _, _, compute_bound, comm_bound = PROGRAMS[name]
        shapes = (("compute-bound", args.compute_bound or compute_bound), ("comm-bound", args.comm_bound or comm_bound))
        for shape_name, shape in shapes:
            as_written, _ = tune(args, path, shape, None)
            after, best = tune(args, path, shape, "overlap")
            tuned[(name, shape_name)] = (as_written, after, best)
            m, k, n = shape
            for s in args.chunks:
                rewrites = overlap_rewrites(args, path, {"M": m, "K": k, "N": n, "S": s})
                cases.append((name, path, shape_name, shape, s, rewrites))

    # Every case as written and after assign-streams (the rewrite the pass
    # weighs), and after the pass where it changed the program.
    runs = []  # (case index, variant)
    for i, case in enumerate(cases):
        runs += [(i, "as written"), (i, "assign-streams")] + ([(i, "overlap")] if case[5] else [])
    samples = {run: [] for run in runs}
    for _ in range(args.rounds):  # interleaved, so drift hits every run alike
        for i, variant in runs:
            _, path, _, (m, k, n), s, _ = cases[i]
            samples[(i, variant)].append(measured_ms(args, path, {"M": m, "K": k, "N": n, "S": s}, variant))
    measured = {run: statistics.median(values) for run, values in samples.items()}

    print(f"\n### {args.ranks} ranks on {os.cpu_count()} cores, profile {args.profile}")
    print("| program | shape | S | overlap pass | predicted ms as written | predicted ms after | "
          "measured ms as written | measured ms after | after / as written | measured ms assign-streams |")
    print("|---|---|--:|---|--:|--:|--:|--:|--:|--:|")
    worst_slowdown, compute_bound_left = 0.0, True
    after_ms = {}
    for i, (name, _, shape_name, (m, k, n), s, rewrites) in enumerate(cases):
        as_written_pred, after_pred, _ = tuned[(name, shape_name)]
        before = measured[(i, "as written")]
        after = measured[(i, "overlap")] if rewrites else before
        after_ms[(name, shape_name, s)] = after
        ratio = after / before
        if rewrites:
            worst_slowdown = max(worst_slowdown, ratio - 1)
        if shape_name == "compute-bound" and rewrites:
            compute_bound_left = False
        print(f"| {name} | {shape_name} {m}x{k}x{n} | {s} | {'rewritten' if rewrites else 'left as written'} | "
              f"{as_written_pred[s]:.3f} | {after_pred[s]:.3f} | {before:.3f} | "
              f"{after:.3f}{'' if rewrites else ' (same program)'} | {ratio:.3f} | "
              f"{measured[(i, 'assign-streams')]:.3f} |")

    print("\n| program | shape | tuned S | measured ms at tuned S | best S measured | its ms | tuned / best |")
    print("|---|---|--:|--:|--:|--:|--:|")
    worst_tuned = 0.0
    for (name, shape_name), (_, _, best) in tuned.items():
        by_s = {s: after_ms[(name, shape_name, s)] for s in args.chunks}
        best_measured = min(by_s, key=by_s.get)
        ratio = by_s[best] / by_s[best_measured]
        worst_tuned = max(worst_tuned, ratio - 1)
        print(f"| {name} | {shape_name} | {best} | {by_s[best]:.3f} | {best_measured} | "
              f"{by_s[best_measured]:.3f} | {ratio:.3f} |")

    goals = [
        (f"the tuned S runs within {TUNED_WITHIN:.0%} of the best S measured (worst {worst_tuned:+.1%})",
         worst_tuned <= TUNED_WITHIN),
        (f"--passes overlap is at most {SLOWER_AT_MOST:.0%} slower than as written "
         f"(worst {worst_slowdown:+.1%} where it rewrote)", worst_slowdown <= SLOWER_AT_MOST),
        ("compute-bound shapes are left as written at every S", compute_bound_left),
    ]
    print()
    for text, met in goals:
        print(f"{'met' if met else 'missed'}: {text}")
    return all(met for _, met in goals)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    parser.add_argument("--compute-bound", type=parse_shape, help="M,K,N for every program's compute-bound case")
    parser.add_argument("--comm-bound", type=parse_shape, help="M,K,N for every program's communication-bound case")
    args = parse_common_arguments(parser, "scripts/validate-schedule.sh")
    sys.exit(0 if validate(args) else 1)


if __name__ == "__main__":
    main()
