# hostir.Error.findings: each finding's position and notes, for check
# errors (several lines of report) and for errors of one diagnostic.
import pytest

import hostir
from test_errors import RACY, SYNTAX_ERROR


def test_a_check_error_has_its_findings_with_positions_and_notes():
    with pytest.raises(hostir.Error) as caught:
        hostir.check(RACY)
    error = caught.value
    assert error.kind == "check"
    assert len(error.findings) == 1, str(error)
    race = error.findings[0]
    assert isinstance(race, hostir.Finding)
    assert race.file == "<string>" and race.severity == "error"
    # One of the two copies to y (lines 8 and 11); the other is a note.
    assert race.line in (8, 11) and race.column == 3
    assert f"<string>:{race.line}:{race.column}: error: {race.message}" in str(error)
    assert (error.file, error.line, error.column) == (race.file, race.line, race.column)
    assert race.notes and all(isinstance(n, hostir.Note) for n in race.notes)
    lines = {n.line for n in race.notes if n.file == "<string>"}
    assert ({8, 11} - {race.line}) <= lines, race.notes
    for note in race.notes:
        assert f": note: {note.message}" in str(error)


def test_a_run_refusing_a_racy_program_has_the_same_findings():
    with pytest.raises(hostir.Error) as checked:
        hostir.check(RACY)
    with pytest.raises(hostir.Error) as ran:
        hostir.run(RACY)
    assert ran.value.kind == "check"
    assert ran.value.findings == checked.value.findings


def test_a_syntax_error_is_one_finding():
    with pytest.raises(hostir.Error) as caught:
        hostir.parse(SYNTAX_ERROR)
    (finding,) = caught.value.findings
    assert (finding.file, finding.line, finding.column) == ("<string>", 3, 21)
    assert finding.message == caught.value.message
    assert finding.notes == []


def test_an_error_without_a_position_is_one_finding_without():
    with pytest.raises(hostir.Error) as caught:
        hostir.check(RACY, ranks=0)
    (finding,) = caught.value.findings
    assert (finding.file, finding.line, finding.column) == ("", 0, 0)
    assert finding.message == caught.value.message


def test_errors_made_in_python_have_one_finding():
    with pytest.raises(hostir.Error) as caught:
        hostir.run(RACY, inputs={"nope": [1.0]})
    assert len(caught.value.findings) == 1
    assert caught.value.findings[0].message == caught.value.message
