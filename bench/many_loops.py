"""Writes a program of N top-level loops, each over S chunks of its own
tensors (independent iterations), for timing the passes on long programs:

    python3 bench/many_loops.py 1000 > many.hir
    time build/bin/hostir opt many.hir --passes assign-streams > /dev/null
"""
import sys


def many_loops(n):
    lines = ["program many(M = 64, S = 4) {"]
    lines += [f"  input x{i} : f32[M, M]" for i in range(n)]
    lines += [f"  output y{i} : f32[M, M]" for i in range(n)]
    for i in range(n):
        lines += [f"  y{i} = allocate(f32[M, M])", "  for j in range(S) {",
                  f"    xj = shard_by_stream(x{i}, axis=0, index=j, chunks=S)",
                  f"    yj = shard_by_stream(y{i}, axis=0, index=j, chunks=S)",
                  "    copy(xj, out=yj)", "  }"]
    return "\n".join(lines + ["}"]) + "\n"


if __name__ == "__main__":
    sys.stdout.write(many_loops(int(sys.argv[1])))
