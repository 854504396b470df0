"""Install scripts that run other scripts (``sh step.sh``, ``bash ./next.sh``) are followed however deep they go,
up to the reader's nesting limit.

Each script run is one level deeper than the script that runs it; only a
chain deeper than ``MAX_DEPTH`` is left unread (with a note), so a vendor
drop whose installer hands over through a dozen step scripts is read to the
copy at the end of the chain.
"""

from __future__ import annotations

from patcher.shipping.shell_records import MAX_DEPTH
from tests.shipping.conftest import plan_of, script_context


def chain(length: int) -> dict[str, str | bytes]:
    """s/i.sh runs s/step1.sh, which runs s/step2.sh ... s/stepLENGTH.sh copies x.py."""
    steps = {f"s/step{n}.sh": f"sh /w/s/step{n + 1}.sh\n" for n in range(1, length)}
    steps[f"s/step{length}.sh"] = "cp /w/s/x.py /opt/deepest.py\n"
    return script_context("sh /w/s/step1.sh\n", files=steps)


def test_a_chain_of_scripts_within_the_limit_is_read_to_its_end() -> None:
    # RUN's shell, i.sh and the steps: each script is one level deeper, so MAX_DEPTH - 2 steps still fit.
    plan = plan_of(chain(MAX_DEPTH - 2))
    assert plan.image["/opt/deepest.py"].source == "s/x.py"
    assert plan.notes == ()


def test_a_chain_of_scripts_past_the_limit_is_noted() -> None:
    plan = plan_of(chain(MAX_DEPTH - 1))  # one step more than fits
    assert "/opt/deepest.py" not in plan.image
    assert [n.reason for n in plan.notes] == [
        f"scripts nest more than {MAX_DEPTH} deep; the reader does not follow this one"]
