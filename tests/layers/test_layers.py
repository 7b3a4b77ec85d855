# The layers of examples/layers/ against their NumPy float64 references
# (layers_reference.py), through the command line: global inputs with
# --input x=x.npy, global outputs with --output y=y.npy, `--check` on every
# run. On 1, 2 and 4 ranks: in-process (--ranks N), as written and after
# assign-streams; on copy engines; and under mpirun (marked mpi); and the
# layers `pipeline` rewrites, pipelined at depth 1 and 2 in each of those
# three ways. Every
# layer is also proved by `hostir check` as written and after
# `hostir opt --passes assign-streams`, at the small shapes below and at
# its declared defaults.
#
# The build comes from $HOSTIR_BUILD (default: build/ of this checkout):
#   HOSTIR_BUILD=build python3 -m pytest -q tests/layers -m "not mpi"
#   HOSTIR_BUILD=build python3 -m pytest -q tests/layers -m mpi
import os
import pathlib
import subprocess

import numpy as np
import pytest

import layers_reference as ref

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAYERS = ROOT / "examples" / "layers"
BUILD = pathlib.Path(os.environ.get("HOSTIR_BUILD", ROOT / "build"))
HOSTIR = BUILD / "bin" / "hostir"
RANKS = (1, 2, 4)
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_hwloc_base_binding_policy": "none",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}

# Small shapes whose sharded extents divide over 1, 2 and 4 ranks; the chunk
# counts leave a short last chunk where the layer allows one.
SMALL = {
    "swiglu_mlp": dict(T=10, H=8, F=16, S=4),
    "gqa_attention": dict(T=10, E=16, H=8, G=4, D=4, S=3),
    "moe_expert_parallel": dict(T=24, E=8, F=8, X=4, C=8, S=2),
    "ring_attention": dict(T=16, H=4, G=2, D=4),
    "transformer_layer": dict(T=10, E=16, H=8, G=4, D=4, F=16, S=3),
    "fsdp_linear_backward": dict(T=8, K=8, N=10, S=3),
    # S divides T / world, as the pipeline's rotating buffer needs.
    "sequence_parallel_mlp": dict(T=16, H=8, F=16, S=2),
    "rope": dict(T=6, H=8, D=4),
    "relu_mlp_backward": dict(T=8, K=8, F=12, N=6),
    "moe_routed": dict(T=24, E=8, F=8, X=4, K=2, C=8, S=2),
}
# The layers assign-streams leaves as they are: the ring's chunks are its
# steps (it chooses its own streams), and rope and the ReLU backward have
# no chunk loop.
OWN_STREAMS = {"ring_attention", "rope", "relu_mlp_backward"}
# The layers whose chunk loop is an input communication, computation and an
# output communication (either may be absent): `pipeline` rewrites them.
PIPELINED = ("fsdp_linear_backward", "sequence_parallel_mlp", "swiglu_mlp")
DEPTHS = ("pipeline", "pipeline{depth=2}")


def program(name):
    return str(LAYERS / f"{name}.hir")


def settings(params):
    return [arg for k, v in params.items() for arg in ("--set", f"{k}={v}")]


def hostir(*args, launcher=None, stdin=None):
    """Runs the hostir binary (under `launcher`, e.g. mpirun); returns the completed process."""
    if not HOSTIR.exists():
        pytest.skip(f"no hostir binary at {HOSTIR} (set HOSTIR_BUILD)")
    env = dict(os.environ)
    for key, value in MPI_ENV.items():
        env.setdefault(key, value)
    command = list(launcher or []) + [str(HOSTIR)] + [str(a) for a in args]
    return subprocess.run(command, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env, timeout=120)


def ok(result):
    assert result.returncode == 0, " ".join(result.args) + "\n" + result.stdout
    return result.stdout


def opt(name, params, ranks, *passes):
    return ok(hostir("opt", program(name), "--ranks", ranks, *settings(params), *passes))


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", sorted(SMALL))
def test_check_as_written_and_after_assign_streams(name, ranks):
    for params in (SMALL[name], {}):  # the small shapes and the declared defaults
        out = ok(hostir("check", program(name), "--ranks", ranks, *settings(params)))
        assert f": ok: program '{name}'" in out
        rewritten = opt(name, params, ranks, "--passes", "assign-streams")
        if name in OWN_STREAMS:
            assert rewritten == opt(name, params, ranks)
        else:
            # The chunk loop now runs every iteration on a stream of its own, then joins them.
            assert rewritten != opt(name, params, ranks)
            assert "synchronize(main)" in rewritten and "synchronize(stream(j))" in rewritten, rewritten
        out = ok(hostir("check", "-", "--ranks", ranks, *settings(params), stdin=rewritten))
        assert ": ok: program" in out


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("dtype", ["f64", "bf16"])
def test_the_layers_dtype_is_a_parameter(dtype, ranks):
    # One program for every dtype: `--set DT=...`, checked against the
    # serial reference in that dtype, after the passes.
    params = dict(SMALL["transformer_layer"], DT=dtype)
    out = ok(hostir("run", program("transformer_layer"), "--ranks", ranks, *settings(params), "--passes",
                    "assign-streams", "--check"))
    assert "matches the serial reference" in out and f"of the {dtype} tolerance" in out, out


