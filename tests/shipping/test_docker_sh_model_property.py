"""Generated Dockerfiles and install scripts: inspect's answer equals a small model of Docker and sh.

The generator writes multi-stage Dockerfiles (FROM a base or an earlier
stage, ARG before FROM and again inside, ENV, WORKDIR, COPY from the
context or ``--from`` a stage by name or number, RUN in its shell and exec
forms with ``sh -ec``, ``bash -xc``, ``sh -e -c``) and install scripts
(``cd``, ``pushd``/``popd``, ``cd -``, variables with quoting and
``${VAR:-default}``, ``mkdir -p``, ``cp`` with combined and long flags,
``-t``/``-T``/``--``, ``rm -rf``, ``set -e``/``set +e``).

``Model`` below interprets exactly that grammar, written from Docker's
reference and POSIX/GNU coreutils, not from patcher's code: a base image
with a few known folders, one file system per stage, GNU cp's rules, and
a build that fails where sh would fail it (those examples are skipped:
there is no image to compare). The base image's folders are the only thing
patcher cannot know; the generator writes destinations whose meaning does
not depend on them the way a careful script does (a trailing ``/`` for an
existing folder, a new name for a new file or folder).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from patcher.patchset.model import SeriesOutline
from patcher.review.inspect import inspect_tree, to_json
from tests.shipping.conftest import MemoryTree

CONTEXT = {"pkg/a.py": "a\n", "pkg/b.py": "b\n", "pkg/sub/c.py": "c\n", "lib/d.py": "d\n", "top.py": "top\n"}
BASE_DIRS = {"/", "/usr", "/usr/lib", "/usr/lib/py", "/usr/lib/py/vllm", "/usr/lib/py/vllm/ops", "/opt", "/srv"}
CTX = "/w/ctx"  # where every stage that runs a script puts pkg/ and top.py first
SCRIPTS = "/w/scripts"


class BuildFails(Exception):
    """Docker or sh would stop the build here: there is no image."""


class Unmodelled(Exception):
    """The generator made something this model does not follow: no example to compare."""


# -- the model --------------------------------------------------------------

class FS:
    """One stage's files: image path -> context path, and the folders that exist."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.dirs: set[str] = set(BASE_DIRS)

    def clone(self) -> "FS":
        other = FS()
        other.files, other.dirs = dict(self.files), set(self.dirs)
        return other

    def is_dir(self, path: str) -> bool:
        return path in self.dirs

    def exists(self, path: str) -> bool:
        return path in self.dirs or path in self.files

    def mkdirs(self, path: str) -> None:
        while path not in self.dirs:
            if path in self.files:
                raise BuildFails(f"{path} is a file")
            self.dirs.add(path)
            path = posixpath.dirname(path)

    def put(self, path: str, source: str) -> None:
        if path in self.dirs:
            raise BuildFails(f"{path} is a folder")
        self.mkdirs(posixpath.dirname(path))
        self.files[path] = source

    def tree(self, folder: str) -> dict[str, str]:
        """Relative path -> source of every file under ``folder``."""
        prefix = folder.rstrip("/") + "/"
        return {p[len(prefix):]: s for p, s in self.files.items() if p.startswith(prefix)}

    def subdirs(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return [d[len(prefix):] for d in self.dirs if d.startswith(prefix)]

    def remove(self, path: str) -> None:
        prefix = path.rstrip("/") + "/"
        self.files = {p: s for p, s in self.files.items() if p != path and not p.startswith(prefix)}
        self.dirs = {d for d in self.dirs if d != path and not d.startswith(prefix)} | {"/"}


def join(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, path)).replace("//", "/")


