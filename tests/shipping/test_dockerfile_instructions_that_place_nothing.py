"""The instructions after FROM that change no file and no user: LABEL, EXPOSE, CMD, ENTRYPOINT, VOLUME...

Pins: they are read past without a note, and none of them changes the user
a later RUN runs as: with no USER line, ``~`` in a RUN is root's home, so
``cp /x.py ~/y.py`` places /root/y.py (as under BuildKit, whose default user
is root, HOME /root).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import image_of, plan_of


@pytest.mark.parametrize("instruction", ["LABEL maintainer=me", "EXPOSE 80", 'CMD ["app"]', "ENTRYPOINT app",
                                         "VOLUME /data", "STOPSIGNAL SIGTERM", "HEALTHCHECK NONE", "MAINTAINER me"])
def test_an_instruction_that_places_nothing_leaves_the_user_root(instruction: str) -> None:
    context = {"Dockerfile": f"FROM base\n{instruction}\nCOPY x.py /x.py\nRUN cp /x.py ~/y.py\n", "x.py": ""}
    assert image_of(context) == {"/x.py": "x.py", "/root/y.py": "x.py"}
    assert plan_of(context).notes == ()
