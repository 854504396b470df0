"""Which files a Python helper of the build context writes or removes, read from its code with ``ast``.

Vendor install scripts run small Python programs that edit the base
image's files in place (``python3 ./patch_scheduler.py``). The reader
does not run them; it reads them, the way it reads the shell: every call
that writes a file (``open`` in a writing mode, ``Path.write_text``,
``os.replace``, ``shutil.copy``...) must name a path its code spells out
(a literal, a name bound once to one, f-strings, ``+``, ``os.path.join``
and ``Path`` of those, or an imported package's folder,
``os.path.dirname(vllm.__file__)`` or ``Path(vllm.__file__).parent``,
which lies wherever the image installed it: such a path starts with
``PACKAGE``). A program that runs other code (``subprocess``,
``os.system``, ``exec``, ``importlib``), writes where the reader cannot
work out, or does not parse gives None: it could change anything. Calls
into other modules' functions are taken not to write files.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from ..depth import parse_problem

_RUNS_CODE = frozenset({
    "exec", "eval", "compile", "__import__", "os.system", "os.popen", "os.fork", "os.forkpty", "os.startfile",
    "os.posix_spawn", "os.posix_spawnp", "pty.spawn", "runpy.run_path", "runpy.run_module",
    "importlib.import_module", "importlib.reload", "builtins.exec", "builtins.eval", "os.execv", "os.execve",
    "os.execl", "os.execle", "os.execlp", "os.execlpe", "os.execvp", "os.execvpe", "os.spawnl", "os.spawnle",
    "os.spawnlp", "os.spawnlpe", "os.spawnv", "os.spawnve", "os.spawnvp", "os.spawnvpe",
})
_RUNS_CODE_MODULES = ("subprocess.", "multiprocessing.", "ctypes.", "importlib.")
_OPENERS = frozenset({"open", "io.open", "codecs.open", "builtins.open", "os.fdopen"})
# function -> (index of the path written, index of the path removed) among its arguments
_FUNCTIONS: dict[str, tuple[int | None, int | None]] = {
    "os.remove": (None, 0), "os.unlink": (None, 0), "os.rmdir": (None, 0), "os.removedirs": (None, 0),
    "os.rename": (1, 0), "os.renames": (1, 0), "os.replace": (1, 0), "os.symlink": (1, None), "os.link": (1, None),
    "os.truncate": (0, None), "os.open": (0, None), "os.mknod": (0, None), "os.mkfifo": (0, None),
    "shutil.copy": (1, None), "shutil.copy2": (1, None), "shutil.copyfile": (1, None), "shutil.copytree": (1, None),
    "shutil.move": (1, 0), "shutil.rmtree": (None, 0), "shutil.unpack_archive": (1, None),
    "shutil.copyfileobj": (None, None),
}
# Functions that copy or move a file or folder to a new path: how each treats its destination (see Copy).
_COPIES = {"shutil.copy": "copy", "shutil.copy2": "copy", "shutil.copyfile": "copyfile",
           "shutil.copytree": "copytree", "shutil.move": "move", "os.rename": "rename", "os.replace": "rename",
           "os.renames": "renames", "os.symlink": "symlink", "os.link": "link"}
_PATH_METHODS = {"write_text": "write", "write_bytes": "write", "touch": "write", "symlink_to": "write",
                 "hardlink_to": "write", "unlink": "remove", "rmdir": "remove"}
_SYSTEM_EXIT = frozenset({"SystemExit", "builtins.SystemExit"})
_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit", "builtins.exit", "builtins.quit"})
# The functions and Path methods that only remove: how each removes (see Removal).
_REMOVERS = {"os.remove": "file", "os.unlink": "file", "os.rmdir": "folder", "os.removedirs": "folder",
             "shutil.rmtree": "tree", "unlink": "file", "rmdir": "folder"}
_PATH_ONLY_METHODS = frozenset({"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"})
_PATH_CONSTRUCTORS = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"})
# A program that writes a file (or ends with a failure) names one of these (or reaches names through one of the
# last few): one that names none of them is not parsed at all.
_WORDS = re.compile(
    r"\b(?:exit|_exit|quit|raise|open|fdopen|write_text|write_bytes|remove|removedirs|unlink|renames?|replace|rmdir|rmtree|copy\w*|move|"
    r"touch|symlink\w*|link|hardlink_to|truncate|mknod|mkfifo|mkdir|makedirs|extract\w*|unpack_archive|system|popen|"
    r"spawn\w*|"
    r"posix_spawnp?|exec[lv]?p?e?|eval|compile|fork\w*|startfile|subprocess|multiprocessing|ctypes|importlib|"
    r"import_module|runpy|pty|fileinput|getattr|__dict__|vars|globals|locals|__builtins__|__import__)\b")


# The start of a path inside an imported package's folder: PACKAGE + "vllm/core/scheduler.py" is that file of the
# installed vllm, in whichever site-packages the image has it. No string of a program can hold it (see constant).
PACKAGE = "\x02"
# The program's own folder: ``__file__`` is SCRIPT + "/" + SCRIPT_NAME, so that ``os.path.dirname(__file__)`` is
# SCRIPT (the folder the shell ran it from, which the caller knows). No string of a program can hold it.
SCRIPT = "\x03"
SCRIPT_NAME = "\x04"
# ``sys.argv[N]``: ARGUMENT + N + ARGUMENT, at the start of a path only (the caller knows the command line).
ARGUMENT = "\x05"
_MARKERS = frozenset({PACKAGE, SCRIPT, SCRIPT_NAME, ARGUMENT})
_PATH_WRAPPERS = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "str", "os.fspath"})
_PATH_RETURNING = frozenset({"resolve", "absolute", "joinpath"})  # Path methods that give a path


@dataclass(frozen=True)
class PythonEffects:
    """The paths a program writes and removes, as its code spells them (relative ones from its directory)."""

    writes: tuple[str, ...]
    removes: tuple[str, ...]
    copies: tuple[Copy, ...] = ()
    folders: tuple[Folder, ...] = ()  # the folders it makes (os.makedirs, Path.mkdir), where it spells them
    removals: tuple[Removal, ...] = ()  # what it removes (not by moving it), where and how
    own_writes: tuple[str, ...] = ()  # the writes no copy or move in ``copies`` accounts for
    fails_at: int | None = None  # the line of the statement that always ends the program with a failure
    # The files it opens to read (open(F), Path(F).read_text()...), as spelled; "" for one the reader cannot work
    # out. What it writes after reading a file of the build may be that file by hand ('dst.write(src.read())').
    reads: tuple[str, ...] = ()


@dataclass(frozen=True)
class Copy:
    """A call that copies or moves ``source`` to ``destination``, both as the code spells them.

    ``how``: ``copy`` and ``move`` put a file into a folder that stands at
    the destination, ``copyfile`` and ``rename`` write the destination
    itself, ``copytree`` and ``renames`` also make its missing folders.
    ``certain``: the call is a statement of the module's top level (or of
    its ``if __name__ == "__main__":`` or a ``with`` there), so it runs
    once the program gets that far; any other may not run at all.
    """

    how: str
    source: str
    destination: str
    certain: bool
    at: tuple[int, int] = (0, 0)  # the call's line and column: the copies and folders run in this order


@dataclass(frozen=True)
class Removal:
    """A call that removes ``path``: ``how`` is ``file`` (``os.remove``, ``Path.unlink``: not a folder),
    ``folder`` (``os.rmdir``, ``os.removedirs``, ``Path.rmdir``: an empty one) or ``tree`` (``shutil.rmtree``).
    ``certain`` and ``at`` as for a Copy: the removals, copies and folders run in the order of ``at``.
    ``missing_ok``: nothing there is no error (``Path.unlink(missing_ok=True)``, ``rmtree(P, ignore_errors=True)``);
    False: FileNotFoundError; None: the reader does not weigh it (an ``onerror`` handler, a value it cannot tell)."""

    path: str
    how: str
    certain: bool
    at: tuple[int, int]
    missing_ok: bool | None = True


@dataclass(frozen=True)
class Folder:
    """A call that makes the folder ``path``: ``parents``, those above it too (``os.makedirs``, ``Path.mkdir(
    parents=True)``); ``exist_ok``, a folder already there is no error (None: a value the reader does not weigh).
    CPython raises where the folder (or a file) stands already, or, without ``parents``, where the folder above is
    not there. ``certain`` and ``at`` as for a Copy."""

    path: str
    at: tuple[int, int]
    parents: bool = True
    exist_ok: bool | None = True
    certain: bool = False


NOTHING = PythonEffects((), ())


class _Unknown(Exception):
    """The program could write where the reader cannot tell."""


@lru_cache(maxsize=64)
def python_effects(source: str) -> PythonEffects | None:
    """The files ``source`` writes or removes, or None when that cannot be read from its code."""
    if not _WORDS.search(source):
        return NOTHING
    if parse_problem(source, strings_nest=False) is not None:  # vendor Python: too large or deep to parse safely
        return None
    try:
        tree = ast.parse(source.removeprefix("\ufeff"))  # CPython skips a UTF-8 byte-order mark, as it reads a file
    except (SyntaxError, ValueError, RecursionError):
        return None
    try:
        reader = _Reader(tree)
        return reader.effects()
    except (_Unknown, RecursionError):
        return None


# A formatted path longer than this is none the file system opens (PATH_MAX): the reader stops building it, so a
# hostile helper's '{0}{0}{0}...'.format(big) cannot fill memory.
_MAX_FORMATTED = 4096


def _bounded(parts: list[str]) -> str | None:
    """The parts joined, or None past _MAX_FORMATTED characters."""
    return "".join(parts) if sum(map(len, parts)) <= _MAX_FORMATTED else None


def _percent_format(template: str, values: list[str]) -> str | None:
    """``template % values`` where each conversion is ``%s`` (or ``%%``) and the counts agree, else None (CPython
    raises, or formats in a way the reader does not follow)."""
    parts = re.split(r"(%[\s\S]?)", template)  # a '%' ending the template is a part of its own: CPython refuses it
    out, given = [], iter(values)
    for part in parts:
        if part == "%%":
            out.append("%")
        elif part == "%s":
            value = next(given, None)
            if value is None:
                return None
            out.append(value)
        elif part.startswith("%") and len(part) == 2 or part == "%":
            return None
        else:
            out.append(part)
    return _bounded(out) if next(given, None) is None else None


def _brace_format(template: str, values: list[str], named: dict[str, str]) -> str | None:
    """``template.format(*values, **named)`` for plain ``{}``, ``{0}`` and ``{name}`` fields, else None."""
    import string
    out, auto = [], 0
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return None
    for literal, field, spec, conversion in fields:
        out.append(literal)
        if field is None:
            continue
        if spec or conversion:
            return None
        if field == "":
            if auto >= len(values):
                return None
            out.append(values[auto])
            auto += 1
        elif field.isascii() and field.isdigit() and len(field) <= 18 and int(field) < len(values):
            out.append(values[int(field)])  # (CPython refuses int() of thousands of digits)
        elif field in named:
            out.append(named[field])
        else:
            return None
    return _bounded(out)


def _pure(path: str) -> str:
    """``path`` as a ``pathlib`` path spells it: no empty or ``.`` parts, no slash at the end (``..`` stays)."""
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return ("/" if path.startswith("/") else "") + "/".join(parts) or "."


def _dirname(path: str) -> str:
    """``os.path.dirname(path)``, where a folder the marker at the start of ``path`` stands for is climbed out of
    as ``..``: the dirname of ``PACKAGE + "vllm"`` is the site folder, not ``""`` (the folder the program runs in)."""
    if path[:1] in _MARKERS and ("/" not in path or posixpath.basename(path) == ".."):
        return path + "/.."
    return posixpath.dirname(path)


class _Reader:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.argv_changed: bool | None = None  # whether the program changes sys.argv (worked out when asked)
        self.aliases: dict[str, str] = {}  # local name -> dotted name it imports
        self.bound: dict[str, list[ast.expr]] = {}  # name -> every value bound to it (None: not a plain value)
        self.defined: set[str] = set()  # the names of the functions and classes the program defines
        plain: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.aliases[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        self.bound.setdefault(target.id, []).append(node.value)
                        plain.add(id(target))
        unknown = ast.Constant(None)
        for node in ast.walk(tree):
            # Any other binding (a loop variable, an argument, +=, a with target) is not a constant.
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in plain:
                self.bound.setdefault(node.id, []).append(unknown)
            elif isinstance(node, ast.arg):
                self.bound.setdefault(node.arg, []).append(unknown)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.setdefault(node.name, []).append(unknown)
                self.defined.add(node.name)

    def effects(self) -> PythonEffects:
        writes: list[str] = []
        removes: list[str] = []
        self.own_writes: list[str] = []
        self.reads: list[str] = []
        self.copies: list[Copy] = []
        self.removals: list[Removal] = []
        folders: list[Folder] = []
        self.certain = _statement_calls(self.tree)
        self.made: list[ast.Call] = []
        self.refuse_passed_writers()
        ends = self.program_end()
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call) or node.lineno > ends:
                continue  # after the statement that ends the program, nothing runs (nor is any function made)
            name = self.dotted(node.func)
            if name in ("os.chdir", "os.fchdir"):
                raise _Unknown(name)  # relative paths then start from where it went
            stored = self.stored_method(node)
            if stored is not None:
                if id(node) in self.certain:  # the call stands where the helper's own call stands
                    self.certain.add(id(stored))
                self.method(stored, writes, removes)  # save = Path(F).write_text; save(TEXT) writes F
                continue
            if name is not None and (name in _RUNS_CODE or name.startswith(_RUNS_CODE_MODULES)):
                raise _Unknown(name)
            if name in ("getattr", "builtins.getattr") and len(node.args) > 1 and self.constant(node.args[1]) is None:
                raise _Unknown("getattr with a name the reader cannot work out")
            if name in ("vars", "globals", "locals") or (isinstance(node.func, ast.Subscript)):
                raise _Unknown("a function looked up at run time")
            if name in _OPENERS and name != "os.fdopen":
                if self.writing_mode(node, 1):
                    writes.append(self.path(node.args[0] if node.args else _keyword(node, "file")))
                    self.own_writes.append(writes[-1])
                else:
                    self.read(node.args[0] if node.args else _keyword(node, "file"))
                continue
            made = node.args[0] if name in ("os.mkdir", "os.makedirs") and node.args else \
                node.func.value if isinstance(node.func, ast.Attribute) and node.func.attr == "mkdir" and \
                self.is_path(node.func.value) else None
            if made is not None and (folder := self.constant(made)) is not None:
                folders.append(self.folder(node, name, folder))
            if name in _FUNCTIONS:
                written, removed = _FUNCTIONS[name]
                copied = name in _COPIES and self.copy(node, _COPIES[name], _argument(node, 0), _argument(node, 1),
                                                       plain=len(node.args) == 2)
                if written is not None:
                    writes.append(self.path(_argument(node, written)))
                    if name in _COPIES and not copied:
                        # What it copies the reader cannot work out (a loop's file, a listing): maybe a context file.
                        self.copies.append(Copy("other", "", writes[-1], id(node) in self.certain,
                                                (node.lineno, node.col_offset)))
                    elif not copied:  # a copy's destination is the copy's to place
                        self.own_writes.append(writes[-1])
                if removed is not None:
                    removes.append(self.path(_argument(node, removed)))
                    if name in _REMOVERS:
                        self.remove(node, removes[-1], _REMOVERS[name])
                continue
            if name == "fileinput.input" or name == "fileinput.FileInput":
                if _keyword(node, "inplace") is not None:
                    raise _Unknown(name)
                continue
            if isinstance(node.func, ast.Attribute):
                self.method(node, writes, removes)
        return PythonEffects(tuple(dict.fromkeys(writes)), tuple(dict.fromkeys(removes)), tuple(self.copies),
                             tuple(folders), tuple(self.removals), tuple(dict.fromkeys(self.own_writes)),
                             self.fails_at(ends), tuple(dict.fromkeys(self.reads)))

    def program_end(self) -> int:
        """The last line that can run: that of the first statement of the module (or of its ``__main__`` block)
        that always ends the program (``sys.exit``, ``exit``, ``quit``, ``os._exit``, ``raise``), else any."""
        bodies = [self.tree.body]
        while bodies:
            for statement in bodies.pop(0):
                if isinstance(statement, ast.Raise) or isinstance(statement, ast.Expr) and isinstance(
                        statement.value, ast.Call) and self.dotted(statement.value.func) in _EXITS:
                    return statement.end_lineno or statement.lineno
                if isinstance(statement, ast.If) and _is_main_test(statement.test):
                    bodies.append(statement.body)
        return 1 << 30

    def fails_at(self, ends: int) -> int | None:
        """``ends`` when the statement there ends the program with a failure (``raise``, ``sys.exit(N)`` with N
        a number other than 0 or a text) and no other way out of it comes before (an exit or a raise anywhere
        above it, in a function or a condition, could end the program first, maybe with success)."""
        ending = next((node for node in ast.walk(self.tree) if isinstance(node, ast.stmt)
                       and (node.end_lineno or node.lineno) == ends and node.lineno <= ends
                       and (isinstance(node, ast.Raise) or isinstance(node, ast.Expr))), None)
        if ending is None:
            return None
        if isinstance(ending, ast.Raise) and ending.exc is not None and self.dotted(ending.exc) in _SYSTEM_EXIT:
            return None  # raise SystemExit: it succeeds
        if isinstance(ending, ast.Raise) and isinstance(ending.exc, ast.Call) and \
                self.dotted(ending.exc.func) in _SYSTEM_EXIT:
            ending = ast.Expr(ending.exc, lineno=ending.lineno)  # raise SystemExit(N): as sys.exit(N)
        if isinstance(ending, ast.Expr):
            call = ending.value
            if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
                return None  # exit() succeeds
            code = call.args[0]
            if not isinstance(code, ast.Constant) or code.value in (0, None, False) or code.value is True:
                return None  # exit(0), exit(None), or a value the reader does not weigh
        for node in ast.walk(self.tree):
            if getattr(node, "lineno", ends) < ends and (isinstance(node, (ast.Raise, ast.Try)) or isinstance(
                    node, ast.Call) and self.dotted(node.func) in _EXITS):
                return None
        return ending.lineno

    def read(self, node: ast.expr | None) -> None:
        """Keep a file the program opens to read: its path as spelled, or "" where the reader cannot work it out
        (that is no reason to give up on the program: only what it writes is)."""
        value = self.constant(node) if node is not None else None
        self.reads.append(value if value is not None else "")

    def remove(self, node: ast.Call, path: str, how: str, method: bool = False) -> None:
        if how == "tree":  # shutil.rmtree(path, ignore_errors=False, onerror=None, *, onexc=None)
            handled = _keyword(node, "onerror") or _keyword(node, "onexc") or _argument(node, 2)
            missing_ok = None if handled else self.truth(_keyword(node, "ignore_errors") or _argument(node, 1), False)
        elif method and how == "file":  # Path.unlink(missing_ok=False)
            missing_ok = self.truth(_keyword(node, "missing_ok") or _argument(node, 0), False)
        else:  # os.remove, os.unlink, os.rmdir, os.removedirs, Path.rmdir
            missing_ok = False
        self.removals.append(Removal(path, how, id(node) in self.certain, (node.lineno, node.col_offset), missing_ok))

    def copy(self, node: ast.Call, how: str, source: ast.expr | None, destination: ast.expr | None, *,
             plain: bool) -> bool:
        """Keep a copy whose source the code spells out; whether it was kept (else its destination is a write).

        ``plain``: the call passes the paths alone by position. One with other arguments than the two paths
        (``ignore=``, ``copy_function=``...) is kept as ``how``
        ``other``: what it copies the reader does not work out. ``dirs_exist_ok=True`` makes a copytree a merge.
        """
        spelled = self.constant(source) if source is not None else None
        if spelled is None:
            return False
        extra = {k.arg for k in node.keywords}
        if how == "copytree" and extra == {"dirs_exist_ok"}:
            merge = self.truth(_keyword(node, "dirs_exist_ok"))
            how, extra = ("merge" if merge else "copytree" if merge is False else "other"), set()
        target = self.constant(destination) if destination is not None else None
        if extra or target is None or not plain:
            how, target = "other", target or ""
        self.copies.append(Copy(how, spelled, target, id(node) in self.certain, (node.lineno, node.col_offset)))
        return True

    def folder(self, node: ast.Call, name: str | None, path: str) -> Folder:
        """``os.mkdir(P)``, ``os.makedirs(P, mode, exist_ok)`` or ``Path(P).mkdir(mode, parents, exist_ok)``."""
        at, certain = (node.lineno, node.col_offset), id(node) in self.certain
        if name == "os.mkdir":
            return Folder(path, at, parents=False, exist_ok=False, certain=certain)
        exist_ok = _keyword(node, "exist_ok") or _argument(node, 2)
        if name == "os.makedirs":
            return Folder(path, at, parents=True, exist_ok=self.truth(exist_ok, False), certain=certain)
        parents = self.truth(_keyword(node, "parents") or _argument(node, 1), False)
        # parents=VALUE the reader does not weigh: taken to make them, as before (no failure claimed)
        return Folder(path, at, parents=parents is not False, exist_ok=self.truth(exist_ok, False), certain=certain)

    def truth(self, node: ast.expr | None, absent: bool | None = None) -> bool | None:
        """A True or False the code spells (``absent``: the default, where it spells none), else None."""
        if node is None:
            return absent
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None

    def refuse_passed_writers(self) -> None:
        """Raise _Unknown where a function that writes or removes files is handed on as a value (in a list, a
        conditional, a name bound more than once, ``getattr(*spec)``) rather than called or bound once to a name,
        which ``dotted`` follows: the reader would not know which call runs it."""
        nodes = list(ast.walk(self.tree))
        calls = [node for node in nodes if isinstance(node, ast.Call)]
        called = {id(call.func) for call in calls}
        followed = {id(values[0]) for values in self.bound.values() if len(values) == 1}
        for call in calls:
            name = self.dotted(call.func)
            if name in _FUNCTIONS:
                # copytree(..., copy_function=shutil.copy2) and the like: the copy's own reading covers what it does.
                followed |= {id(keyword.value) for keyword in call.keywords}
            elif name in ("getattr", "builtins.getattr") and any(isinstance(a, ast.Starred) for a in call.args):
                raise _Unknown("getattr with arguments the reader cannot work out")
        for node in nodes:
            if not isinstance(node, (ast.Name, ast.Attribute)) or id(node) in called or id(node) in followed \
                    or not isinstance(node.ctx, ast.Load):
                continue
            if isinstance(node, ast.Name) and node.id in self.bound:
                continue  # a name of the helper's own: what it holds is judged where it is bound
            name = self.dotted(node)
            if name is not None and (name in _FUNCTIONS or name in _OPENERS):
                raise _Unknown(f"{name} handed on as a value")

    def stored_method(self, node: ast.Call) -> ast.Call | None:
        """A call through a name bound once to a method of an object built here (``save = Path(F).write_text``):
        the same call made on that method, or None when the name is bound to something else (``rm = os.remove``)."""
        if not isinstance(node.func, ast.Name):
            return None
        values = self.bound.get(node.func.id, [])
        if len(values) != 1 or not isinstance(values[0], ast.Attribute):
            return None
        attribute = values[0].attr
        if attribute in ("extractall", "extract") or attribute in _PATH_ONLY_METHODS or self.is_path(values[0].value) \
                or self.dotted(values[0]) is None:
            # A method of an object built here: read as that method's call would be, not as the builtin or module
            # function the name may shadow (open = gzip.GzipFile(F).open is no builtin open).
            made = ast.copy_location(ast.Call(func=values[0], args=node.args, keywords=node.keywords), node)
            self.made.append(made)  # kept alive, so that no later node takes its id (self.certain holds ids)
            return made
        return None

    def method(self, node: ast.Call, writes: list[str], removes: list[str]) -> None:
        """``Path(...).write_text()``, ``.unlink()``, ``.open("w")``, ``.rename(x)``, ``.extractall()``..."""
        assert isinstance(node.func, ast.Attribute)
        attribute, receiver = node.func.attr, node.func.value
        if attribute in ("extractall", "extract"):
            raise _Unknown(attribute)
        if attribute in ("symlink_to", "hardlink_to") and self.is_path(receiver):
            # Path(LINK).symlink_to(TARGET): os.symlink(TARGET, LINK), the link made at the receiver.
            writes.append(self.path(receiver))
            how = "symlink" if attribute == "symlink_to" else "link"
            if not self.copy(node, how, _argument(node, 0), receiver, plain=len(node.args) == 1):
                self.own_writes.append(writes[-1])
        elif attribute in _PATH_METHODS and self.is_path(receiver):
            if _PATH_METHODS[attribute] == "write":
                writes.append(self.path(receiver))
                self.own_writes.append(writes[-1])
            else:
                removes.append(self.path(receiver))
                self.remove(node, removes[-1], _REMOVERS[attribute], method=True)
        elif attribute in _PATH_ONLY_METHODS:
            raise _Unknown(f"{attribute} on a path the reader cannot work out")  # only a path has these
        elif attribute == "open" and self.is_path(receiver) and self.writing_mode(node, 0):
            writes.append(self.path(receiver))
            self.own_writes.append(writes[-1])
        elif attribute in ("open", "read_text", "read_bytes") and self.is_path(receiver):
            self.read(receiver)
        elif attribute in ("rename", "replace") and len(node.args) == 1 and self.is_path(receiver):
            removes.append(self.path(receiver))
            writes.append(self.path(node.args[0]))
            if not self.copy(node, "rename", receiver, node.args[0], plain=not node.keywords):
                self.own_writes.append(writes[-1])
        elif attribute in ("rename", "replace") and self.is_path(receiver):
            raise _Unknown(f"{attribute} with arguments the reader does not follow")  # .rename(target=...)

    def is_path(self, node: ast.expr) -> bool:
        """Whether ``node`` is a ``pathlib`` path (built here, or a name bound to one)."""
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_RETURNING:
                return self.is_path(node.func.value)  # Path(...).resolve(), .joinpath(...)
            return self.dotted(node.func) in _PATH_CONSTRUCTORS
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return self.is_path(node.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self.is_path(node.left)
        if isinstance(node, ast.Name):
            values = self.bound.get(node.id, [])
            return len(values) == 1 and self.is_path(values[0])
        return False

    def writing_mode(self, node: ast.Call, index: int) -> bool:
        mode = node.args[index] if len(node.args) > index else _keyword(node, "mode")
        if mode is None:
            return False
        value = self.constant(mode)
        if value is None:
            raise _Unknown("open() with a mode the reader cannot work out")
        return any(c in value for c in "wax+")

    def path(self, node: ast.expr | None) -> str:
        value = self.constant(node) if node is not None else None
        argument = re.match(f"{ARGUMENT}[0-9]+{ARGUMENT}", value) if value is not None else None
        rest = value[argument.end():] if value is not None and argument is not None else value
        if value is None or rest is None or PACKAGE in value[1:] or SCRIPT in value[1:] \
                or SCRIPT_NAME in value[:2] + value[3:] or ARGUMENT in rest \
                or value.startswith(PACKAGE) and posixpath.normpath(value[1:]).startswith(".."):
            # A package's folder inside another path, or climbed out of: where that is, only the image knows.
            raise _Unknown("a path the reader cannot work out")
        return value

    def constant(self, node: ast.expr, depth: int = 0) -> str | None:
        """The string ``node`` always evaluates to, or None."""
        if depth > 20:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value if not _MARKERS & set(node.value) else None
        if isinstance(node, ast.Name):
            values = self.bound.get(node.id, [])
            if node.id == "__file__" and not values:
                return f"{SCRIPT}/{SCRIPT_NAME}"
            return self.constant(values[0], depth + 1) if len(values) == 1 else None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int \
                and 0 <= node.slice.value < 100 and self.is_argv(node.value):
            return f"{ARGUMENT}{node.slice.value}{ARGUMENT}"  # the program's command line, which the caller knows
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    if value.format_spec is not None or value.conversion not in (-1, 115):
                        return None
                    text = self.constant(value.value, depth + 1)
                else:
                    text = self.constant(value, depth + 1)
                if text is None:
                    return None
                parts.append(text)
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and not self.is_path(node.left):
            # "%s/ops/x.py" % folder: printf-style, with %s (and %%) only; a tuple of values or one value.
            template = self.constant(node.left, depth + 1)
            values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            texts = [self.constant(v, depth + 1) for v in values]
            if template is None or any(t is None for t in texts):
                return None
            return _percent_format(template, texts)  # type: ignore[arg-type]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
                and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
            # "{}/ops/{}".format(folder, name): plain fields only (no conversion or spec), by order, number or name.
            template = self.constant(node.func.value, depth + 1)
            texts = [self.constant(a, depth + 1) for a in node.args]
            named = {k.arg: self.constant(k.value, depth + 1) for k in node.keywords if k.arg is not None}
            if template is None or any(t is None for t in [*texts, *named.values()]) or \
                    len(named) != len(node.keywords):
                return None
            return _brace_format(template, texts, named)  # type: ignore[arg-type]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
            # str + str joins texts, Path / str joins paths; str / str and Path + str are a TypeError.
            if isinstance(node.op, ast.Add) == (self.is_path(node.left) or self.is_path(node.right)):
                return None
            left, right = self.constant(node.left, depth + 1), self.constant(node.right, depth + 1)
            if left is None or right is None:
                return None
            return left + right if isinstance(node.op, ast.Add) else _pure(posixpath.join(left, right))
        if isinstance(node, ast.Attribute) and node.attr == "parent":  # Path(vllm.__file__).parent
            folder = self.package_folder(node.value, depth + 1)
            if folder is None and self.is_path(node.value):  # Path(__file__).parent
                inner = self.constant(node.value, depth + 1)
                return (_dirname(inner) or ".") if inner is not None else None  # Path('x.py').parent is '.'
            return folder
        if isinstance(node, ast.Call):
            name = self.dotted(node.func)
            if name in ("os.path.dirname", "posixpath.dirname") and len(node.args) == 1 and not node.keywords:
                folder = self.package_folder(node.args[0], depth + 1)
                if folder is not None:
                    return folder
                inner = self.constant(node.args[0], depth + 1)
                return _dirname(inner) if inner is not None else None
            if name in _PATH_WRAPPERS and len(node.args) == 1 and not node.keywords:
                # The shell's reading makes a relative path absolute from the folder the program runs in, as
                # abspath does; realpath's links are the build's, which it follows as it reads the path.
                return self.constant(node.args[0], depth + 1)
            joined: list[ast.expr] = []
            if name in ("os.path.join", "posixpath.join", *_PATH_CONSTRUCTORS) and not node.keywords:
                joined = node.args
            elif isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_RETURNING and not node.keywords \
                    and self.is_path(node.func.value):
                # The path itself (resolve() and absolute() only add the folder a relative one is in), or joined.
                joined = [node.func.value, *node.args]
            if joined:
                parts_ = [self.constant(a, depth + 1) for a in joined]
                if any(p is None for p in parts_):
                    return None
                text = posixpath.join(*parts_)  # type: ignore[arg-type]
                return text if name in ("os.path.join", "posixpath.join") else _pure(text)
        return None

    def is_argv(self, node: ast.expr) -> bool:
        """Whether ``node`` is ``sys.argv`` as the interpreter set it: named through an import never bound to
        anything else, and never assigned, subscripted into or changed by a method anywhere in the program."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in self.bound or self.dotted(node) != "sys.argv":
            return False
        if self.argv_changed is None:
            self.argv_changed = any(self.dotted(changed) == "sys.argv" for changed in map(_changed, ast.walk(self.tree))
                                    if changed is not None)
        return not self.argv_changed

    def package_folder(self, node: ast.expr, depth: int) -> str | None:
        """The folder of the package whose ``__file__`` ``node`` is (through ``abspath``, ``Path``, ``.resolve()``):
        ``PACKAGE`` and its dotted name as a path. None for anything else."""
        while depth <= 20 and isinstance(node, ast.Call) and len(node.args) <= 1 and not node.keywords:
            if node.args and self.dotted(node.func) in _PATH_WRAPPERS | _PATH_CONSTRUCTORS:
                node, depth = node.args[0], depth + 1
            elif not node.args and isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute"):
                node, depth = node.func.value, depth + 1
            else:
                return None
        if not isinstance(node, ast.Attribute) or node.attr != "__file__":
            return None
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        # Only a module the program imports and never binds to anything else: 'import vllm', 'import vllm.x as x'.
        if not isinstance(root, ast.Name) or root.id not in self.aliases or root.id in self.bound:
            return None
        module = self.dotted(node.value)
        return PACKAGE + module.replace(".", "/") if module is not None else None

    def dotted(self, node: ast.expr, depth: int = 0, following: frozenset[str] = frozenset()) -> str | None:
        """The dotted name a call goes to, with import aliases resolved (``sh.copy`` -> ``shutil.copy``).

        A name bound once to another name or attribute (``rm = os.remove``)
        or to ``getattr`` of a constant name is followed to what it names;
        inside its own value (``logging = logging.getLogger(...)``) it is the
        name it had before, the import. A chain of names longer than the
        reader follows is unknown: the call could be a write.
        """
        if depth > 20:
            raise _Unknown("a call through more names than the reader follows")
        if isinstance(node, ast.Name):
            values = self.bound.get(node.id, [])
            if len(values) == 1 and isinstance(values[0], (ast.Name, ast.Attribute, ast.Call)) \
                    and node.id not in following:
                found = self.dotted(values[0], depth + 1, following | {node.id})
                if found is not None:
                    return found
            if node.id in self.aliases and node.id in self.defined:
                # 'from shutil import copy' and 'def copy(...)' (or 'class shutil'): which one a call reaches
                # depends on the order the program binds them in.
                raise _Unknown(f"{node.id} is imported and defined as well")
            if node.id in self.defined:
                return None  # the program's own function or class ('class shutil:' is no module)
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value, depth + 1, following)
            return f"{base}.{node.attr}" if base is not None else None
        if isinstance(node, ast.Call) and len(node.args) >= 2 \
                and self.dotted(node.func, depth + 1, following) in ("getattr", "builtins.getattr"):
            base, attribute = self.dotted(node.args[0], depth + 1, following), self.constant(node.args[1])
            return f"{base}.{attribute}" if base is not None and attribute is not None else None
        return None


_LIST_METHODS = frozenset({"append", "insert", "extend", "pop", "remove", "clear", "reverse", "sort"})


def _changed(node: ast.AST) -> ast.expr | None:
    """What ``node`` changes in place: the target of an assignment or ``del`` (``x = ``, ``x.y = ``), the object
    subscripted into (``x[1] = ``), the list a method of its own changes (``x.append(...)``); else None."""
    if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
        return node
    if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LIST_METHODS:
        return node.func.value
    return None


def _statement_calls(tree: ast.Module) -> set[int]:
    """The calls that are whole statements of the module's top level, of ``if __name__ == "__main__":`` there, or
    of a ``with`` in those: each runs once the program reaches it (an exception before it stops the program)."""
    found: set[int] = set()
    bodies = [tree.body]
    while bodies:
        for statement in bodies.pop():
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                found.add(id(statement.value))
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                bodies.append(statement.body)
            elif isinstance(statement, ast.If) and _is_main_test(statement.test):
                bodies.append(statement.body)
    return found


def _is_main_test(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__" \
        and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and len(test.comparators) == 1 \
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__"


def _argument(node: ast.Call, index: int) -> ast.expr | None:
    return node.args[index] if len(node.args) > index else None


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)