def substitute(text: str, lookup: dict[str, str]) -> str:
    """$NAME, ${NAME} and ${NAME:-word} (word itself substituted); an unset NAME is empty."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        value = lookup.get(name, "")
        if match.group(2) is not None and value == "":
            return substitute(match.group(2), lookup)
        return value
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)", one, text)


class Model:
    """Docker and sh, for the generator's grammar only."""

    def __init__(self, context: dict[str, str]):
        self.context = context
        self.stages: list[tuple[str | None, FS, dict[str, str], str]] = []  # (name, fs, env, workdir)
        self.cd_failed = False  # sh went on after a cd that failed (patcher stops reading there)

    # Docker ---------------------------------------------------------------

    def build(self, dockerfile: str) -> dict[str, str]:
        global_args: dict[str, str] = {}
        current: tuple[str | None, FS, dict[str, str], str] | None = None
        fs, env, args, workdir = FS(), {}, {}, "/"
        for line in dockerfile.splitlines():
            keyword, _, rest = line.partition(" ")
            if keyword == "FROM":
                if current is not None:
                    self.stages.append((current[0], fs, env, workdir))
                words = rest.split()
                base, name = words[0], (words[2].lower() if len(words) == 3 else None)
                earlier = [s for s in self.stages if s[0] == base.lower()]
                if earlier:  # FROM an earlier stage: its files, ENV and WORKDIR
                    _, parent_fs, parent_env, workdir = earlier[-1]
                    fs, env = parent_fs.clone(), dict(parent_env)
                else:
                    fs, env, workdir = FS(), {}, "/"
                args = {}  # ARG values belong to one stage
                current = (name, fs, env, workdir)
                continue
            if current is None:  # ARG before the first FROM: for FROM lines, and for ARG NAME inside a stage
                key, _, value = rest.partition("=")
                global_args[key] = value
                continue
            lookup = {**args, **env}  # ENV wins over an ARG of the same name
            if keyword == "ARG":
                key, equals, value = rest.partition("=")
                args[key] = substitute(value, lookup) if equals else global_args.get(key, "")
            elif keyword == "ENV":
                key, _, value = rest.partition("=")
                env[key] = substitute(value, lookup)
            elif keyword == "WORKDIR":
                workdir = join(workdir, substitute(rest, lookup))
                fs.mkdirs(workdir)
            elif keyword == "COPY":
                self.copy(fs, rest.split(), workdir, lookup)
            elif keyword == "RUN":
                self.run(fs, rest, workdir, {**args, **env})
        return dict(fs.files)

    def copy(self, fs: FS, words: list[str], workdir: str, lookup: dict[str, str]) -> None:
        origin = None
        if words[0].startswith("--from="):
            reference = words.pop(0)[len("--from="):]
            origin = self.stages[int(reference)][1] if reference.isdigit() else \
                [s for s in self.stages if s[0] == reference][-1][1]
        *sources, written = [substitute(w, lookup) for w in words]
        dest = join(workdir, written)
        for source in sources:
            if origin is None:
                files = {p: p for p in self.context if p == source}
                folder = {p[len(source) + 1:]: p for p in self.context if p.startswith(source + "/")}
            else:
                path = join("/", source)
                files = {path: origin.files[path]} if path in origin.files else {}
                folder = origin.tree(path) if origin.is_dir(path) else {}
                if not files and not origin.is_dir(path):
                    raise BuildFails(f"COPY --from: {path} not found")
            if files:  # a file: into DEST when DEST ends with / or is a folder, else as DEST
                (item, held), = files.items()
                into = written.endswith("/") or fs.is_dir(dest)
                fs.put(join(dest, posixpath.basename(item)) if into else dest, held)
            elif folder or origin is not None:  # a folder: what it holds, into DEST
                fs.mkdirs(dest)
                for relative, held in folder.items():
                    fs.put(join(dest, relative), held)
            else:
                raise BuildFails(f"COPY: {source} not in the context")

    # sh -------------------------------------------------------------------

    def run(self, fs: FS, text: str, workdir: str, env: dict[str, str]) -> None:
        if text.startswith("["):
            argv = json.loads(text)
        else:
            argv = ["/bin/sh", "-c", text]
        if not Shell(self, fs, workdir, env).execute(argv):
            raise BuildFails("the RUN fails")


