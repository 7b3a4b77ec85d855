#!/usr/bin/python3
"""Checks README.md against the source tree.

* The README is at most 300 lines.
* Its "## Layout" section has one bullet per top-level folder that holds
  sources (every top-level folder git tracks), starting with the folder's
  name in backticks: - `passes/`: ...
* Every folder the section names in backticks (`executor/cpu/` too) exists,
  and every top-level folder it names is one git tracks.

Usage: readme_layout_test.py [SOURCE_DIR]  (default: the repository holding
this script). Without git (a copy of the tree, not a checkout), the folders
on disk that .gitignore does not exclude, hidden ones left out, stand for
the tracked ones.
Exits 0 when the README passes, 1 with one line per problem otherwise.
Standard library only, for the system Python.
"""
import fnmatch
import os
import re
import subprocess
import sys

MAX_LINES = 300
LAYOUT_HEADING = re.compile(r"^##\s+Layout\s*$")
ANY_HEADING = re.compile(r"^#{1,2}\s")
FENCE = re.compile(r"^\s*(```|~~~)")
# A folder named in backticks: `tests/` or `executor/cpu/`.
NAMED_FOLDER = re.compile(r"`([A-Za-z0-9_.+-][A-Za-z0-9_.+/-]*/)`")
# A bullet that introduces a folder: - `hostir/`: ...
BULLET_FOLDER = re.compile(r"^[-*]\s+`([A-Za-z0-9_.+-][A-Za-z0-9_.+/-]*/)`")


def tracked_top_level_folders(root):
    """Top-level folders holding files git tracks, or None without git."""
    try:
        result = subprocess.run(["git", "-C", root, "ls-files", "-z"],
                                capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    files = [f for f in result.stdout.decode("utf-8", "replace").split("\0") if f]
    if not files:
        return None
    return {f.split("/", 1)[0] for f in files if "/" in f}


def ignored_top_level_patterns(root):
    """The .gitignore patterns that can match a top-level folder."""
    patterns = []
    try:
        with open(os.path.join(root, ".gitignore"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return patterns
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("!"):
            continue
        line = line.rstrip("/").lstrip("/")
        if line and "/" not in line:
            patterns.append(line)
    return patterns


def folders_on_disk(root):
    """Top-level folders with files in them that .gitignore does not exclude,
    hidden ones left out."""
    patterns = ignored_top_level_patterns(root)
    folders = set()
    for name in os.listdir(root):
        path = os.path.join(root, name)
        # Hidden folders (.git, editors' and tools' caches) are not required;
        # one the README names (.ci/) still has to exist.
        if name.startswith(".") or not os.path.isdir(path) or os.path.islink(path):
            continue
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        if any(files for _, _, files in os.walk(path)):
            folders.add(name)
    return folders


def layout_section(lines):
    """The lines of the "## Layout" section, code blocks left out, or None."""
    start = next((i for i, line in enumerate(lines) if LAYOUT_HEADING.match(line)), None)
    if start is None:
        return None
    section = []
    in_fence = False
    for line in lines[start + 1:]:
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if ANY_HEADING.match(line):
            break
        section.append(line)
    return section


def check(root):
    problems = []
    readme = os.path.join(root, "README.md")
    try:
        with open(readme, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        return [f"cannot read {readme}: {e.strerror}"]

    if len(lines) > MAX_LINES:
        problems.append(f"README.md has {len(lines)} lines; at most {MAX_LINES} are allowed "
                        "(move the detail into docs/)")

    section = layout_section(lines)
    if section is None:
        problems.append("README.md has no '## Layout' section")
        return problems

    tracked = tracked_top_level_folders(root)
    source = "git ls-files"
    if tracked is None:
        tracked = folders_on_disk(root)
        source = "the folders on disk (no git checkout)"
    # A tracked folder whose files are all deleted from the tree is not there.
    expected = {d for d in tracked if os.path.isdir(os.path.join(root, d))}

    bullets = set()
    named = set()
    for line in section:
        m = BULLET_FOLDER.match(line)
        if m:
            bullets.add(m.group(1).rstrip("/"))
        named.update(n.rstrip("/") for n in NAMED_FOLDER.findall(line))

    for folder in sorted(expected - bullets):
        problems.append(f"README.md's layout section has no bullet for the top-level folder "
                        f"'{folder}/' (found by {source})")
    for folder in sorted(named):
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            problems.append(f"README.md's layout section names '{folder}/', which does not exist")
        elif "/" not in folder and folder not in expected:
            problems.append(f"README.md's layout section names '{folder}/', which holds no "
                            f"tracked sources (not in {source})")
    return problems


def main(argv):
    if len(argv) > 2:
        print(f"usage: {argv[0]} [SOURCE_DIR]", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       os.pardir, os.pardir)
    root = os.path.abspath(root)
    problems = check(root)
    for problem in problems:
        print(f"error: {problem}")
    if problems:
        return 1
    print(f"README.md: ok: at most {MAX_LINES} lines, and the layout section names every top-level "
          "source folder and only folders that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
