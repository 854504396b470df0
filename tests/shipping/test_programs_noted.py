"""Programs the reader does not run are noted with what they could change; commands that change nothing are not.

A package manager, a build tool, an unknown program or a path outside the
system folders could change any file (``program``, scope None). ``sed -i``
and ``find -exec``/``-delete`` could change the files they name or the tree
they walk; ``pip install NAME`` only that package's folder, and only when
the build placed a file there; ``pip install`` of a path, a wheel, a
requirements file or into another root could change anything. Commands
that only print (``ls``, ``grep``, ``chmod`` ...) are read past.
"""

from __future__ import annotations

import pytest

from patcher.shipping.command_lookup import note_program
from patcher.shipping.image_fs import ImageFS
from patcher.shipping.shell_interpreter import Shell
from patcher.shipping.shell_records import Build, CommandContext
from tests.shipping.conftest import in_dest, plan_of, run_script, script_context

TARGET = "/usr/lib/python3/dist-packages/vllm/ops/x.py"
PACKAGE_SCOPE = ("**/site-packages/vllm", "**/dist-packages/vllm")
FILES = {"s/fix.py": "import os\nprint(os.getcwd())\n", "s/bin.sh": "\x00\x01binary", "s/i2.sh": "cp x.py /opt/i2.py\n",
         "s/pyscript": "#!/usr/bin/env python3\nimport os\nos.remove('/opt/i2.py')\n",
         "s/perlscript": "#!/usr/bin/perl\nprint 1\n", "s/bashscript": "#!/bin/bash -e\ncp x.py /opt/b.py\n"}


def notes(command: str) -> list[tuple[str, int, str, str, tuple[str, ...] | None]]:
    plan = plan_of(script_context(f"cp x.py {TARGET}\n{command}\n", files=FILES))
    assert plan.image[TARGET].source == "s/x.py"
    return [(n.kind, n.line, n.text, n.reason, n.scope) for n in plan.notes]


@pytest.mark.parametrize(("command", "name"), [
    ("apt-get install -y gcc", "apt-get"), ("yum install x", "yum"), ("git clone u", "git"),
    ("curl -o /tmp/x u", "curl"), ("make install", "make"), ("cmake ..", "cmake"), ("tar xf a.tar -C /opt", "tar"),
    ("unzip a.zip", "unzip"), ("conda install x", "conda"), ("/usr/bin/make", "make"),
    ("/opt/src/configure", "/opt/src/configure"), ("/opt/tool --x", "/opt/tool"), ("/usr/local/bin/tool", "/usr/local/bin/tool"),
    ("vendor-setup --all", "vendor-setup"), ("sudo apt-get update", "apt-get"), ("env A=1 make", "make"),
    ("nohup /opt/run.sh", "/opt/run.sh"), ("timeout 5 /opt/run.sh", "/opt/run.sh"), ("exec /opt/run.sh", "/opt/run.sh"),
    ("awk '{print > \"out\"}' a", "awk"), ("awk 'BEGIN{system(\"rm x\")}'", "awk"),
    ("pip install -r req.txt", "pip install"), ("pip install -e .", "pip install"),
    ("pip install --requirement=req.txt", "pip install"), ("pip install -c c.txt vllm", "pip install"),
    ("pip install --target /opt x", "pip install"), ("pip install -t /opt vllm", "pip install"),
    ("pip install --prefix /usr vllm", "pip install"), ("pip install --root / vllm", "pip install"),
    ("pip install --editable ./p", "pip install"), ("pip install ./pkg", "pip install ./pkg"),
    ("pip install x.whl", "pip install x.whl"), ("pip install x-1.0.tar.gz", "pip install x-1.0.tar.gz"),
    ("pip install src.zip", "pip install src.zip"), ("pip install .", "pip install ."),
    ("pip install 'vllm @ https://x'", "pip install vllm @ https://x"),
    ("python3 -m vllm.entrypoints", "python3 -m vllm.entrypoints"), ("python3 /opt/nothere.py", "python3 /opt/nothere.py"),
    ("python3 -c 'import os; os.system(\"make install\")'", "python3 -c"),
    ("python3 -c \"$CODE\"", "python3"), ("python3 -", "python3 -"), ("python3 -m pip install -r r.txt", "pip install"),
    ("sh /opt/nothere.sh", "sh /opt/nothere.sh"), ("bash -x /opt/nothere.sh a", "bash -x"), ("./bin.sh", "./bin.sh (not a text file)"),
    ("bash bin.sh", "bin.sh"), ("sh -e bin.sh", "bin.sh"),
    ("sh -s -- --prefix=/opt", "sh -s"),  # its script comes from a standard input the build does not hold
    ("./perlscript", "./perlscript"), ("/opt/other.sh", "/opt/other.sh"), ("PATH=$PATH:/w/s; i2.sh", "i2.sh"),
])
def test_a_program_the_reader_does_not_run_could_change_anything(command: str, name: str) -> None:
    assert [(kind, line, reason, scope) for kind, line, _, reason, scope in notes(command)] == [
        ("program", 2, f"runs {name}, which the reader does not follow: it could change any file", None)]