class Shell:
    def __init__(self, model: Model, fs: FS, cwd: str, env: dict[str, str]):
        self.model, self.fs, self.cwd = model, fs, cwd
        self.vars = dict(env)
        self.oldpwd: str | None = None
        self.stack: list[str] = []
        self.errexit = False

    def words(self, line: str) -> list[str]:
        """Split like sh: quotes group, single quotes are literal, $-forms expand outside single quotes."""
        out = []
        for token in re.findall(r"(?:'[^']*'|\"[^\"]*\"|[^\s'\"]+)+", line):
            word = ""
            for piece in re.findall(r"'[^']*'|\"[^\"]*\"|[^'\"]+", token):
                if piece.startswith("'"):
                    word += piece[1:-1]
                elif piece.startswith('"'):
                    word += substitute(piece[1:-1], self.vars)
                else:
                    word += substitute(piece, self.vars)
            out.append(word)
        return out

    def script(self, text: str) -> bool:
        """Run ``&&``/``;`` lists, one per line; return the last status."""
        status = True
        for line in text.splitlines():
            if line.strip():
                status = self.and_list(line)
        return status

    def and_list(self, line: str) -> bool:
        """``a && b; c``: split where no quote is open."""
        lists: list[list[str]] = [[""]]
        quote = ""
        index = 0
        while index < len(line):
            char = line[index]
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == ";":
                lists.append([""])
                index += 1
                continue
            elif line.startswith("&&", index):
                lists[-1].append("")
                index += 2
                continue
            lists[-1][-1] += char
            index += 1
        status = True
        for commands in lists:
            for position, command in enumerate(commands):
                status = self.execute(self.words(command))
                if not status:
                    if self.errexit and position == len(commands) - 1:
                        raise _Exit(False)  # set -e: a failure not on the left of && ends the shell
                    break
        return status

    def execute(self, argv: list[str]) -> bool:
        name, args = argv[0], argv[1:]
        if posixpath.basename(name) in ("sh", "bash"):
            return self.shell(args)
        if name.startswith("./") or name.startswith("/w/"):
            return self.child(join(self.cwd, name), [])
        if "=" in name and not args:
            key, _, value = name.partition("=")
            self.vars[key] = value
            return True
        return getattr(self, "do_" + name.replace("-", "_"))(args)

    def shell(self, args: list[str]) -> bool:
        flags: set[str] = set()
        while args and args[0].startswith("-"):
            flags |= set(args.pop(0)[1:])
        if "c" in flags:
            child = Shell(self.model, self.fs, self.cwd, self.vars)
            child.errexit = "e" in flags
            try:
                return child.script(args[0])
            except _Exit as end:
                return end.status
        return self.child(join(self.cwd, args[0]), sorted(flags))

    def child(self, path: str, flags: list[str]) -> bool:
        source = self.fs.files.get(path)
        if source is None:
            raise BuildFails(f"{path}: not found")
        child = Shell(self.model, self.fs, self.cwd, {k: v for k, v in self.vars.items() if k in self.exported()})
        child.errexit = "e" in flags
        try:
            return child.script(self.model.context[source])
        except _Exit as end:
            return end.status

    def exported(self) -> set[str]:
        return set(self.vars)  # the generator exports nothing of its own; the RUN's environment is all there is

    def do_set(self, args: list[str]) -> bool:
        self.errexit = args[0] == "-e"
        return True

    def do_true(self, args: list[str]) -> bool:
        return True

    def do_echo(self, args: list[str]) -> bool:
        return True

    def do_cd(self, args: list[str]) -> bool:
        target = self.oldpwd if args == ["-"] else join(self.cwd, args[0])
        if target is None or not self.fs.is_dir(target):
            self.model.cd_failed = True
            return False
        self.oldpwd, self.cwd = self.cwd, target
        return True

    def do_pushd(self, args: list[str]) -> bool:
        previous = self.cwd
        if not self.do_cd(args):
            return False
        self.stack.append(previous)
        return True

    def do_popd(self, args: list[str]) -> bool:
        if not self.stack:
            return False
        self.oldpwd, self.cwd = self.cwd, self.stack.pop()
        return True

    def do_mkdir(self, args: list[str]) -> bool:
        self.fs.mkdirs(join(self.cwd, args[-1]))
        return True

    def do_rm(self, args: list[str]) -> bool:
        self.fs.remove(join(self.cwd, args[-1]))
        return True

    def do_cp(self, args: list[str]) -> bool:
        recursive, target_dir, no_target = False, None, False
        operands: list[str] = []
        index = 0
        while index < len(args):
            arg = args[index]
            index += 1
            if arg == "--":
                operands += args[index:]
                break
            if arg in ("--recursive", "--archive"):
                recursive = True
            elif arg.startswith("--target-directory="):
                target_dir = arg.split("=", 1)[1]
            elif arg.startswith("-") and len(arg) > 1:
                for position, letter in enumerate(arg[1:], 1):
                    if letter == "t":
                        target_dir = arg[position + 1:] or args[index]
                        index += 0 if arg[position + 1:] else 1
                        break
                    recursive |= letter in "rRa"
                    no_target |= letter == "T"
            else:
                operands.append(arg)
        if target_dir is not None:
            sources, dest, written = operands, join(self.cwd, target_dir), target_dir + "/"
            if not self.fs.is_dir(dest):
                return False  # cp: target is not a directory
        else:
            *sources, written = operands
            dest = join(self.cwd, written)
        ok = True
        for raw in sources:
            source = join(self.cwd, raw)
            if not self.fs.exists(source):
                ok = False
                continue
            if target_dir is not None or (not no_target and self.fs.is_dir(dest)):
                target = join(dest, posixpath.basename(source))
            elif written.endswith("/") and not self.fs.is_dir(source):
                ok = False  # cp FILE MISSING/: not a directory
                continue
            else:
                target = dest
            if not self.fs.exists(target) and not self.fs.is_dir(posixpath.dirname(target)):
                ok = False  # cp: cannot create regular file / directory: No such file or directory
                continue
            if self.fs.is_dir(source):
                if not recursive:
                    ok = False  # cp: -r not specified; omitting directory
                    continue
                if target == source:
                    ok = False  # cp -r a a/..: 'a' and 'a' are the same file, nothing copied
                    continue
                if target.startswith(source + "/"):
                    raise Unmodelled("cp -r a a/b: GNU copies part of the folder, then fails")
                self.fs.mkdirs(target)
                for sub in self.fs.subdirs(source):
                    self.fs.mkdirs(join(target, sub))
                for relative, held in self.fs.tree(source).items():
                    self.fs.put(join(target, relative), held)
            elif target == source:
                ok = False  # cp: 'a' and 'a' are the same file
            else:
                self.fs.put(target, self.fs.files[source])
        return ok


