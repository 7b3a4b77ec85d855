#!/usr/bin/env python3
"""Fails when a library includes a layer above it (docs/architecture.md,
"Layers"), or when tools/ includes headers other than the public ones
(include/hostir/) more often than its recorded ceiling. Run by the build
(the `check_layers` target) and by ctest.

    scripts/check_layers.py [--root DIR]
"""
import argparse
import pathlib
import re
import sys

# Each folder and the project folders its files may include, besides its own.
# `hostir` is include/hostir/, the public headers.
BELOW = {
    "include": {"hostir"},
    "ir": {"hostir"},
    "comm": {"hostir", "ir"},
    "runtime": {"hostir", "ir", "comm"},
    "analysis": {"hostir", "ir", "comm", "runtime"},
    "model": {"hostir", "ir", "comm", "runtime"},
    "passes": {"hostir", "ir", "comm", "runtime", "analysis", "model"},
    "executor": {"hostir", "ir", "comm", "runtime", "analysis"},
    "calibration": {"hostir", "ir", "comm", "runtime", "analysis", "model", "passes", "executor"},
    "api": {"hostir", "ir", "comm", "runtime", "analysis", "model", "passes", "executor", "calibration"},
    "python": {"hostir", "api"},
}
PROJECT_FOLDERS = set(BELOW) | {"hostir", "tools"}
# tools/ is a client of the public API (`hostir/`): the only other project
# headers it includes are these, each with its reason (docs/architecture.md,
# "Layers"), and there are at most three.
TOOLS_PUBLIC = {"hostir", "tools"}
TOOLS_INTERNAL_HEADERS = {
    "api/command_line.h": "what the command line alone gives the library: the mpirun launch and run's hooks",
    "api/output_file.h": "the tool's files are written as the library writes its own: beside, then renamed",
    "ir/thread_start.h": "ResourceError, the thread the system would not start, caught as a resource limit",
}
assert len(TOOLS_INTERNAL_HEADERS) <= 3

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/([^"]+)"')
SOURCES = (".h", ".hpp", ".cpp", ".cu", ".cuh")


def includes(folder: pathlib.Path):
    for path in sorted(folder.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if match and match.group(1) in PROJECT_FOLDERS:
                yield path, number, match.group(1), match.group(1) + "/" + match.group(2)


def check(root: pathlib.Path) -> list[str]:
    problems = []
    for folder, allowed in BELOW.items():
        for path, number, target, header in includes(root / folder):
            if target != folder and target not in allowed:
                problems.append(f"{path.relative_to(root)}:{number}: error: {folder}/ includes {header}, "
                                f"a layer above it or beside it")
    for path, number, target, header in includes(root / "tools"):
        if target not in TOOLS_PUBLIC and header not in TOOLS_INTERNAL_HEADERS:
            problems.append(f"{path.relative_to(root)}:{number}: error: tools/ includes {header}, below the public "
                            f"API; the command line may include only <hostir/...> and "
                            f"{', '.join(sorted(TOOLS_INTERNAL_HEADERS))}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    problems = check(parser.parse_args().root)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