def run_layer(tmp_path, name, ranks, *options, launcher=None, seed=0, program_path=None):
    """Runs a layer (or `program_path`, a schedule of it) on fresh inputs with --check; returns (outputs, expected)."""
    return run_with(tmp_path, name, SMALL[name], ranks, np.random.default_rng(1000 * ranks + seed), *options,
                    launcher=launcher, program_path=program_path)


def run_with(tmp_path, name, params, ranks, rng, *options, launcher=None, program_path=None):
    """run_layer at `params`, its inputs drawn from `rng`."""
    inputs, assignments = ref.layer_inputs(name, rng, params, ranks)
    args = ["run", program_path or program(name), *settings(params), "--check"]
    if launcher is None:
        args += ["--ranks", ranks]
    for key, value in inputs.items():
        np.save(tmp_path / f"{key}.npy", value)
        args += ["--input", f"{key}={tmp_path / f'{key}.npy'}"]
    expected = ref.layer_reference(name, inputs, params, assignments)
    for key in expected:
        args += ["--output", f"{key}={tmp_path / f'out_{key}.npy'}"]
    out = ok(hostir(*args, *options, launcher=launcher))
    assert "check: ok" in out, out
    return {key: np.load(tmp_path / f"out_{key}.npy") for key in expected}, expected


def assert_matches(outputs, expected):
    assert sorted(outputs) == sorted(expected)
    for key, want in expected.items():
        got = outputs[key]
        assert got.dtype == np.float32 and got.shape == want.shape, key
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=key)


def passes_for(name):
    return [] if name in OWN_STREAMS else ["--passes", "assign-streams"]


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", sorted(SMALL))
def test_in_process_ranks(tmp_path, name, ranks):
    assert_matches(*run_layer(tmp_path, name, ranks))
    # Overlapped: every chunk on its own stream, random delays on the streams.
    assert_matches(*run_layer(tmp_path, name, ranks, *passes_for(name), "--inject-delays", "50", seed=1))


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", sorted(SMALL))
def test_copy_engines(tmp_path, name, ranks):
    assert_matches(*run_layer(tmp_path, name, ranks, *passes_for(name), "--backend", "cpu", "--communicator",
                              "copy-engine", seed=2))


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", sorted(SMALL))
def test_mpi(tmp_path, name, ranks):
    launcher = ["mpirun", "-np", str(ranks)]
    assert_matches(*run_layer(tmp_path, name, ranks, *passes_for(name), launcher=launcher, seed=3))


# The layers on a device mesh (dp x tp, dp x ep), each at 4 ranks (2 x 2) and
# 8 ranks (2 x 4 and 4 x 2): the parameter that sets the inner axis, and
# small shapes that divide over every layout.
MESH = {"hsdp_mlp": ("TP", dict(T=16, H=8, F=32)), "moe_ep_dp": ("EP", dict(T=32, E=8, F=8, X=4, C=8, S=2))}
MESH_LAYOUTS = ((4, 2), (8, 4), (8, 2))  # (ranks, the inner axis's extent)


def mesh_params(name, inner):
    axis, params = MESH[name]
    return dict(params, **{axis: inner})


def run_mesh_layer(tmp_path, name, ranks, tp, *options, launcher=None, seed=0):
    """run_layer for a mesh layer whose inner axis has extent tp: its outputs and expected values."""
    return run_with(tmp_path, name, mesh_params(name, tp), ranks, np.random.default_rng(100 * ranks + tp + seed),
                    *options, launcher=launcher)


@pytest.mark.parametrize("ranks,tp", MESH_LAYOUTS)
@pytest.mark.parametrize("name", sorted(MESH))
def test_mesh_layers_in_process_and_on_copy_engines(tmp_path, name, ranks, tp):
    out = ok(hostir("check", program(name), "--ranks", ranks, *settings(mesh_params(name, tp))))
    assert f": ok: program '{name}'" in out
    assert_matches(*run_mesh_layer(tmp_path, name, ranks, tp, "--inject-delays", "50"))
    assert_matches(*run_mesh_layer(tmp_path, name, ranks, tp, "--backend", "cpu", "--communicator", "copy-engine",
                                   seed=1))


@pytest.mark.mpi
@pytest.mark.parametrize("ranks,tp", MESH_LAYOUTS)
@pytest.mark.parametrize("name", sorted(MESH))
def test_mesh_layers_mpi(tmp_path, name, ranks, tp):
    assert_matches(*run_mesh_layer(tmp_path, name, ranks, tp, launcher=["mpirun", "-np", str(ranks)], seed=2))


