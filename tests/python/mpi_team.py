# One rank of an MPI job that tests/python/test_mpi.py starts with mpirun:
#   mpirun -np N python3 mpi_team.py CASE DIR
# CASE "launcher": hostir.compile(..., launcher="mpi") on MPI_COMM_WORLD;
# "comm": comm= an mpi4py communicator (a split of the world into pairs);
# "disagree": rank 0 and the others compile different parameters. Each rank
# writes one line, "rank R ok ..." or "rank R error: ...", to DIR/rank-R.txt
# (mpirun's forwarded output may interleave the ranks' lines).
import os
import sys

import numpy as np

import hostir

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"


def row_parallel(rng):
    params = {"M": 24, "K": 16, "N": 8, "S": 3}
    x = rng.uniform(-1, 1, (24, 16)).astype(np.float32)
    w = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    return params, {"x": x, "w": w}, x.astype(np.float64) @ w.astype(np.float64).T


def report(rank, line):
    with open(os.path.join(sys.argv[2], f"rank-{rank}.txt"), "w") as file:
        file.write(line + "\n")


def check(rank, compile_options, passes):
    rng = np.random.default_rng(7)  # every rank draws the same global inputs
    params, inputs, expected = row_parallel(rng)
    program = hostir.parse(str(EXAMPLES / "row_parallel_linear.hir"))
    with hostir.compile(program, params=params, passes=passes, **compile_options) as exe:
        for _ in range(3):  # each run is collective; the executable is reused
            result = exe.run(inputs)
    if "y" in result:
        error = float(np.abs(result["y"] - expected).max())
        assert error < 1e-4, error
        report(rank, f"rank {rank} ok outputs=y worst={error:.2e}")
    else:
        report(rank, f"rank {rank} ok outputs=none")


def main(case):
    if case == "comm":
        from mpi4py import MPI
        world = MPI.COMM_WORLD
        pair = world.Split(world.Get_rank() // 2, world.Get_rank())
        check(world.Get_rank(), {"comm": pair}, ["pipeline"])
        pair.Free()
        return
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
    if case == "launcher":
        check(rank, {"launcher": "mpi"}, ["pipeline{depth=2}"])
        return
    program = hostir.parse(str(EXAMPLES / "row_parallel_linear.hir"))
    params = {"M": 24, "K": 16, "N": 8, "S": 3 if rank == 0 else 4}
    try:
        hostir.compile(program, params=params, launcher="mpi")
        report(rank, f"rank {rank} ok")
    except hostir.Error as error:
        report(rank, f"rank {rank} error: {error}")


if __name__ == "__main__":
    main(sys.argv[1])
