"""hostir.Error and its findings: what every failed call raises."""

import collections

Note = collections.namedtuple("Note", "file line column message")
Note.__doc__ = """A note that explains a finding ("the other access"): its file,
line and column ("" and 0 when it has no position) and its message."""

Finding = collections.namedtuple("Finding", "file line column severity message notes")
Finding.__doc__ = """One thing an Error reports (a check error has one per race,
uninitialized read or mismatch; any other error exactly one): file, line
and column ("" and 0 when it has no position), severity ("error"), message,
and notes (a list of Note)."""


class Error(Exception):
    """A failed hostir call. str() is the full report ("file:line:col: error:
    message", then the source line and a caret, where there is a position).

    Attributes: kind ("program", "check", "run", "usage" or "runtime"),
    message (without the position), file, line and column (the first
    positioned finding's; empty and 0 when the error has no position), and
    findings, a list of Finding, each with its position and notes.
    """

    def __init__(self, text, *, kind="usage", message=None, file="", line=0, column=0, findings=None):
        super().__init__(text)
        #: "program", "check", "run", "usage" or "runtime".
        self.kind = kind
        #: The message without its position.
        self.message = text if message is None else message
        #: The file of the error's position ("" when none).
        self.file = file
        #: The error's line (0 when it has no position).
        self.line = line
        #: The error's column (0 when it has no position).
        self.column = column
        if findings is None:
            findings = [(file, line, column, "error", self.message, [])]
        #: Every finding, as Finding, in the order str() reports them.
        self.findings = [Finding(f, ln, col, sev, msg, [Note(*n) for n in notes])
                         for f, ln, col, sev, msg, notes in findings]



class _ArgumentTypeError(Error, TypeError):
    """An argument of the wrong type: a hostir.Error (kind "usage") that is
    also the TypeError Python code expects."""


class _ArgumentValueError(Error, ValueError):
    """An argument out of range: a hostir.Error (kind "usage") that is also a ValueError."""


def _usage(message):
    return _ArgumentValueError(f"error: {message}", message=message)


def _type_usage(message):
    return _ArgumentTypeError(f"error: {message}", message=message)


# They are hostir's: hostir.Error in reprs and tracebacks.
for _class in (Note, Finding, Error, _ArgumentTypeError, _ArgumentValueError):
    _class.__module__ = "hostir"