def pipelined_ways():
    """Each pipelined layer, depth and way to run it (in-process, copy engines, mpirun)."""
    return [(name, depth) for name in PIPELINED for depth in DEPTHS]


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name,depth", pipelined_ways())
def test_pipelined_in_process_and_on_copy_engines(tmp_path, name, depth, ranks):
    remarks = hostir("opt", program(name), "--ranks", ranks, *settings(SMALL[name]), "--passes", depth, "--remarks")
    assert "loop pipelined" in ok(remarks)
    assert_matches(*run_layer(tmp_path, name, ranks, "--passes", depth, "--inject-delays", "50", seed=5))
    assert_matches(*run_layer(tmp_path, name, ranks, "--passes", depth, "--backend", "cpu", "--communicator",
                              "copy-engine", seed=6))


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name,depth", pipelined_ways())
def test_pipelined_mpi(tmp_path, name, depth, ranks):
    launcher = ["mpirun", "-np", str(ranks)]
    assert_matches(*run_layer(tmp_path, name, ranks, "--passes", depth, launcher=launcher, seed=7))


def on_two_worker_streams(tmp_path, name, ranks):
    """The layer as `overlap` writes it on 2 worker streams: assign-streams' rewrite with stream(i % 2)."""
    text = opt(name, SMALL[name], ranks, "--passes", "assign-streams")
    assert "with stream(i) {" in text and "for j in range(S) {" in text, text
    text = text.replace("with stream(i) {", "with stream(i % 2) {").replace("for j in range(S) {", "for j in range(2) {")
    path = tmp_path / f"{name}_2streams.hir"
    path.write_text(text)
    return path


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", PIPELINED)
def test_fewer_worker_streams(tmp_path, name, ranks):
    path = on_two_worker_streams(tmp_path, name, ranks)
    assert_matches(*run_layer(tmp_path, name, ranks, program_path=path, seed=8))
    assert_matches(*run_layer(tmp_path, name, ranks, "--backend", "cpu", "--communicator", "copy-engine",
                              program_path=path, seed=9))


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", PIPELINED)
def test_fewer_worker_streams_mpi(tmp_path, name, ranks):
    path = on_two_worker_streams(tmp_path, name, ranks)
    assert_matches(*run_layer(tmp_path, name, ranks, program_path=path, launcher=["mpirun", "-np", str(ranks)],
                              seed=10))


# bench/hand_written/: the schedules written by hand that docs/performance.md
# compares `overlap` with, run against the same references.
HAND_WRITTEN = ROOT / "bench" / "hand_written"


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", PIPELINED)
def test_hand_written_schedules(tmp_path, name, ranks):
    params = SMALL[name]
    rng = np.random.default_rng(2000 + ranks)
    inputs, _ = ref.layer_inputs(name, rng, params, ranks)
    args = ["run", HAND_WRITTEN / f"{name}.hir", *settings(params), "--check", "--ranks", ranks]
    for key, value in inputs.items():
        np.save(tmp_path / f"{key}.npy", value)
        args += ["--input", f"{key}={tmp_path / f'{key}.npy'}"]
    expected = ref.layer_reference(name, inputs, params)
    for key in expected:
        args += ["--output", f"{key}={tmp_path / f'out_{key}.npy'}"]
    assert "check: ok" in ok(hostir(*args, "--inject-delays", "50"))
    assert_matches({key: np.load(tmp_path / f"out_{key}.npy") for key in expected}, expected)


def gpu_count():
    """GPUs nvidia-smi lists; 0 where there is no driver."""
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU ") for line in listed.splitlines())


# On one GPU: 1 rank, and 2 in-process ranks sharing it through the copy
# engines, each against the NumPy reference and the serial one (--check).
@pytest.mark.cuda
@pytest.mark.parametrize("ranks", (1, 2))
@pytest.mark.parametrize("name", sorted(SMALL))
def test_cuda_copy_engines(tmp_path, name, ranks):
    if gpu_count() < 1:
        pytest.skip("no GPU")
    assert_matches(*run_layer(tmp_path, name, ranks, *passes_for(name), "--backend", "cuda", "--communicator",
                              "copy-engine", seed=4))


# The mesh layers on one GPU: 4 in-process ranks (2 x 2) sharing it through
# the copy engines, each mesh group a split of the copy-engine team.
@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(MESH))
def test_cuda_mesh_copy_engines(tmp_path, name):
    if gpu_count() < 1:
        pytest.skip("no GPU")
    assert_matches(*run_mesh_layer(tmp_path, name, 4, 2, "--backend", "cuda", "--communicator", "copy-engine",
                                   seed=11))


def test_the_router_leaves_slots_empty_and_drops_tokens():
    # The MoE inputs exercise both -1 slots and overflowing buckets.
    params = SMALL["moe_expert_parallel"]
    empty = dropped = 0
    for world in RANKS:
        rng = np.random.default_rng(1000 * world)
        inputs, assignments = ref.layer_inputs("moe_expert_parallel", rng, params, world)
        empty += int((inputs["idx"] == -1).sum())
        dropped += params["T"] * 2 - len(assignments)
    assert empty > 0 and dropped > 0