@pytest.mark.parametrize("command", [
    "ls -la /opt", "grep -r x /opt", "chmod +x a", "nvidia-smi", "ldconfig", "true", ":", "sed -n p a.txt",
    "awk '{print}' a", "find /opt -name x", "python3 -c 'print(1)'", "python3 -m compileall /opt", "python3 -V",
    "python3 --version", "python3 -h", "python3", "python3 <<EOF\nprint(1)\nEOF", "python3 -m json.tool a",
    "python3 -m py_compile a.py", "python3 -m site", "python3 -m sysconfig", "python3 -m platform", "python3 -u -B -W ignore -X dev fix.py", "python3 -E fix.py", "/usr/bin/python3 -V",
    "pip list", "pip", "pip freeze", "pip install --no-deps transformers==4.57.1", "python -m pip install -q other",
    "pip install --progress-bar off other", "pip install Vllm.Ext", "pip install vllm_other", "pip uninstall -y numpy",
    "sudo -u root cp x.py /opt/s.py", "command -v cp", "sh -n ./i2.sh", "sh -s < /dev/null", "bash",
    "PATH=:/usr/bin; i2.sh", "hash -r", "trap 'rm -f /tmp/x' EXIT", "sleep 1", "wait",
])
def test_a_command_that_changes_nothing_the_build_placed_is_read_past(command: str) -> None:
    assert notes(command) == []


@pytest.mark.parametrize(("command", "shown"), [
    ("pip install vllm", "pip install vllm"), ("pip3 install -U 'vllm[all]>=0.6'", "pip install vllm"),
    ("pip3.10 install Vllm", "pip install Vllm"), ("pip uninstall -y vllm", "pip uninstall vllm"),
    ("python3 -m pip install vllm", "pip install vllm"), ("pip install --only-binary :all: vllm", "pip install vllm"),
    ("pip install --index-url http://x vllm", "pip install vllm"), ("pip install vllm~=0.6", "pip install vllm"),
    ("pip install 'vllm!=0.5'", "pip install vllm"), ("pip install vllm\\<1", "pip install vllm"),
    ("pip install --upgrade --no-cache-dir -q vllm", "pip install vllm"),
    ("pip install --extra-index-url https://download.pytorch.org/whl/cpu vllm", "pip install vllm"),
    ("pip install --proxy http://proxy.internal:3128 vllm", "pip install vllm"),
    ("pip install --trusted-host pypi.internal vllm", "pip install vllm"),  # the host is the option's value
])
def test_pip_install_of_the_package_holding_a_placed_file_is_a_caveat_for_that_package(command: str,
                                                                                      shown: str) -> None:
    assert [(kind, line, reason, scope) for kind, line, _, reason, scope in notes(command)] == [
        ("unread", 2, f"{shown} replaces those packages' files", PACKAGE_SCOPE)]


@pytest.mark.parametrize(("command", "scope"), [
    (f"sed -i 's/a/b/' {TARGET}", (TARGET,)),
    ("sed -e 's/a/b/' -i a.txt b.txt", ("/w/s/a.txt", "/w/s/b.txt")),
    ("sed --in-place=.bak -f s.sed a.txt", ("/w/s/a.txt",)),
    ("sed -i.bak s/a/b/ a.txt", ("/w/s/a.txt",)),
    ("sed --in-place s/a/b/ a.txt", ("/w/s/a.txt",)),
    ("sed --expression=s/a/b/ -i a.txt", ("/w/s/a.txt",)),
    ("sed -i s/a/b/", None),
])
def test_sed_in_place_could_change_the_files_it_names(command: str, scope: tuple[str, ...] | None) -> None:
    assert notes(command) == [("unread", 2, command, "edits files in place (sed -i)", scope)]


