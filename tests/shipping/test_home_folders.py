"""``~`` and ``$HOME`` are the home folder of the user a RUN runs as, as sh expands them.

sh replaces an unquoted ``~`` that starts a word (and, in an assignment's
value, one after ``=`` or an unquoted ``:``) up to the first ``/`` by a
home folder: ``~`` is $HOME, ``~root`` is /root, ``~+`` $PWD, ``~-``
$OLDPWD; another user's home is in the image's /etc/passwd. Docker gives
a RUN the HOME of its USER: /root for root, the image's to say for anyone
else, unless ENV sets HOME.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import placed_and_noted, plan_of, script_context

HOME_CACHE = "/root/.cache/vllm"


@pytest.mark.parametrize(("script", "paths"), [
    ("mkdir -p ~/.cache/vllm\ncp x.py ~/.cache/vllm/x.py\n", [f"{HOME_CACHE}/x.py"]),
    ("mkdir -p ~root/.cache/vllm\ncp x.py ~root/.cache/vllm/\n", [f"{HOME_CACHE}/x.py"]),
    ("CACHE=~/.cache/vllm\nmkdir -p $CACHE\ncp x.py $CACHE/x.py\n", [f"{HOME_CACHE}/x.py"]),
    ("HOME=/home/app\nmkdir -p ~/lib\ncp x.py ~/lib/\n", ["/home/app/lib/x.py"]),
    ("mkdir -p /a /b\ncd /a\ncd /b\ncp /w/s/x.py ~+/plus.py\ncp /w/s/x.py ~-/minus.py\n", ["/a/minus.py", "/b/plus.py"]),
    # In an assignment, a '~' after a ':' is a home too; in a command word only at the start.
    ("P=/opt:~/bin\nmkdir -p \"/o/$P\"\ncp x.py \"/o/$P/x.py\"\n", ["/o/opt:/root/bin/x.py"]),
    ("mkdir -p /o\ncp x.py /o/a:~/b.py\n", ["/o/a:~/b.py"]),
    # Quoted, or inside a word, '~' is a letter.
    ("mkdir -p /o/~\ncp x.py \"/o/~\"\n", ["/o/~/x.py"]),
    ("mkdir -p /o\ncp x.py /o/a~b.py\n", ["/o/a~b.py"]),
])
def test_a_tilde_prefix_is_the_home_folder_sh_names(script: str, paths: list[str]) -> None:
    assert placed_and_noted(script) == (paths, [])


@pytest.mark.parametrize("word", ["'~'/q.py", "\\~/q.py", "~\"\"/q.py", "~$EMPTY/q.py"])
def test_a_tilde_prefix_with_a_quoted_or_expanded_part_is_left_as_written(word: str) -> None:
    plan = plan_of(script_context(f"EMPTY=\nmkdir ./~\ncp x.py {word}\n"))
    assert "/w/s/~/q.py" in plan.image and not any(p.startswith("/root") for p in plan.image)


def test_another_users_home_is_the_images_to_say() -> None:
    assert placed_and_noted("cp x.py ~vllm/x.py\n") == ([], [("unread", 1, "cp x.py ~vllm/x.py")])
    (note,) = plan_of(script_context("cp x.py ~vllm/x.py\n")).notes
    assert note.reason == "cp ~vllm/x.py: a path that depends on a value the reader cannot work out"


@pytest.mark.parametrize("declare", ["export", "readonly", "local", "declare -x", "typeset"])
def test_a_declaration_expands_its_assignments_as_assignments(declare: str) -> None:
    """POSIX 2024, bash and dash: not split, not globbed, '~' after '=' expanded."""
    script = f"{declare} CACHE=~/.cache/vllm NAME=$(echo a b)\nmkdir -p $CACHE\ncp x.py \"$CACHE/$NAME.py\"\n"
    if declare.startswith(("declare", "typeset")):
        script = "#!/bin/bash\n" + script  # bash's own: under sh, dash has neither
    if declare == "local":
        script = f"f() {{\n{script}}}\nf\n"  # local is for functions: outside one bash fails it, dash ends
    assert placed_and_noted(script) == ([f"{HOME_CACHE}/a b.py"], [])


@pytest.mark.parametrize(("dockerfile", "paths", "unread"), [
    ("USER vllm\nRUN cp /src/main.py ~/m.py\nUSER root\nRUN cp /src/main.py ~/r.py\n", ["/root/r.py"], [4]),
    ("USER 1000:1000\nENV HOME=/home/app\nRUN mkdir -p ~ && cp /src/main.py ~/m.py\n", ["/home/app/m.py"], []),
    ("USER 0\nRUN cp /src/main.py $HOME/m.py\n", ["/root/m.py"], []),
    # USER <user>[:<group>]: the group changes no HOME, which is the user's.
    ("USER root:root\nRUN mkdir -p ~/.cache && cp /src/main.py ~/.cache/m.py\n", ["/root/.cache/m.py"], []),
    ("USER 0:0\nRUN cp /src/main.py $HOME/m.py\n", ["/root/m.py"], []),
])
def test_a_run_gets_the_home_of_its_user(dockerfile: str, paths: list[str], unread: list[int]) -> None:
    plan = plan_of({"Dockerfile": f"FROM base\nCOPY main.py /src/\n{dockerfile}", "main.py": ""})
    assert sorted(p for p in plan.image if p != "/src/main.py") == paths
    assert [n.line for n in plan.notes if n.kind == "unread"] == unread


def test_a_stage_from_another_keeps_its_user() -> None:
    plan = plan_of({"Dockerfile": "FROM base AS app\nUSER app\nFROM app\nCOPY main.py /src/\nRUN cp /src/main.py ~/m.py\n",
                    "main.py": ""})
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 5)]


@pytest.mark.parametrize("target", ["~", "~/y.py"])
def test_a_home_with_a_wildcard_in_it_is_not_globbed(target: str) -> None:
    """dash and bash: '~' gives $HOME as it is, even where folders match it as a pattern."""
    copied = "/o/h*/x.py" if target == "~" else "/o/h*/y.py"
    assert placed_and_noted(f"HOME='/o/h*'\nmkdir -p /o/h1 /o/h2 ~\ncp x.py {target}\n") == ([copied], [])


@pytest.mark.parametrize("unset", ["unset HOME\n", "unset HOME\nset -u\n", "unset -v HOME\nset -o nounset\n"])
def test_a_tilde_with_home_unset_is_unknown_and_does_not_stop_the_script(unset: str) -> None:
    """bash gives the passwd home (/root), dash keeps '~' (a folder named '~'): neither is '' nor an error."""
    paths, notes = placed_and_noted(f"{unset}cp x.py ~/y.py\ncp x.py /z.py\n")
    assert paths == ["/z.py"]
    assert notes == [("unread", unset.count("\n") + 1, "cp x.py ~/y.py")]
