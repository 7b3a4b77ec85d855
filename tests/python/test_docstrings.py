# Every public name of the module, and every public member of its classes,
# says what it is.
import inspect

import hostir


def public_names():
    return [name for name in dir(hostir) if not name.startswith("_") and not inspect.ismodule(getattr(hostir, name))]


def test_all_lists_every_public_function_and_class():
    names = {n for n in public_names() if callable(getattr(hostir, n))}
    assert names <= set(hostir.__all__)
    assert {"apply_passes", "run", "check", "simulate", "parse", "Error", "Program"} <= set(hostir.__all__)


def test_every_public_name_has_a_docstring():
    undocumented = [n for n in public_names() if not (getattr(hostir, n).__doc__ or "").strip()]
    assert undocumented == []


def test_every_public_member_of_a_class_has_a_docstring():
    undocumented = []
    for name in public_names():
        cls = getattr(hostir, name)
        if not inspect.isclass(cls):
            continue
        for member, value in vars(cls).items():
            if member.startswith("_") or not (callable(value) or isinstance(value, property)):
                continue
            if not (value.__doc__ or "").strip():
                undocumented.append(f"{name}.{member}")
    assert undocumented == []