@pytest.mark.parametrize(("command", "scope"), [
    ("find . -type f -fprint /tmp/l", ("/w/s", "/tmp/l")),  # -fprint writes its file
    ("find /opt -fprintf /tmp/l %p -fls /tmp/m", ("/opt", "/tmp/l", "/tmp/m")),
    # -execdir and -okdir run in each file's folder: a relative path is inside the tree walked unless it climbs out;
    # a program that could do anything makes the scope anything.
    ("find /opt -execdir mv {} old/ \\;", ("/opt",)),
    ("find /opt -execdir mv {} ../../x \\;", None),
    ("find /opt -exec sh -c 'cp \"$1\" /srv' _ {} \\;", None),
    ("find /opt -exec python3 fix.py {} +", None),
    ("find /opt -exec cp {} \"$DEST\" \\;", None),
    ("find /usr/lib -execdir chmod 644 {} \\;", ("/usr/lib",)),
    ("find -ok rm {} \\;", ("/w/s",)),  # no path: find walks "."
    ("find \\( -name a \\) -okdir rm {} \\;", ("/w/s",)),
    ("find /opt -okdir mv {} old/ \\;", ("/opt",)),
    ("find /opt -okdir mv {} ../../x \\;", None),
    ("find /opt \"$WHERE\" -delete", None),
])
def test_find_that_runs_commands_the_reader_does_not_evaluate_could_change_the_tree_it_walks(
        command: str, scope: tuple[str, ...] | None) -> None:
    assert notes(command) == [("unread", 2, command, "runs commands on the files find lists, which the reader "
                                                     "does not follow", scope)]


@pytest.mark.parametrize("command", [
    # Evaluated over what the build knows (nothing below these roots is its): what they change of the base
    # image's own files changes no file the build placed.
    "find /opt -name '*.pyc' -delete", "find /opt -exec rm {} +", "find /a /b -delete",
    "find /opt -exec sed -i s/a/b/ {} +", "find /opt -exec chmod -R 644 {} +",
    "find /opt/vllm -exec chown -R vllm:vllm {} +",  # the owner is no path
    "find /opt -exec chgrp video {} +", "find /opt -exec grep -l x {} /etc/passwd \\;",  # grep changes nothing
])
def test_find_changing_only_the_base_images_files_it_lists_is_read_past(command: str) -> None:
    assert notes(command) == []


@pytest.mark.parametrize(("command", "program", "scope"), [
    ("find /opt -exec install -m 644 {} /srv \\;", "install", ("/srv",)),
    ("find /opt -name '*.py' -exec cp -t /usr/lib/vllm {} +", "cp", ("/usr/lib/vllm",)),
    # With the script given by -e/--expression or -f/--file, sed's first operand is a file it edits too.
    ("find /opt -exec sed -i --expression=s/a/b/ /etc/vllm.conf {} +", "sed", ("/etc/vllm.conf",)),
    ("find /opt -exec sed -i -e s/a/b/ /etc/vllm.conf {} +", "sed", ("/etc/vllm.conf",)),
    ("find /opt -exec sed -i --file=/tmp/fix.sed /etc/vllm.conf {} +", "sed", ("/etc/vllm.conf",)),
    ("find /opt -exec sed -i -f /tmp/fix.sed /etc/vllm.conf {} +", "sed", ("/etc/vllm.conf",)),
])
def test_find_running_a_command_on_the_base_images_files_could_change_what_its_line_names(
        command: str, program: str, scope: tuple[str, ...]) -> None:
    assert notes(command) == [("unread", 2, command, f"runs {program} on the files find lists that the base image "
                                                     "holds, which the reader cannot see", scope)]


def test_find_over_the_builds_own_tree_runs_its_command_on_each_match() -> None:
    plan = plan_of(script_context("find . -name '*.py' -exec cp {} /usr/lib/vllm/ops/ \\;\n"
                                  "find ! -name a -delete\n", files=FILES))
    assert {p: plan.image[p].source for p in plan.image if p.startswith("/usr/")} == {
        "/usr/lib/vllm/ops/fix.py": "s/fix.py", "/usr/lib/vllm/ops/x.py": "s/x.py", "/usr/lib/vllm/ops/y.py": "s/sub/y.py",
        "/usr/lib/vllm/ops/z.py": "s/sub/deep/z.py"}
    assert not [p for p in plan.image if p.startswith("/w/s/")] and plan.notes == ()


def test_a_context_script_is_run_by_its_interpreter_line() -> None:
    plan = plan_of(script_context("./bashscript\n./pyscript\n", files=FILES))
    assert plan.image["/opt/b.py"].source == "s/x.py"
    assert plan.notes == ()
    plan = plan_of(script_context("cp x.py /opt/i2.py\n./pyscript\n", files=FILES))
    assert "/opt/i2.py" not in plan.image  # the Python helper removes it


def test_a_python_program_from_standard_input_is_read() -> None:
    found = notes(f"python3 - <<EOF\nopen('{TARGET}', 'w')\nEOF")
    assert found == [("unread", 2, "python3 - <<EOF", f"python3 - rewrites {TARGET}, which the build placed there",
                      (TARGET,))]
    found = notes(f"python3 <<'EOF'\nopen('{TARGET}', 'w')\nEOF")
    assert found == [("unread", 2, "python3 <<'EOF'", f"python3 rewrites {TARGET}, which the build placed there",
                      (TARGET,))]


