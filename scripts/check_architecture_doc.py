#!/usr/bin/env python3
"""Checks that docs/architecture.md mentions every source file.

The sources are the *.cpp, *.h, *.cu and *.cuh files git knows (tracked, or
new and not ignored) under the libraries' and the tool's folders, with
python/*.cpp and python/hostir/*.py. The page mentions a file by its path
from the repository root (`executor/cpu/cpu_gemm.cpp`, or without the
extension, `executor/cpu/cpu_gemm`, which stands for each of its files), or
in its folder's entry of the "## Files" block (the lines from `executor/`
at the left margin to the next such line) by its name or its path from that
folder: `cpu_gemm.cpp`, `cpu_gemm.{h,cpp}`, `cpu/cpu_gemm.cpp`, or the bare
`cpu_gemm`. A bare name without an underscore (`tensor`, `runner`) counts
only in an entry's name column, before the description, so that a word of
a description never stands for a file.

Usage: check_architecture_doc.py [REPO_ROOT]. Exits 1 naming each source
file the page never mentions, 0 when it mentions them all.
"""
import re
import subprocess
import sys
from pathlib import Path

FOLDERS = ["ir", "comm", "runtime", "analysis", "passes", "executor", "model", "calibration", "api",
           "include/hostir", "tools/hostir", "python"]
SOURCE = re.compile(r"^(?!python/).*\.(cpp|h|cu|cuh)$|^python/[^/]+\.cpp$|^python/hostir/[^/]+\.py$")


def sources(root):
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard",
                             "--", *FOLDERS], check=True, capture_output=True, text=True).stdout.splitlines()
    return sorted({path for path in listed if SOURCE.match(path) and (root / path).exists()})


def entries(page):
    """Each folder's entry of the Files block: {"ir/": (its text, its name columns)}."""
    block = page.split("\n## Files", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    found, folder = {}, None
    for line in block.splitlines():
        head = re.match(r"^(\S+/)", line)
        if head:
            folder = head.group(1)
            found[folder] = ["", ""]
        if folder:
            found[folder][0] += line + "\n"
            found[folder][1] += re.split(r"(?<=\S) {2,}", line.strip(), maxsplit=1)[0] + "\n"
    return found


def names(text, name, bare=True):
    """Whether `text` names `name` (stem.ext) as stem.ext, stem.{..ext..} or, with `bare`, the stem alone."""
    stem, ext = name.rsplit(".", 1)
    forms = [r"\." + re.escape(ext) + r"(?!\w)", r"\.\{[^}]*\b" + re.escape(ext) + r"\b[^}]*\}"]
    if bare:
        forms.append(r"(?![\w/-]|\.\w|\.\{)")
    return re.search(r"(?<![\w/.-])" + re.escape(stem) + "(?:" + "|".join(forms) + ")", text) is not None


def mentioned(path, page, found):
    folder = next(f + "/" for f in FOLDERS if path.startswith(f + "/"))
    text, columns = found.get(folder, ("", ""))
    file_name = path.rsplit("/", 1)[1]
    return (names(page, path) or names(text, path[len(folder):], bare="/" in path[len(folder):])
            or names(text, file_name, bare="_" in file_name) or names(columns, file_name))


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    page = (root / "docs/architecture.md").read_text()
    found = entries(page)
    files = sources(root)
    missing = [path for path in files if not mentioned(path, page, found)]
    for path in missing:
        print(f"docs/architecture.md never mentions {path}")
    if missing:
        return 1
    print(f"docs/architecture.md mentions all {len(files)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
