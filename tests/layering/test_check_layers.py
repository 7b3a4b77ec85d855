"""scripts/check_layers.py on the project (clean) and on small trees that
break the layering (each caught, with the file and line)."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_layers.py"


def run(root):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)


def tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_project_keeps_its_layers():
    result = run(ROOT)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name,include", [
    ("ir/verifier.cpp", "runtime/tensor.h"),        # a layer above
    ("executor/runner.cpp", "passes/pass_manager.h"),  # beside it, not below
    ("api/run.cpp", "tools/hostir/npy.h"),          # the CLI
    ("comm/barrier.h", "executor/runner.h"),
])
def test_an_include_of_a_higher_layer_fails(tmp_path, name, include):
    root = tree(tmp_path, {name: f'#include <vector>\n#include "{include}"\n', "ir/ops.h": "#pragma once\n"})
    result = run(root)
    assert result.returncode == 1
    assert f"{name}:2: error:" in result.stderr and include in result.stderr


def test_tools_may_include_only_the_public_headers_and_the_named_three(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert len(module.TOOLS_INTERNAL_HEADERS) <= 3
    named = "".join(f'#include "{header}"\n' for header in module.TOOLS_INTERNAL_HEADERS)
    public = '#include "hostir/execution.h"\n#include "tools/hostir/commands.h"\n'
    assert run(tree(tmp_path / "a", {"tools/hostir/x.cpp": named + public})).returncode == 0
    lines = len(named.splitlines()) + 1
    over = run(tree(tmp_path / "b", {"tools/hostir/x.cpp": named + '#include "api/run_request.h"\n'}))
    assert over.returncode == 1
    assert f"tools/hostir/x.cpp:{lines}: error: tools/ includes api/run_request.h, below the public API" in over.stderr