class _Exit(Exception):
    def __init__(self, status: bool):
        super().__init__(status)
        self.status = status


# -- the generator ------------------------------------------------------------

def quoted(draw, path: str, variables: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    """``path`` as a script might write it: plain, quoted, or through a variable that holds its head."""
    heads = [(name, value) for name, value in variables.items() if path == value or path.startswith(value + "/")]
    choice = draw(st.integers(0, 4))
    if heads and choice >= 2:
        name, value = draw(st.sampled_from(sorted(heads)))
        rest = path[len(value):]
        form = draw(st.sampled_from(['"${<N>}<R>"', '"$<N>"<R>', "${<N>}<R>", "${UNSET_<N>:-<V>}<R>",
                                     '"${UNSET_<N>:-$<N>}"<R>']))
        return form.replace("<N>", name).replace("<V>", value).replace("<R>", rest)
    if choice == 1:
        return f'"{path}"'
    if choice == 0 and path:
        return f"'{path}'"
    return path


@st.composite
def scripts(draw) -> str:  # type: ignore[no-untyped-def]
    """An install script: a list of commands whose folders exist when they run."""
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append("set -e")
    variables: dict[str, str] = {}
    folders = ["/opt", "/srv", "/usr/lib/py/vllm/ops", SCRIPTS, CTX]
    made = 0
    pushed = 0
    moved = False
    sources_file = [f"{CTX}/top.py", f"{CTX}/pkg/a.py", f"{CTX}/pkg/sub/c.py"]
    sources_dir = [f"{CTX}/pkg", f"{CTX}/pkg/sub"]
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(["cd", "pushd", "popd", "cd -", "var", "mkdir", "cp-file", "cp-dir", "cp-t",
                                     "cp-T", "rm", "set"]))
        if kind in ("cd", "pushd"):
            folder = draw(st.sampled_from(folders))
            lines.append(f"{kind} {quoted(draw, folder, variables)}")
            pushed += kind == "pushd"
            moved = True
        elif kind == "popd" and pushed:
            lines.append("popd")
            pushed -= 1
        elif kind == "cd -" and moved:
            lines.append("cd -")
        elif kind == "var":
            name = draw(st.sampled_from(["D", "SRC", "PKG"]))
            variables[name] = draw(st.sampled_from([*folders, CTX]))
            lines.append(f"{name}={variables[name]}")
        elif kind == "mkdir":
            made += 1
            folder = f"/opt/m{made}"
            lines.append(f"mkdir -p {quoted(draw, folder, variables)}")
            folders.append(folder)
        elif kind == "set":
            lines.append(draw(st.sampled_from(["set -e", "set +e"])))
        elif kind == "rm":
            lines.append(f"rm -rf {draw(st.sampled_from(['/opt/new.py', '/opt/newdir', '/opt/m1', f'{CTX}/pkg/b.py']))}")
        else:
            dest_folder = draw(st.sampled_from(folders))
            if kind == "cp-file":
                source = draw(st.sampled_from(sources_file))
                dest = draw(st.sampled_from([dest_folder + "/", f"{dest_folder}/new.py"]))
                flags = draw(st.sampled_from(["", "-f ", "-v ", "-fv ", "-- "]))
            elif kind == "cp-dir":
                source = draw(st.sampled_from(sources_dir))
                dest = draw(st.sampled_from([dest_folder + "/", f"{dest_folder}/newdir"]))
                flags = draw(st.sampled_from(["-r ", "-R ", "-a ", "-rf ", "--recursive ", "-av ", "", "-r -- "]))
            elif kind == "cp-t":
                source = draw(st.sampled_from(sources_file + sources_dir))
                lines.append(f"cp -r{draw(st.sampled_from(['t ', 't', ' -t ', ' --target-directory=']))}"
                             f"{dest_folder} {quoted(draw, source, variables)}")
                continue
            else:
                source = draw(st.sampled_from(sources_dir))
                lines.append(f"cp -rT {quoted(draw, source, variables)} {dest_folder}/newdir")
                continue
            lines.append(f"cp {flags}{quoted(draw, source, variables)} {quoted(draw, dest, variables)}")
    lines.append("true")
    return "\n".join(lines) + "\n"