@pytest.mark.parametrize("path", ["/nowhere:/w/s", "/w/s:$PATH"])
def test_a_file_named_on_path_is_found_in_the_folders_the_build_set(path: str) -> None:
    """The folders are searched in order up to the first only the base image knows (its own PATH)."""
    plan = plan_of(script_context(f"PATH={path}\ni2.sh\nPATH=/w/s/sub:/usr/bin\nother.sh\n", files=FILES))
    assert plan.image["/opt/i2.py"].source == "s/x.py"
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("program", 4, "runs other.sh, which the reader does not follow: it could change any file")]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize(("script", "placed"), [
    # bash 5.2 and dash 0.5.12: a relative PATH folder is read from the current folder when the command runs.
    ("PATH=bin:$PATH\ntool.sh\n", ["/dest/t.py"]),
    ("PATH=../s/bin:/usr/bin\ntool.sh\n", ["/dest/t.py"]),
    ("PATH=:/usr/bin\ncd bin\ntool.sh\n", ["/dest/t.py"]),  # an empty folder is the current one
])
def test_a_relative_path_folder_is_read_from_the_current_folder(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run, files={"s/bin/tool.sh": "cp /w/s/x.py /dest/t.py\n"})
    assert in_dest(plan) == placed


def test_a_relative_path_folder_after_a_cd_the_reader_cannot_follow_stops_the_reading() -> None:
    plan = run_script('PATH=bin:$PATH\ncd "$(cat /etc/where)" || exit 1\ntool.sh\n', "bash i.sh",
                      files={"s/bin/tool.sh": "cp /w/s/x.py /dest/t.py\n"})
    assert in_dest(plan) == []
    assert [(n.kind, n.line) for n in plan.notes] == [("stop", 2)]


def test_pip_install_of_several_packages_names_each_ones_folders() -> None:
    assert notes("pip install vllm==0.6.3 numpy") == [
        ("unread", 2, "pip install vllm==0.6.3 numpy", "pip install vllm numpy replaces those packages' files",
         (*PACKAGE_SCOPE, "**/site-packages/numpy", "**/dist-packages/numpy"))]


@pytest.mark.parametrize("name", ["vllm-flash-attn", "vllm_flash_attn"])
def test_pip_install_of_a_dashed_name_is_a_caveat_for_the_folder_with_underscores(name: str) -> None:
    target = "/usr/local/lib/python3.10/dist-packages/vllm_flash_attn/flash_attn_interface.py"
    plan = plan_of(script_context(f"cp x.py {target}\npip install {name}\n"))
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 2, f"pip install {name} replaces those packages' files",
         ("**/site-packages/vllm_flash_attn", "**/dist-packages/vllm_flash_attn"))]


def test_pip_install_of_a_dotted_name_is_a_caveat_for_its_namespace_folder() -> None:
    # ruamel.yaml installs ruamel/yaml/ (a namespace package): its dots are folders.
    target = "/usr/local/lib/python3.10/dist-packages/ruamel/yaml/constructor.py"
    plan = plan_of(script_context(f"cp x.py {target}\npip install ruamel.yaml==0.18.6\n"))
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 2, "pip install ruamel.yaml replaces those packages' files",
         ("**/site-packages/ruamel/yaml", "**/dist-packages/ruamel/yaml"))]


def test_the_status_of_a_program_the_reader_does_not_run_is_unknown() -> None:
    # make's status is the image's: a path built from $? is unread, and named as the script wrote it.
    found = notes('make install\ncp build.log "/var/log/vendor/make-$?.log"')
    assert [(kind, line, reason) for kind, line, _, reason, _ in found][1:] == [
        ("unread", 3, "cp /var/log/vendor/make-$?.log: a path that depends on a value the reader cannot work out")]


def test_a_path_built_from_files_only_the_image_holds_names_the_cat_that_read_them() -> None:
    # cat of base-image files prints what the reader cannot see: the path is unread, shown as the command wrote it.
    command = 'cp x.py "$(cat /etc/vllm/prefix /etc/vllm/suffix)/x.py"'
    assert notes(command) == [("unread", 2, command, "cp $(cat /etc/vllm/prefix /etc/vllm/suffix)/x.py: a path "
                                                     "that depends on a value the reader cannot work out", None)]


def test_a_program_noted_with_what_it_could_change_could_change_only_that() -> None:
    build = Build(ImageFS(), lambda source: None)
    shell = Shell(build, "s/i.sh", "/w/s", {})
    assert note_program(shell, CommandContext(3, "tool --site"), "tool", ("/opt/site",)) is None
    (note,) = build.notes
    assert (note.kind, note.line, note.scope) == ("program", 3, ("/opt/site",))
    assert note.reason == "runs tool, which the reader does not follow: it could change /opt/site"
    assert note.could_change("/opt/site/x.py") and not note.could_change("/opt/other.py")
