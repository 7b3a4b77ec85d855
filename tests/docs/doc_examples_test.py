#!/usr/bin/python3
"""Runs the code blocks of the documentation and compares their output.

In the spirit of MLIR's lit and Rust's doctests: every fenced block of
README.md and docs/*.md is a test, so a doc that drifts from the code fails.
A block's kind comes from its info string (```console, ```sh, ...) or, for
a block without one, from its first line:

  console  `$ cmd` lines (a trailing `\\` continues a command), each followed
           by its expected output up to the next `$ ` line. A block without
           an info string whose first line starts with `$ ` is one too.
           Each command runs in its own bash, in the block's directory (so
           files persist from one command to the next, shell variables do
           not); its stdout and stderr together must match the expected
           text, trailing blanks aside. The exit status is not compared, so a
           block may show an error.
  sh       commands without their output (bash, also `bash`, `shell`): the
           block runs as one script under `set -e` and must exit 0.
  python   a block with `>>>` lines (any `$ ... python3` line is dropped)
           runs as a doctest with PYTHONPATH=<build>/python and ELLIPSIS
           (`...` in an output stands for any text).
  cpp      compiled against the build installed into a temporary prefix
           (find_package(hostir CONFIG REQUIRED)) and run; a block without
           main() is wrapped in one, its #include lines kept in front.
  hir      a program: `hostir check` must accept it.
  text     anything else that is shown, not run (also json, cmake, ...).
A block without an info string that is none of console, python or a
program (its first code line starts with `program`) is an error: give it
one, so that no command block goes unrun by accident.

Markers, for what cannot be compared or run as written:
  ~0.37    in expected output: any number (a measurement: a time, a rate, a
           size that depends on the machine). Model predictions are written
           as plain numbers and compared exactly.
  ...      a line of expected output that is only `...` (indentation
           allowed) stands for any number of lines, none included.
  # not run by the doc tests: REASON
           among the block's first comment lines: the block is reported as
           skipped with REASON (a GPU, a benchmark, a missing package, a
           fragment of a program).

Every block runs in a fresh temporary directory in which the repository's
top-level folders (examples/, profiles/, scripts/, bench/, ...) are links to
the source tree and build/ is the build directory; <build>/bin comes first
on PATH. Blocks that call mpirun run only with --mpi, the others only
without it, so that ctest can give the MPI ones their label and
environment.

Usage: doc_examples_test.py --source DIR --build DIR [--mpi] [--no-cpp] [--no-python] FILE...
Exits 0 when every block passes; otherwise prints, for each failure, the
block's file:line, the command and a unified diff of expected against
actual output, and exits 1. Standard library only, for the system Python.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^(```+|~~~+)\s*([^\s{`]*)")
SKIP = re.compile(r"^\s*(?:#|//)\s*not run by the doc tests:\s*(.+?)\s*$")
MEASURED = re.compile(r"~(?=[-+]?(?:\d|\.\d))[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
SH_LANGS = {"sh", "bash", "shell"}
COMMAND_TIMEOUT_S = 120


class Block:
    """One fenced block: where it starts, its info string, its lines."""

    def __init__(self, path, line, lang, lines):
        self.path, self.line, self.lang, self.lines = path, line, lang, lines

    def where(self):
        return "%s:%d" % (self.path, self.line)

    def skip_reason(self):
        """The reason of a `not run by the doc tests` line among the leading comments."""
        for text in self.lines:
            match = SKIP.match(text)
            if match:
                return match.group(1)
            if not re.match(r"^\s*(#|//|$)", text):
                return None
        return None

    def first_code_line(self):
        for text in self.lines:
            if text.strip() and not text.lstrip().startswith("#"):
                return text
        return ""

    def kind(self):
        """console, sh, python, cpp, hir, text; or None for an untagged block of unknown kind."""
        if any(text.startswith(">>> ") or text == ">>>" for text in self.lines):
            return "python"
        if self.lang in ("console", "shell-session"):
            return "console"
        if self.lang in SH_LANGS:
            return "sh"
        if self.lang in ("cpp", "c++"):
            return "cpp"
        if self.lang == "hir":
            return "hir"
        if self.lang:
            return "text"
        first = self.first_code_line()
        if first.startswith("$ "):
            return "console"
        if first.startswith("program "):
            return "hir"
        return None

    def uses_mpi(self):
        """Whether a command (not a comment) calls mpirun."""
        return any(re.search(r"^[^#]*\bmpirun\b", text) for text in self.lines)


def read_blocks(path, shown_path):
    """The fenced blocks of a markdown file."""
    blocks, current, fence = [], None, None
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            text = text.rstrip("\n")
            if current is None:
                match = FENCE.match(text)
                if match:
                    fence = match.group(1)
                    current = Block(shown_path, number, match.group(2).lower(), [])
            elif text.strip() == fence:
                blocks.append(current)
                current = None
            else:
                current.lines.append(text)
    return blocks


def console_steps(lines):
    """(command, expected lines) pairs of a console block; leading comments dropped."""
    steps, i = [], 0
    while i < len(lines) and not lines[i].startswith("$ "):
        i += 1
    while i < len(lines):
        command = lines[i][2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command += "\n" + lines[i]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        while expected and not expected[-1].strip():
            expected.pop()
        steps.append((command, expected))
    return steps


def line_pattern(text):
    """A regex for one expected line: literal text, `~N` for any number."""
    parts, last = [], 0
    for match in MEASURED.finditer(text):
        parts.append(re.escape(text[last:match.start()]))
        parts.append(NUMBER)
        last = match.end()
    parts.append(re.escape(text[last:]))
    return "".join(parts)


def output_matches(expected, actual):
    """Whether the actual lines match the expected ones, with `~N` and `...`."""
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == "..." else line_pattern(line) + r"\n"
                      for line in expected)
    text = "".join(line + "\n" for line in actual)
    return re.fullmatch(pattern, text) is not None


def normalize(output):
    lines = [line.rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


class Runner:
    """Runs blocks in fresh directories that look like the repository root."""

    def __init__(self, source, build, tmp):
        self.source, self.build, self.tmp = source, build, tmp
        self.env = dict(os.environ)
        self.env["PATH"] = os.path.join(build, "bin") + os.pathsep + self.env.get("PATH", "")
        self.env["PYTHONPATH"] = os.path.join(build, "python")
        self.prefix = None
        self.count = 0

    def workdir(self):
        """A fresh directory with the repository's top-level entries linked in."""
        self.count += 1
        work = os.path.join(self.tmp, "block%d" % self.count)
        os.mkdir(work)
        for name in os.listdir(self.source):
            if name.startswith(".") or name.startswith("build"):
                continue
            os.symlink(os.path.join(self.source, name), os.path.join(work, name))
        os.symlink(self.build, os.path.join(work, "build"))
        return work

    def bash(self, script, cwd):
        result = subprocess.run(["bash", "-c", script], cwd=cwd, env=self.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=COMMAND_TIMEOUT_S)
        return result.returncode, result.stdout

    def run_console(self, block):
        """Each command's output against the expected text; a list of failure reports."""
        work, failures = self.workdir(), []
        for command, expected in console_steps(block.lines):
            _, output = self.bash(command, work)
            actual = normalize(output)
            if not output_matches(expected, actual):
                diff = difflib.unified_diff(expected, actual, "expected", "actual", lineterm="")
                failures.append("%s: $ %s\n%s" % (block.where(), command, "\n".join(diff)))
        return failures

    def run_sh(self, block):
        script = "set -e\n" + "\n".join(block.lines) + "\n"
        status, output = self.bash(script, self.workdir())
        if status != 0:
            return ["%s: the commands exited %d:\n%s\n%s" % (block.where(), status, "\n".join(block.lines),
                                                               output.rstrip())]
        return []

    def run_python(self, block):
        """The >>> lines and their outputs as a doctest."""
        lines = [line for line in block.lines if not line.startswith("$ ")]
        work = self.workdir()
        with open(os.path.join(work, "doctest.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        status, output = self.bash("/usr/bin/python3 -m doctest -o ELLIPSIS doctest.txt", work)
        if status != 0:
            return ["%s: the doctest failed:\n%s" % (block.where(), output.rstrip())]
        return []

    def run_hir(self, block):
        work = self.workdir()
        with open(os.path.join(work, "block.hir"), "w", encoding="utf-8") as f:
            f.write("\n".join(block.lines) + "\n")
        status, output = self.bash("hostir check block.hir", work)
        if status != 0:
            return ["%s: hostir check rejects the program:\n%s" % (block.where(), output.rstrip())]
        return []

    def install(self):
        """The build installed once into a temporary prefix, as a consumer sees it."""
        if self.prefix is None:
            self.prefix = os.path.join(self.tmp, "prefix")
            status, output = self.bash("cmake --install '%s' --prefix '%s'" % (self.build, self.prefix), self.tmp)
            if status != 0:
                raise RuntimeError("cmake --install failed:\n" + output)
        return self.prefix

    def run_cpp(self, block):
        """The snippet built as a consumer of the installed package, then run."""
        prefix, work = self.install(), self.workdir()
        project = os.path.join(work, "snippet")
        os.mkdir(project)
        with open(os.path.join(project, "snippet.cpp"), "w", encoding="utf-8") as f:
            f.write(wrap_cpp(block.lines))
        with open(os.path.join(project, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write(CPP_PROJECT)
        build = os.path.join(project, "build")
        script = ("cmake -S snippet -B '%s' -DCMAKE_PREFIX_PATH='%s' >/dev/null && "
                  "cmake --build '%s' >/dev/null && '%s/snippet'") % (build, prefix, build, build)
        status, output = self.bash(script, work)
        if status != 0:
            return ["%s: the C++ snippet failed (exit %d):\n%s\n%s" % (
                block.where(), status, wrap_cpp(block.lines).rstrip(), output.rstrip())]
        return []


CPP_PROJECT = """cmake_minimum_required(VERSION 3.25)
project(snippet LANGUAGES CXX)
find_package(hostir CONFIG REQUIRED)
add_executable(snippet snippet.cpp)
target_compile_features(snippet PRIVATE cxx_std_20)
target_link_libraries(snippet PRIVATE hostir::hostir)
"""


def wrap_cpp(lines):
    """The snippet itself if it has main(); else its #includes, then the rest in main()."""
    if any(re.search(r"\bint\s+main\s*\(", line) for line in lines):
        return "\n".join(lines) + "\n"
    includes = [line for line in lines if line.startswith("#include")]
    body = [line for line in lines if not line.startswith("#include")]
    return "\n".join(includes + ["int main() {"] + ["  " + line for line in body] + ["}"]) + "\n"


def run_file(runner, path, shown, options, report):
    """Runs one file's blocks; returns its failure reports."""
    failures = []
    for block in read_blocks(path, shown):
        kind = block.kind()
        if kind is None:
            failures.append("%s: a block without an info string: mark it console, sh, hir, cpp or text"
                            % block.where())
            continue
        if kind == "text":
            continue
        if block.uses_mpi() != options.mpi:
            continue
        reason = block.skip_reason()
        if reason is None and kind == "cpp" and options.no_cpp:
            reason = "C++ snippets are not built in this run (--no-cpp)"
        if reason is None and kind == "python" and options.no_python:
            reason = "this build has no Python module (--no-python)"
        if reason is not None:
            report.append("%s: skipped (%s): %s" % (block.where(), kind, reason))
            continue
        run, start = getattr(runner, "run_" + kind), time.monotonic()
        try:
            block_failures = run(block)
        except subprocess.TimeoutExpired as error:
            block_failures = ["%s: timed out after %d s: %s" % (block.where(), error.timeout, error.cmd)]
        failures += block_failures
        # The time, so that a block that makes the test slow is easy to find.
        report.append("%s: %s (%s, %.1f s)" % (block.where(), "FAILED" if block_failures else "ok", kind,
                                               time.monotonic() - start))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="the repository root")
    parser.add_argument("--build", required=True, help="the build directory (bin/hostir, python/)")
    parser.add_argument("--mpi", action="store_true", help="run only the blocks that call mpirun")
    parser.add_argument("--no-cpp", action="store_true", help="skip the C++ snippets")
    parser.add_argument("--no-python", action="store_true", help="skip the >>> blocks")
    parser.add_argument("files", nargs="+", help="markdown files, relative to --source")
    options = parser.parse_args()
    source, build = os.path.abspath(options.source), os.path.abspath(options.build)
    tmp = tempfile.mkdtemp(prefix="hostir-doc-tests.")
    failures, report = [], []
    try:
        runner = Runner(source, build, tmp)
        for name in options.files:
            failures += run_file(runner, os.path.join(source, name), name, options, report)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join(report))
    if failures:
        print("\n\n".join(["", "FAILURES:"] + failures))
        print("\n%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