@st.composite
def builds(draw) -> tuple[str, dict[str, str]]:  # type: ignore[no-untyped-def]
    """A Dockerfile and its scripts."""
    lines: list[str] = []
    script_files: dict[str, str] = {}
    global_arg = draw(st.booleans())
    if global_arg:
        lines.append("ARG GROOT=/srv/g")
    names: list[str] = []
    for index in range(draw(st.integers(1, 3))):
        name = f"st{index}"
        parent = draw(st.sampled_from(["base", *names]))
        lines.append(f"FROM {parent} AS {name}")
        has_root = False
        if global_arg and draw(st.booleans()):
            lines.append("ARG GROOT")
            has_root = True
        env: dict[str, str] = {}
        for _ in range(draw(st.integers(1, 5))):
            kind = draw(st.sampled_from(["env", "workdir", "copy", "copy-from", "run"]))
            if kind == "env":
                key = draw(st.sampled_from(["APP", "LIB"]))
                env[key] = draw(st.sampled_from(["/srv/app", "/opt/lib", "/usr/lib/py/vllm"]))
                lines.append(f"ENV {key}={env[key]}")
            elif kind == "workdir":
                lines.append(f"WORKDIR {draw(st.sampled_from(['/w', '/srv/app', 'rel', '${APP:-/srv/app}']))}")
            elif kind == "copy":
                source = draw(st.sampled_from(["pkg", "pkg/sub", "lib", "top.py", "pkg/a.py"]))
                choices = ["/opt/", "/srv/app/", "/usr/lib/py/vllm/", "copied/"]
                choices += [f"${{{k}}}/" for k in env] + (["${GROOT}/in/"] if has_root else [])
                if "." not in posixpath.basename(source):
                    choices += ["/opt/copied", "/srv/pkgcopy"]
                else:
                    choices += ["/opt/renamed.py"]
                lines.append(f"COPY {source} {draw(st.sampled_from(choices))}")
            elif kind == "copy-from" and names:
                reference = draw(st.sampled_from(names + [str(i) for i in range(len(names))]))
                source = draw(st.sampled_from(["/opt", "/srv", "/w/ctx/pkg", "/usr/lib/py/vllm"]))
                lines.append(f"COPY --from={reference} {source} {draw(st.sampled_from(['/from/', '/opt/from']))}")
            elif kind == "run":
                script = f"s{len(script_files)}.sh"
                script_files[f"scripts/{script}"] = draw(scripts())
                lines += [f"COPY pkg {CTX}/pkg", f"COPY top.py {CTX}/", f"COPY scripts {SCRIPTS}"]
                form = draw(st.sampled_from([
                    f"RUN cd {SCRIPTS} && ./{script}",
                    f'RUN sh -ec "cd {SCRIPTS} && ./{script}"',
                    f"RUN bash -xc 'cd {SCRIPTS}; ./{script}'",
                    f'RUN sh -e -c "cd {SCRIPTS} && sh {script}"',
                    f'RUN ["sh", "-c", "cd {SCRIPTS} && bash -e ./{script}"]',
                    f"RUN {SCRIPTS}/{script}",
                ]))
                lines.append(form)
        names.append(name)
    return "\n".join(lines) + "\n", script_files


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(builds())
def test_inspect_places_each_context_file_where_the_model_does(build: tuple[str, dict[str, str]]) -> None:
    dockerfile, script_files = build
    context = {**CONTEXT, **script_files}
    model = Model(context)
    try:
        expected = model.build(dockerfile)
    except BuildFails:
        assume(False)  # sh or Docker would stop the build: there is no image to compare
        return
    except Unmodelled:
        assume(False)
        return
    inspection = inspect_tree(MemoryTree({"Dockerfile": dockerfile, **context}),
                              SeriesOutline(directory=None, patches=()))  # type: ignore[arg-type]
    data = to_json(inspection)
    stops = [note for note in data["unread"] if note["kind"] == "stop"]
    # A cd into a folder that is not there: sh goes on elsewhere, patcher says the rest is unknown. Both or neither.
    assert bool(stops) == model.cd_failed, (dockerfile, script_files, stops)
    assume(not stops)
    found = {item["image_path"]: item["path"] for item in data["image"]}
    assert found == expected, (dockerfile, script_files)
    # The grammar is all understood: what is noted is at most a COPY --from of what only a base image holds.
    assert all(n["could_change"] is not None and "only its base image holds" in n["reason"]
               for n in data["unread"]), data["unread"]


def test_the_model_reads_the_vendor_shape() -> None:
    """The model itself, on a hand-written build: the copy into an existing folder and a script's cp."""
    context = {**CONTEXT, "scripts/s0.sh": f"set -e\ncd {CTX}\ncp -r pkg /usr/lib/py/vllm/\ncp top.py /opt/t.py\n"}
    image = Model(context).build(f"FROM base\nCOPY pkg {CTX}/pkg\nCOPY top.py {CTX}/\nCOPY scripts {SCRIPTS}\n"
                                 f"RUN cd {SCRIPTS} && ./s0.sh\n")
    assert image["/usr/lib/py/vllm/pkg/sub/c.py"] == "pkg/sub/c.py" and image["/opt/t.py"] == "top.py"
    assert shlex.split("a 'b c'") == ["a", "b c"]  # the generator's quoting is sh's
