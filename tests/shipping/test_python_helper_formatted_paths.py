"""A Python helper's paths built with ``%`` and ``str.format``, and files it reads through ``sys.argv``.

Pins: a ``%`` or ``.format`` CPython 3.11 refuses (``%d`` with no value, a
``%`` at the end, a lone ``{``, more ``{}`` than values) gives no path, and
so does a value the reader cannot work out (a loop's name, ``**kwargs``):
the helper is a program the reader does not follow (``program``), and it
places nothing. A helper that reads the file named by an argument the reader
cannot know, then writes a file itself, may be copying that file by hand:
the write is unread, scoped to its path.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_helper, run_script

NOT_FOLLOWED = [("program", "runs h.py, which the reader does not follow: it could change any file")]


@pytest.mark.parametrize(("destination", "cpython"), [
    ('"/dest/%d.py" % ()', "TypeError: not enough arguments for format string"),
    ('"/dest/%s%" % ("x",)', "ValueError: incomplete format"),
    ('"/dest/{".format()', "ValueError: Single '{' encountered in format string"),
    ('"/dest/{}{}".format("a")', "IndexError: Replacement index 1 out of range for positional args tuple"),
])
def test_a_path_formatting_cpython_refuses_is_not_followed(destination: str, cpython: str) -> None:
    plan = run_helper(f"import shutil\nshutil.copy('x.py', {destination})\n")
    assert in_dest(plan) == []
    assert [(n.kind, n.reason) for n in plan.notes] == NOT_FOLLOWED


@pytest.mark.parametrize("code", [
    # CPython 3.11 copies x.py to /dest/a.py with either.
    "import shutil\nfor name in ['a']:\n    shutil.copy('x.py', '/dest/{}.py'.format(name))\n",
    "import shutil\nkw = {'n': 'a'}\nshutil.copy('x.py', '/dest/{n}.py'.format(**kw))\n",
])
def test_a_format_of_a_value_the_reader_cannot_work_out_is_not_followed(code: str) -> None:
    plan = run_helper(code)
    assert in_dest(plan) == []
    assert [(n.kind, n.reason) for n in plan.notes] == NOT_FOLLOWED


def test_a_percent_sign_ending_the_template_is_refused() -> None:
    # CPython 3.11: '/dest/x%' % () raises ValueError: incomplete format; the helper ends with 1, nothing copied.
    plan = run_helper("import shutil\nshutil.copy('x.py', '/dest/x%' % ())\n")
    assert in_dest(plan) == []


def test_a_write_after_reading_a_file_named_by_an_unknown_argument_is_unread() -> None:
    # CPython 3.11, given x.py: /dest/out holds x.py's bytes.
    plan = run_script("python3 -c 'import sys; d = open(sys.argv[1]).read(); open(\"/dest/out\", \"w\").write(d)' "
                      "\"$(cat /opt/name)\"\n")
    assert in_dest(plan) == []
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "python3 -c writes /dest/out itself after reading a file the reader cannot work out: it may hold "
                   "a copy of it, changed or not", ("/dest/out",))]


def test_a_format_field_of_thousands_of_digits_is_unknown() -> None:
    # CPython 3.11: ValueError "Too many decimal digits in format string": the helper raises.
    plan = run_helper("import shutil\nshutil.copy('x.py', '/dest/{" + "9" * 5000 + "}'.format('a'))\n")
    assert in_dest(plan) == []
