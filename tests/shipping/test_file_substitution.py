"""``$(cat FILE)`` and bash's ``$(< FILE)`` are FILE's text (trailing newlines removed), when the build placed it.

dash runs the lone redirection as a command that prints nothing, so the
value is empty there; under the base image's ``sh`` either may run it, and
a file the build did not place is the image's to know: both unknown.
"""

from __future__ import annotations

import pytest

from patcher.shipping import ShipPlan
from tests.shipping.conftest import in_dest as placed
from tests.shipping.conftest import run_script


def read(script: str, run: str) -> ShipPlan:
    return run_script(script, run, {"s/VERSION": "2.1\n\n"})


# What bash 5.2 and dash 0.5.12 gave for the same script and file.
@pytest.mark.parametrize(("script", "run", "files"), [
    ('V=$(< VERSION)\ncp x.py "/dest/v$V.py"\n', "bash i.sh", ["/dest/v2.1.py"]),
    ('V="$(<VERSION)"\ncp x.py "/dest/v$V.py"\n', "bash i.sh", ["/dest/v2.1.py"]),
    ('V=$(< VERSION)\ncp x.py "/dest/v$V.py"\n', "dash i.sh", ["/dest/v.py"]),
    ('V=$(cat VERSION)\ncp x.py "/dest/v$V.py"\n', "sh i.sh", ["/dest/v2.1.py"]),
    ('V=$(cat -- VERSION VERSION)\ncp x.py "/dest/v${#V}.py"\n', "bash i.sh", ["/dest/v8.py"]),  # 2.1, 2 lines, 2.1
    # Only a lone '< FILE' is the file's text: beside other commands it is a redirection that prints nothing.
    ('V=$(< VERSION; echo 3)\ncp x.py "/dest/v$V.py"\n', "bash i.sh", ["/dest/v3.py"]),
    ('V=$(< VERSION && echo 3)\ncp x.py "/dest/v$V.py"\n', "bash i.sh", ["/dest/v3.py"]),
    # bash reading its script from a here-document is still bash, whatever shell runs i.sh.
    ("bash <<'EOF'\nV=$(< VERSION)\ncp x.py \"/dest/v$V.py\"\nEOF\n", "sh i.sh", ["/dest/v2.1.py"]),
])
def test_a_file_read_by_a_command_substitution_gives_its_text(script: str, run: str, files: list[str]) -> None:
    plan = read(script, run)
    assert placed(plan) == files and plan.notes == ()


@pytest.mark.parametrize(("script", "run"), [
    ('V=$(< VERSION)\ncp x.py "/dest/v$V.py"\n', "sh i.sh"),
    ('V=$(< /etc/os-release)\ncp x.py "/dest/v$V.py"\n', "bash i.sh"),
    ('V=$(cat /etc/os-release)\ncp x.py "/dest/v$V.py"\n', "bash i.sh"),
    ('V=$(cat -n VERSION)\ncp x.py "/dest/v$V.py"\n', "bash i.sh"),
])
def test_a_file_read_only_the_image_can_tell_is_unknown(script: str, run: str) -> None:
    plan = read(script, run)
    assert placed(plan) == [] and [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]


@pytest.mark.parametrize("script", ['V=$(cat notes.txt)\ncp x.py "/dest/v$V.py"\n',
                                    'V=$(< notes.txt)\ncp x.py "/dest/v$V.py"\n'])
def test_a_file_too_large_to_be_a_script_read_as_data_is_unknown_not_refused(script: str) -> None:
    # Scripts past 1 MiB are refused; a file that is only read as data is the image's business.
    plan = run_script(script, "bash i.sh", {"s/notes.txt": "a" * (2 << 20)})
    assert placed(plan) == [] and [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]


def test_only_the_trailing_newlines_of_a_files_text_are_removed() -> None:
    # A build flavour file written by the vendor's release tool: bash 5.2 gives 'AVX', its last letter kept.
    plan = run_script('FLAVOR=$(< FLAVOR)\ncp x.py "/dest/$FLAVOR.py"\n', "bash i.sh", {"s/FLAVOR": "AVX\n"})
    assert placed(plan) == ["/dest/AVX.py"] and plan.notes == ()
