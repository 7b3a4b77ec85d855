#!/usr/bin/python3
"""Checks that doc_examples_test.py passes what it should and fails the rest.

A doc test that cannot fail proves nothing: this runs the runner over two
small markdown files written here, one whose blocks all match (with the
`~N`, `...` and `not run by the doc tests` markers) and one whose blocks
are each wrong in one way, and checks the report line by line.

Usage: doc_examples_selftest.py BUILD_DIR (for `hostir check` of the .hir
blocks). Exits 0 when the runner behaves, 1 with what it got otherwise.
Standard library only, for the system Python.
"""
import os
import subprocess
import sys
import tempfile

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doc_examples_test.py")
FENCE = "```"

GOOD = """# Blocks that pass
{f}
$ echo one; echo two; echo three
one
...
three
$ echo time_ms=12.5 size=3e4 bytes
time_ms=~0.37 size=~1 bytes
{f}
{f}sh
test -d build/bin
{f}
{f}sh
# not run by the doc tests: needs a GPU
false
{f}
{f}
program p(N = 4) {{
  input  x : f32[N]
  output y : f32[N]
  y = add(x, x)
}}
{f}
{f}text
$ not a command, only shown
{f}
""".format(f=FENCE)

BAD = """# Blocks that fail
{f}
$ echo actual
expected
{f}
{f}sh
true
false
{f}
{f}
echo untagged
{f}
{f}hir
program p() {{ nonsense }}
{f}
{f}
$ echo 1.5 ms
~1.5 s
{f}
""".format(f=FENCE)

# Lines that the runner's report must contain for each file.
EXPECTED_GOOD = ["good.md:2: ok (console", "good.md:10: ok (sh", "good.md:13: skipped (sh): needs a GPU",
                 "good.md:17: ok (hir"]
EXPECTED_BAD = ["bad.md:2: $ echo actual", "-expected", "+actual", "bad.md:6: the commands exited 1",
                "bad.md:10: a block without an info string", "bad.md:13: hostir check rejects the program",
                "bad.md:16: $ echo 1.5 ms", "+1.5 ms", "5 failure(s)"]


def run_runner(source, build, name):
    result = subprocess.run([sys.executable, RUNNER, "--source", source, "--build", build, name],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return result.returncode, result.stdout


def check(source, build, name, want_status, want_lines):
    """Problems with the runner's verdict on one file, as text lines."""
    status, output = run_runner(source, build, name)
    problems = []
    if status != want_status:
        problems.append("%s: the runner exited %d, expected %d" % (name, status, want_status))
    problems += ["%s: missing from the report: %r" % (name, line) for line in want_lines if line not in output]
    if problems:
        problems.append("the runner's output:\n" + output)
    return problems


def main():
    build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="hostir-doc-selftest.") as source:
        for name, text in (("good.md", GOOD), ("bad.md", BAD)):
            with open(os.path.join(source, name), "w", encoding="utf-8") as f:
                f.write(text)
        problems = check(source, build, "good.md", 0, EXPECTED_GOOD)
        problems += check(source, build, "bad.md", 1, EXPECTED_BAD)
    print("\n".join(problems) if problems else "ok: the doc test runner passes and fails as it should")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
