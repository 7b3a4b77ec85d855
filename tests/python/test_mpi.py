# hostir.compile on the ranks of an MPI job (launcher="mpi", comm=): each
# test starts `mpirun -np N python3 mpi_team.py CASE DIR` and reads every
# rank's line from DIR. The team's result is checked against NumPy on rank 0 (the others
# get timings only); ranks that compile different runs all fail with one
# clear error, and none hangs.
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import hostir

TEAM = pathlib.Path(__file__).resolve().parent / "mpi_team.py"
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_hwloc_base_binding_policy": "none",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}


def mpirun(ranks, case, tmp_path):
    """Runs the case on `ranks` ranks; returns the process and every rank's line, by rank."""
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun")
    env = dict(os.environ)
    for key, value in MPI_ENV.items():
        env.setdefault(key, value)
    # The children import the hostir this test imported (build/python or the wheel's venv).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pathlib.Path(hostir.__file__).parents[1]),
                                                      env.get("PYTHONPATH")]))
    result = subprocess.run(["mpirun", "-np", str(ranks), sys.executable, str(TEAM), case, str(tmp_path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    lines = [(tmp_path / f"rank-{rank}.txt").read_text().strip() for rank in range(ranks)
             if (tmp_path / f"rank-{rank}.txt").exists()]
    return result, lines


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_launcher_mpi_runs_one_team_of_the_job(ranks, tmp_path):
    result, lines = mpirun(ranks, "launcher", tmp_path)
    assert result.returncode == 0, result.stdout
    # y is replicated: every rank holds its own copy of it.
    assert all(line.startswith(f"rank {rank} ok outputs=y") for rank, line in enumerate(lines)), result.stdout
    assert len(lines) == ranks, result.stdout


def test_comm_takes_an_mpi4py_communicator(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py (python3-mpi4py) is not installed")
    result, lines = mpirun(4, "comm", tmp_path)
    assert result.returncode == 0, result.stdout
    # Two teams of two, each rank with its copy of the replicated y.
    assert [line.split(" ok ")[1].split()[0] for line in lines] == ["outputs=y"] * 4, result.stdout


def test_ranks_that_compile_different_runs_all_fail_with_one_error(tmp_path):
    result, lines = mpirun(2, "disagree", tmp_path)
    assert result.returncode == 0, result.stdout
    assert len(lines) == 2, result.stdout
    for line in lines:
        assert "error: the ranks prepared different runs" in line, result.stdout


def test_launcher_mpi_outside_mpirun_is_refused():
    env = {key: value for key, value in os.environ.items()
           if key not in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")}
    code = ("import hostir\n"
            "try:\n"
            "    hostir.compile('examples/row_parallel_linear.hir', launcher='mpi')\n"
            "except hostir.Error as error:\n"
            "    print(error)\n")
    env["PYTHONPATH"] = str(pathlib.Path(hostir.__file__).parents[1])
    result = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=60, cwd=TEAM.parents[2])
    assert "launcher='mpi' runs one rank of an MPI job, and this process is not one" in result.stdout


def test_an_mpi_team_takes_its_size_from_the_communicator():
    with pytest.raises(hostir.Error, match="ranks: 2 with an MPI team"):
        hostir.compile(str(TEAM.parents[2] / "examples" / "row_parallel_linear.hir"), ranks=2, launcher="mpi")
    with pytest.raises(hostir.Error, match="launcher: 'slurm' is not one of in-process, mpi"):
        hostir.compile(str(TEAM.parents[2] / "examples" / "row_parallel_linear.hir"), launcher="slurm")
