"""What ``cp``, ``install``, ``mv``, ``ln``, ``rsync``, ``rm``, ``mkdir`` and ``touch`` do to the image, as GNU coreutils do it.

Options are read as each program reads them (``tool_options``: clusters
such as ``-rf``, long options with ``=`` or a separate value, options after
operands, ``--`` ending them). An option that changes which files land where and that is
not understood makes the whole command unread, never guessed. Where the
answer depends on whether a path of the base image exists (``cp -r SRC
DEST`` copies into DEST only if DEST is a folder), the build's own folders
decide. For the base image's, a trailing ``/`` (or ``.``) means an existing
folder; otherwise a folder is copied as DEST itself (DEST is taken not to
exist), a file named like ``x.py`` copied to a name without a dot goes into
it, and a file keeps DEST as its name; each such reading is noted as assumed.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Callable, Literal

from .image_fs import ImageFS, Kind, Placement, Step, normalise, under
from .shell_words import is_known
from .tool_options import Options, read_options

if TYPE_CHECKING:
    from .install_script import CommandContext, Shell


# -- the copy itself -------------------------------------------------------

def transfer(shell: "Shell", ctx: "CommandContext", command: str, sources: list[str], destination: str, *,
             recursive: bool, into: bool | None, move: bool = False, link: bool = False,
             no_clobber: str | None = None, written: str | None = None, dangling: bool = False,
             through: bool | None = None, recorded: bool = True, backup: Backup | None = None,
             keep_link: bool = False, keep_inner_links: bool = False) -> bool:
    """Copy (or move, or link) image paths ``sources`` to ``destination``, as ``command`` would; False if it fails.

    ``into`` True: ``destination`` is a folder to copy into (``-t``, several
    sources); False: it is the new name (``-T``); None: it depends on what
    stands there. ``written`` is the destination as the script wrote it (its
    trailing slash counts). ``dangling``: a source that does not exist is
    no failure (``ln -s`` makes a link to it all the same). ``through``: a
    symbolic link at the destination is written through (``cp``), not
    replaced (``mv``, ``install``, ``rsync``); by default, unless moving. ``recorded`` False: the command's
    copy is in the script's record already (a link ``mv`` moves is made again at its new name). ``backup``:
    a file about to be replaced is kept under a backup name first (``-b``, ``--backup``, ``-S``).
    ``keep_link``: a source that is a symbolic link is copied as the link (``cp -P``, ``-d``, ``-a``, and ``-r``
    without ``-L`` or ``-H``), not as what it leads to; ``keep_inner_links``: so are the links inside a folder it
    copies (``cp -r`` without ``-L``, ``mv``). A relative link then leads where its text leads from its new folder.
    """
    fs = shell.build.fs
    written = destination if written is None else written
    destination = normalise(destination)
    step = Step(shell.file, ctx.line, command, ctx.hides, ctx.stops_on_error, shell.build.stage, shell.build.tick())
    if recorded:
        shell.record_copy(ctx, sources, written, recursive)
    through = not move if through is None else through
    ok = True
    for raw in sources:
        contents = raw.endswith("/.")  # cp -r SRC/. DEST: what is in SRC, not SRC itself
        # Read through the build's links: the files are where the links lead (ln -s DIR LINK; cp -r LINK/ ...).
        source = fs.resolve(raw, last=False)  # the operand itself stays: mv LINK moves the link
        kind = fs.kind(source)
        moves_link = move and not link and source in fs.links  # mv LINK: the link moves, wherever it leads
        copies_link = keep_link and not link and source in fs.links and not raw.endswith("/")  # LINK/: the folder
        if kind is Kind.ABSENT and not dangling and not moves_link and not copies_link:
            shell.note(ctx, "fails", f"{source} does not exist at this point of the build, so nothing is copied")
            ok = False
            continue
        is_dir = kind is Kind.DIR and not copies_link
        if is_dir and not recursive:
            how = "does not copy folders" if command == "install" else "was not told to copy folders (-r)"
            shell.note(ctx, "fails", f"{source} is a folder and {command} {how}, so it copies nothing from it")
            ok = False
            continue
        target = _target(shell, ctx, command, source, destination, written, is_dir, into, contents)
        if target is None:
            ok = False
            continue
        if not link and (kind in (Kind.FILE, Kind.DIR) or contents) and command in ("cp", "mv", "install") \
                and fs.resolve(target, last=through) == source:
            # GNU coreutils 9.1: "'x.py' and 'x.py' are the same file" (cp through a link to it too, 'cp -r D/. D'
            # as well, and a folder onto itself: 'mv sub .', 'cp -rT sub sub'; mv and install replace the link
            # itself); what is there stays as it was.
            shell.note(ctx, "fails", f"{command}: {source} and {target} are the same file, so nothing is copied")
            ok = False
            continue
        if command != "rsync" and not folder_there(shell, ctx, command, target):
            ok = False  # cp, mv, install and ln make no folders (install -D and cp --parents made them already)
            continue
        if through and not link and fs.resolve(target, last=False) in fs.links and fs.kind(target) is Kind.ABSENT:
            # GNU cp 9.1: "not writing through dangling symlink" (POSIX would create the target; coreutils refuses).
            shell.note(ctx, "fails", f"{target} is a link to {fs.resolve(target)}, which does not exist, and "
                                     f"{command} does not write through it, so nothing is copied")
            ok = False
            continue
        clash = None if link or contents or command == "rsync" or kind not in (Kind.FILE, Kind.DIR) else \
            _clash(fs, source, target, is_dir, move, through)
        if clash is not None:
            shell.note(ctx, "fails", f"{command} {clash}, so nothing is copied")
            ok = False
            continue
        there = fs.kind(target) if no_clobber else Kind.ABSENT
        if there is Kind.FILE and not is_dir and no_clobber != "older":
            # GNU -n (--update=none): the file there stays. coreutils 9.2 to 9.4 then fail (status 1); 9.1 and
            # 9.5 on succeed: which one the base image has, only it knows.
            shell.note(ctx, "assumed", f"{command} -n leaves {target}, which the build placed there: coreutils 9.2 "
                                       "to 9.4 fail the command, other versions succeed; the reader takes it to "
                                       "succeed")
            continue
        if there is not Kind.ABSENT:
            why = f"{source} is newer than {target}" if no_clobber == "older" and there is Kind.FILE else \
                f"{target} does not exist yet, and the base image may have it"
            shell.note(ctx, "unread", f"{command} copies only if {why}", scope=(target,))
        if under(target, source) and is_dir and target != source:
            if link:
                continue  # a link inside the folder it points to (ln -s . self): nothing to show twice
            shell.note(ctx, "fails", f"cannot copy the folder {source} into itself")
            ok = False
            continue
        if moves_link or copies_link:
            # rename(2) moves the link itself, and cp -P makes it again, as ln -s would make it at the new name:
            # it leads where the old one did, or, written relative, to that text read from its new folder.
            made = (fs.links[source], fs.relative.get(source))
            if moves_link:
                fs.remove(source)
            ok &= _relink(shell, ctx, command, fs.resolve(target, last=False), *made)
            continue
        if kind is Kind.ABSENT:
            continue  # a symbolic link to nothing yet: it shows its target once the build writes it
        if kind is Kind.UNKNOWN:
            # A file or folder of the base image: nothing of the context, but it replaces what stood there.
            if recursive and not link:
                shell.note(ctx, "unread", f"copies {source} from the base image, which the reader cannot see",
                           scope=(target,))
            elif not dangling:
                fs.write_other(target, through=through)
            continue
        moved = [(source, fs.files[source])] if source in fs.files else []
        if is_dir:  # a file has nothing below it: no need to look through every placed file
            moved += [(path, placed) for path, placed in fs.below(source)]
        if not is_dir and source not in fs.files:
            _back_up(shell, target, backup, step)
            fs.write_other(target, through=through)  # a file the build wrote from elsewhere
            continue
        # Links inside the folder that go as links: what shows through them is theirs, not copied as files.
        inner = sorted((p, fs.links[p], fs.relative.get(p)) for p in fs.links if p != source and under(p, source)) \
            if is_dir and (keep_inner_links or move) and not link else []
        kept = [p for p, _, _ in inner]
        if is_dir:
            fs.make_dir(target)
            # Its folders come too, the empty ones included (cp -r, mv, rsync -r, ln -s all show them).
            for folder in sorted(d for d in fs.dirs if d != source and under(d, source) and not _beneath(d, kept)):
                fs.make_dir(posixpath.join(target, folder[len(source):].lstrip("/")))
            for other in sorted(o for o in fs.others if under(o, source) and not _beneath(o, kept)):
                fs.write_other(posixpath.join(target, other[len(source):].lstrip("/")))
        for path, placed in moved:
            if _beneath(path, kept):
                continue
            relative = path[len(source):].lstrip("/")
            image = posixpath.join(target, relative) if relative else target
            _back_up(shell, image, backup, step)
            fs.place(image, Placement(placed.source, placed.steps + (step,), shell.build.tick()), through=through)
        if move and not link:
            fs.remove(source)
        for path, pointed, written_as in inner:
            # The new link's own path, with the links on the way to it followed ('cp -r src/. LINK_TO_DIR').
            at = fs.resolve(posixpath.join(target, path[len(source):].lstrip("/")), last=False)
            ok &= _relink(shell, ctx, command, at, pointed, written_as)
    return ok


def _beneath(path: str, folders: list[str]) -> bool:
    return any(under(path, folder) for folder in folders)


def _relink(shell: "Shell", ctx: "CommandContext", command: str, at: str, pointed: str, written_as: str | None) -> bool:
    """Make a symbolic link at ``at`` to ``pointed``, or, where it was written relative, to ``written_as`` read
    from ``at``'s folder: how a link that was moved or copied as a link leads on."""
    fs = shell.build.fs
    if written_as:
        pointed = fs.physical(posixpath.join(posixpath.dirname(at), written_as))
    ok = transfer(shell, ctx, command, [pointed], at, recursive=True, into=False, link=True, dangling=True,
                  through=False, recorded=False)
    fs.links[at] = pointed
    if written_as:
        fs.relative[at] = written_as
    return ok


def _clash(fs: ImageFS, source: str, target: str, is_dir: bool, move: bool, through: bool) -> str | None:
    """Why a file cannot replace what the build made at ``target``, as rename(2) and GNU cp refuse it: a file
    over a folder, a folder over a file, and (moving) a folder over a folder with anything in it. None if it can,
    or only the base image knows (a folder of its own may hold files the reader cannot see)."""
    if fs.resolve(target, last=False) in fs.links:
        if is_dir:  # cp -rT and mv -T take the link for what it is, no folder (GNU coreutils 9.1)
            return f"cannot write the folder {source} over the link {target}"
        if not through:
            return None  # mv and install replace the link itself, whatever it leads to
    there = fs.kind(target)
    if there is Kind.DIR and not is_dir:
        return f"cannot write the file {source} over the folder {target}"
    if there is Kind.FILE and is_dir:
        return f"cannot write the folder {source} over the file {target}"
    if there is Kind.DIR and move and fs.resolve(target) != source:
        folder = fs.resolve(target)
        if any(under(p, folder) and p != folder for paths in (fs.files, fs.others, fs.dirs) for p in paths):
            return f"cannot move the folder {source} over {target}: that folder is not empty"
    return None


Backup = tuple[str, str]  # (control: "simple", "numbered" or "existing"; the simple suffix)
_CONTROLS = {"none": "", "off": "", "simple": "simple", "never": "simple", "existing": "existing", "nil": "existing",
             "numbered": "numbered", "t": "numbered"}


def backup_mode(shell: "Shell", ctx: "CommandContext", command: str, o: Options,
                env: dict[str, str] | None) -> Backup | None | Literal[False]:
    """GNU's ``-b``, ``--backup[=CONTROL]`` and ``-S SUFFIX`` (which alone asks for backups too), as coreutils 9.1
    reads them; CONTROL, or else $VERSION_CONTROL, may be any unique prefix of a name, and $SIMPLE_BACKUP_SUFFIX
    replaces '~' (both as the command's environment has them). None: no backups; False: the command refuses
    the line."""
    suffix = o.values.get("S", o.values.get("suffix"))
    if not (o.flags & {"b", "backup"} or "backup" in o.values or suffix is not None):
        return None
    environment = shell.environment(env)
    given = o.values.get("backup") or environment.get("VERSION_CONTROL") or "existing"
    names = [name for name in _CONTROLS if name.startswith(given)] if is_known(given) else []
    controls = {_CONTROLS[name] for name in names}
    if given in _CONTROLS:
        controls = {_CONTROLS[given]}
    if len(controls) != 1:
        shell.note(ctx, "fails", f"{command}: invalid argument '{shell.show(given)}' for 'backup type'")
        return False
    control = controls.pop()
    if not control:
        return None
    suffix = suffix if suffix is not None else environment.get("SIMPLE_BACKUP_SUFFIX") or "~"
    return control, suffix if is_known(suffix) and "/" not in suffix else "~"


_VERSION = re.compile(r"[1-9][0-9]*")


def _next_version(digits: str) -> str:
    """The decimal number one past ``digits``, counted on as text: '199' gives '200', '99' gives '100'."""
    kept = digits.rstrip("9")
    return (kept[:-1] + str(int(kept[-1]) + 1) if kept else "1") + "0" * (len(digits) - len(kept))


def _back_up(shell: "Shell", path: str, backup: Backup | None, step: Step) -> None:
    """Before ``path`` is replaced, keep what stands there under its backup name (GNU backupfile.c)."""
    fs = shell.build.fs
    if backup is None or fs.kind(path) is not Kind.FILE:
        return  # nothing there, a folder (not backed up), or a base-image file the reader cannot see
    control, suffix = backup
    # A version is ASCII digits from 1 to 9 first ('a.~007~' is none: GNU cp then makes a.~1~), of any length:
    # compared and counted on as text, as gnulib does (CPython refuses int() of thousands of digits).
    numbers = [p[len(path) + 2:-1] for p in list(fs.files) + list(fs.others)
               if p.startswith(path + ".~") and p.endswith("~") and _VERSION.fullmatch(p[len(path) + 2:-1])
               ] if control != "simple" else []
    highest = max(numbers, key=lambda digits: (len(digits), digits), default="0")
    name = f"{path}.~{_next_version(highest)}~" if control == "numbered" or numbers else path + suffix
    resolved = fs.resolve(path)
    if resolved in fs.files:
        held = fs.files[resolved]
        fs.place(name, Placement(held.source, held.steps + (step,), shell.build.tick()))
    else:
        fs.write_other(name)


def _target(shell: "Shell", ctx: "CommandContext", command: str, source: str, destination: str, written: str,
            is_dir: bool, into: bool | None, contents: bool) -> str | None:
    """Where ``source`` lands: inside ``destination`` or as it."""
    fs = shell.build.fs
    name = posixpath.basename(source)
    inside = posixpath.join(destination, name)
    if contents:
        return destination
    if into is True:
        if fs.kind(destination) in (Kind.FILE, Kind.ABSENT):
            shell.note(ctx, "fails", f"{destination} is not a folder, so nothing is copied into it")
            return None
        return inside
    if into is False:
        if written.endswith("/") and not is_dir:
            shell.note(ctx, "fails", f"{destination}/ names a folder, and -T copies the file {source} as it, so the "
                                     "copy fails")
            return None
        return destination
    kind = fs.kind(destination)
    if kind is Kind.DIR:
        return inside
    if written.endswith("/") and kind is not Kind.UNKNOWN and not is_dir:
        shell.note(ctx, "fails", f"{destination}/ is not a folder, so the copy fails")
        return None
    if kind in (Kind.FILE, Kind.ABSENT):
        return destination
    # The base image decides; read it the way the script's author evidently meant it.
    if written.endswith("/") or posixpath.basename(written) in (".", ".."):
        return inside
    if command == "ln":
        return destination  # a link is named for where it is made
    destination_name = posixpath.basename(destination)
    if destination_name == name:
        return destination
    if is_dir:
        shell.note(ctx, "assumed", f"{destination} is taken not to exist in the base image "
                                   f"(else {source} would land inside it, as {inside})")
        return destination
    if "." not in destination_name and "." in name:
        shell.note(ctx, "assumed", f"{destination} is taken to be a folder of the base image "
                                   f"(else {source} would be copied as {destination} itself)")
        return inside
    return destination


# -- each command ----------------------------------------------------------

def cp(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``cp [-rRaTfinpv...] [-t DIR] SRC... DEST``."""
    o = read_options("cp", args)
    recursive = bool(o.flags & {"a", "R", "r", "archive", "recursive"})
    # GNU cp 9.1: -L follows every link; -H the operands only; -P, -d and -a none; with none of them, -r
    # follows none and a copy without -r follows all.
    follows_all = bool(o.flags & {"L", "dereference"})
    keeps_links = not follows_all and (recursive or bool(o.flags & {"P", "d", "no-dereference"}))
    return _copy_like(shell, ctx, "cp", o, env, recursive=recursive,
                      through="remove-destination" not in o.flags, no_clobber=_no_clobber(o),
                      keep_link=keeps_links and "H" not in o.flags, keep_inner_links=keeps_links)


def mv(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``mv [-fnTv] [-t DIR] SRC... DEST``: like ``cp -r``, then the source is gone."""
    o = read_options("mv", args)
    return _copy_like(shell, ctx, "mv", o, env, recursive=True, move=True,
                      no_clobber=_no_clobber(o))


def _no_clobber(o: Options) -> str | None:
    """What cp and mv do with a destination that exists: ``none`` (``-n``, ``--update=none``: leave it; -n wins
    over -u in GNU 9.x), ``older`` (``-u``, ``--update[=older]``: replace it only with a newer file), or None."""
    if o.flags & {"n", "no-clobber"} or o.values.get("update") == "none":
        return "none"
    if o.flags & {"u", "update"} or o.values.get("update") == "older":
        return "older"
    return None


def _copy_like(shell: "Shell", ctx: "CommandContext", command: str, o: Options, env: dict[str, str] | None, *,
               recursive: bool, move: bool = False, no_clobber: str | None = None,
               through: bool | None = None, keep_link: bool = False, keep_inner_links: bool = False) -> bool | None:
    if o.unknown:
        shell.unread(ctx, f"{command} with {', '.join(o.unknown)}, which the reader does not follow")
        return None
    backup = backup_mode(shell, ctx, command, o, env)
    if backup is False:
        return False
    operands = o.operands
    if "parents" in o.flags and len(operands) >= 2:
        # cp --parents a/b/c DEST makes DEST/a/b/c: each source keeps the path it was named by.
        *sources, destination = operands
        if shell.build.fs.kind(shell.path(destination)) in (Kind.ABSENT, Kind.FILE):
            shell.note(ctx, "fails", f"{shell.path(destination)} is not a folder: with --parents, {command} copies "
                                     "nothing")
            return False
        ok = True
        for source in sources:
            target = posixpath.join(shell.path(destination), posixpath.normpath(source).lstrip("/"))
            shell.build.fs.make_dir(posixpath.dirname(target))
            ok &= transfer(shell, ctx, command, [shell.path(source, keep_slash=True)], target, recursive=recursive,
                           into=False, move=move, no_clobber=no_clobber, through=through, backup=backup,
                           keep_link=keep_link, keep_inner_links=keep_inner_links)
        return ok
    directory = o.values.get("t") or o.values.get("target-directory")
    into: bool | None = True
    if directory is not None:
        sources, destination = operands, directory
    else:
        if len(operands) < 2:
            shell.note(ctx, "fails", f"{command} needs a source and a destination")
            return False
        *sources, destination = operands
        if _extra_operand(shell, ctx, command, o, operands):
            return False
        into = False if o.flags & {"T", "no-target-directory"} else (True if len(sources) > 1 else None)
    return transfer(shell, ctx, command, [shell.path(s, keep_slash=True) for s in sources], shell.path(destination),
                    recursive=recursive, into=into, move=move, no_clobber=no_clobber,
                    written=shell.path(destination, keep_slash=True), through=through, backup=backup,
                    keep_link=keep_link, keep_inner_links=keep_inner_links)


def _extra_operand(shell: "Shell", ctx: "CommandContext", command: str, o: Options, operands: list[str]) -> bool:
    """Whether -T (one source, DEST its new name) was given more: GNU 9.1 says "extra operand" and copies nothing
    (status 1)."""
    if not o.flags & {"T", "no-target-directory"} or len(operands) <= 2:
        return False
    shell.note(ctx, "fails", f"{command} -T takes one source and its new name: extra operand {operands[2]}, so "
                             "nothing is copied")
    shell.ended_with(1)
    return True


def install(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``install [-D] [-m MODE] [-t DIR] SRC... DEST`` and ``install -d DIR...``."""
    o = read_options("install", args)
    if o.unknown:
        shell.unread(ctx, f"install with {', '.join(o.unknown)}, which the reader does not follow")
        return None
    backup = backup_mode(shell, ctx, "install", o, env)
    if backup is False:
        return False
    if o.flags & {"d", "directory"}:
        ok = True
        for operand in o.operands:
            path = shell.path(operand)
            above = _file_at_or_above(shell.build.fs, path)
            if above is not None:  # GNU: "cannot create directory: File exists" ("Not a directory" further down)
                shell.note(ctx, "fails", f"{above} is a file, so install -d cannot make {path}")
                ok = False
                continue
            shell.build.fs.make_dir(path)
        return ok
    directory = o.values.get("t") or o.values.get("target-directory")
    if directory is not None:
        if "D" in o.flags:
            shell.build.fs.make_dir(shell.path(directory))
        return transfer(shell, ctx, "install", [shell.path(s) for s in o.operands], shell.path(directory),
                        recursive=False, into=True, through=False, backup=backup)
    if len(o.operands) < 2:
        shell.note(ctx, "fails", "install needs a source and a destination")
        return False
    *sources, destination = o.operands
    if _extra_operand(shell, ctx, "install", o, o.operands):
        return False
    written = shell.path(destination, keep_slash=True)
    into: bool | None = True if len(sources) > 1 else None
    if o.flags & {"T", "no-target-directory"}:
        into = False
    if "D" in o.flags:
        # -D makes the leading folders of DEST and installs as DEST (into it, as without -D, when a folder
        # stands there). GNU install 9.1 makes no folder of DEST itself: 'install -D x.py new/' and
        # 'install -D a b new' fail ("Not a directory", "No such file or directory").
        if written.endswith("/") or into:
            if shell.build.fs.kind(shell.path(destination)) in (Kind.ABSENT, Kind.FILE):
                shell.note(ctx, "fails", f"{shell.path(destination)} is not a folder, and install -D makes only "
                                         "the folders above it, so nothing is installed")
                return False
            into = True
        else:
            shell.build.fs.make_dir(posixpath.dirname(shell.path(destination)))
            if shell.build.fs.kind(shell.path(destination)) is not Kind.DIR:
                into = False
    return transfer(shell, ctx, "install", [shell.path(s) for s in sources], shell.path(destination),
                    recursive=False, into=into, written=written, through=False, backup=backup)  # replaces a link


def ln(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``ln [-sfnT] TARGET LINK`` and ``ln -s TARGET... DIR``: the link shows the target's files at its own path."""
    o = read_options("ln", args)
    if o.unknown:
        shell.unread(ctx, f"ln with {', '.join(o.unknown)}, which the reader does not follow")
        return None
    backup = backup_mode(shell, ctx, "ln", o, env)
    if backup is False:
        return False
    symbolic = bool(o.flags & {"s", "symbolic"})
    # -r: TARGET is named from the current folder, and the link holds the way to it from the link's folder.
    relative = bool(o.flags & {"r", "relative"})
    if relative and not symbolic:
        shell.note(ctx, "fails", "ln cannot do --relative without --symbolic")
        return False
    directory = o.values.get("t") or o.values.get("target-directory")
    into: bool | None = True
    if directory is not None:
        targets, link_at = o.operands, directory
    elif len(o.operands) == 1:
        targets, link_at = o.operands, "."
    elif len(o.operands) >= 2:
        *targets, link_at = o.operands
        into = False if o.flags & {"T", "no-target-directory", "n", "no-dereference"} and len(targets) == 1 else (
            True if len(targets) > 1 else None)
    else:
        shell.note(ctx, "fails", "ln needs a target")
        return False
    link_path = shell.path(link_at)
    fs = shell.build.fs
    if into is False and fs.kind(link_path) is Kind.DIR and link_path not in fs.links:
        # -T and -n act on a LINK that is a symbolic link; a real folder there is another matter (GNU ln 9.1).
        if o.flags & {"T", "no-target-directory"}:
            shell.note(ctx, "fails", f"ln cannot overwrite the folder {link_path} with a link")
            return False
        into = True  # -n: the link goes inside the folder, as without it
    ok = True
    for target in targets:
        # -f removes what stands at LINK; a folder there (without -T or -n), or LINK written with a slash, takes the
        # link inside it instead, named as the target's last component ('ln -s /a/app/ DIR/' makes DIR/app).
        inside = into if into is not None else (link_at.endswith("/") or shell.build.fs.kind(link_path) is Kind.DIR)
        name = posixpath.basename(target.rstrip("/"))
        if symbolic and not target.startswith("/") and not relative:
            # A relative symlink target is read from the link's own folder, not from the current one.
            base = link_path if inside else posixpath.dirname(link_path)
            resolved = fs.physical(posixpath.join(base, target))
        else:
            resolved = shell.path(target)
        if not symbolic and fs.kind(resolved) is Kind.DIR:
            shell.note(ctx, "fails", f"ln cannot make a hard link to the folder {resolved}")
            ok = False
            continue
        at = fs.resolve(normalise(posixpath.join(link_path, name)) if inside else link_path, last=False)
        if backup is None and not o.flags & {"f", "force"} and (at in fs.links or fs.kind(at) in (Kind.FILE, Kind.DIR)):
            # GNU ln 9.1: "failed to create symbolic link: File exists"; what stands there stays.
            shell.note(ctx, "fails", f"ln cannot make {at}: something the build made is there (no -f)")
            ok = False
            continue
        if backup is not None and not inside:
            _back_up(shell, link_path, backup, Step(shell.file, ctx.line, "ln", ctx.hides, ctx.stops_on_error,
                                                    shell.build.stage, shell.build.tick()))
            shell.build.fs.remove(link_path)
        elif o.flags & {"f", "force"} and not inside:
            shell.build.fs.remove(link_path)
        elif o.flags & {"f", "force"} and (at in fs.links or fs.kind(at) is Kind.FILE):
            fs.remove(at)  # 'ln -sf T DIR/': the link or file of that name in DIR goes, not written through
        elif o.flags & {"f", "force"} and inside and fs.kind(at) is Kind.DIR:
            shell.note(ctx, "fails", f"ln cannot overwrite the folder {at} with a link")
            ok = False
            continue
        made = transfer(shell, ctx, "ln", [resolved], link_path, recursive=True, into=into, link=True,
                        written=shell.path(link_at, keep_slash=True), dangling=symbolic)
        if symbolic and made:
            # ln -s does not look at its target: one that does not exist yet (or that only the base image
            # has) is linked all the same, and shows at the link whatever the build puts there later.
            made_at = normalise(posixpath.join(link_path, name)) if inside else link_path
            made_at = fs.resolve(made_at, last=False)
            keep_link(fs, made_at, resolved, posixpath.relpath(fs.resolve(resolved), fs.resolve(
                posixpath.dirname(made_at))) if relative else target)
        ok &= made
    return ok


def keep_link(fs: ImageFS, at: str, target: str, spelled: str) -> None:
    """Keep the symbolic link made at ``at`` to the image path ``target``: it shows whatever the build puts there
    later; one ``spelled`` relative keeps that text (a move reads it again from the link's new folder)."""
    fs.links[at] = target
    fs.relative.pop(at, None)
    if not spelled.startswith("/"):
        fs.relative[at] = spelled


def rsync(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``rsync -a SRC... DEST``: ``SRC/`` copies what is in SRC, ``SRC`` copies SRC itself into DEST."""
    o = read_options("rsync", args)
    if o.unknown or o.flags & {"n", "u", "update"}:
        shell.unread(ctx, f"rsync with {', '.join(o.unknown or ['--update/--dry-run'])}, which the reader "
                          "does not follow")
        return None
    if len(o.operands) < 2:
        shell.note(ctx, "fails", "rsync needs a source and a destination")
        return False
    recursive = bool(o.flags & {"a", "r", "archive", "recursive"})
    delete = "delete" in o.flags
    *sources, destination = o.operands
    fs = shell.build.fs
    target_dir = shell.path(destination)
    written = shell.path(destination, keep_slash=True)  # as the script wrote it, for read_install_script
    started = shell.build.counter  # what this rsync writes is placed after this point of the build
    synced: list[str] = []  # the folders a folder source makes match it (--delete empties them of the rest)
    several = len(sources) > 1 or destination.endswith("/")
    above = posixpath.dirname(target_dir)
    if "mkpath" not in o.flags and fs.kind(target_dir) is not Kind.DIR and fs.kind(above) in (Kind.ABSENT, Kind.FILE):
        # rsync 3.2.7 makes the destination folder, never the folders above it (--mkpath does): "mkdir ... failed"
        # (code 11), or for a file's new name "change_dir ... failed" (code 3). Nothing is copied.
        makes_folder = several or any(fs.kind(shell.path(s)) is Kind.DIR for s in sources)
        shell.note(ctx, "fails", f"rsync cannot make {target_dir}: {above} is not a folder at this point of the build")
        shell.ended_with(11 if makes_folder else 3)
        return False
    ok = True
    for source in sources:
        path = shell.path(source)
        kind = fs.kind(path)
        is_dir = kind is Kind.DIR
        if is_dir and not recursive:
            shell.note(ctx, "fails", f"rsync skips the folder {path} without -r or -a")
            ok = False
            continue
        if kind is Kind.UNKNOWN and recursive:
            _rsync_unseen(shell, ctx, path, source.endswith("/"), target_dir,
                          several or fs.kind(target_dir) is Kind.DIR, written, delete)
        elif is_dir:
            inside = target_dir if source.endswith("/") else posixpath.join(target_dir, posixpath.basename(path))
            synced.append(inside)
            fs.make_dir(inside)
            ok &= transfer(shell, ctx, "rsync", [path + "/."], inside, recursive=True, into=None, written=written,
                           through=False)  # rsync writes a new file and renames it over what stood there
        else:
            into = True if several or fs.kind(target_dir) is Kind.DIR else False
            at = posixpath.join(target_dir, posixpath.basename(path)) if into else target_dir
            if fs.kind(at) is Kind.DIR and any(under(p, at) and p != at for held in (fs.files, fs.others, fs.dirs)
                                               for p in held):
                # rsync 3.2.7 replaces an empty folder with the file, not one that holds anything: "cannot delete
                # non-empty directory" (code 23).
                shell.note(ctx, "fails", f"rsync cannot put the file {path} over the folder {at}: it is not empty")
                shell.ended_with(23)
                ok = False
                continue
            if into:
                fs.make_dir(target_dir)
            ok &= transfer(shell, ctx, "rsync", [path], target_dir, recursive=recursive, into=into, written=written,
                           through=False)
    if delete:
        for folder in synced:
            for path, placed in fs.below(folder):
                if not placed.steps or placed.steps[-1].order <= started:
                    fs.remove(path)
    return ok


def _rsync_unseen(shell: "Shell", ctx: "CommandContext", path: str, contents: bool, target_dir: str, into: bool,
                  written: str, delete: bool) -> None:
    """``rsync -r`` of a base-image path the reader cannot see: a caveat on what it could reach, as ``cp -r``'s.

    ``SRC/`` makes DEST hold what the folder SRC holds; ``SRC`` lands in DEST as DEST/SRC when DEST is a folder
    (or several sources go there), else as DEST/SRC if SRC is a folder and as DEST itself if it is a file. What
    stands there is left as the reader knows it: whether it is replaced, or removed by ``--delete``, the base
    image decides.
    """
    shell.record_copy(ctx, [path], written, True)
    reach = posixpath.join(target_dir, posixpath.basename(path)) if into and not contents else target_dir
    reason = f"copies {path} from the base image, which the reader cannot see"
    if delete:
        reason += f", and --delete could remove what {reach} holds that it does not"
    shell.note(ctx, "unread", reason, scope=(reach,))


def rm(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``rm [-rfv] PATH...``."""
    o = read_options("rm", args)
    if o.unknown:  # --help removes nothing; GNU takes '--recur' for --recursive: not guessed
        shell.unread(ctx, f"rm with {', '.join(o.unknown)}, which the reader does not follow",
                     scope=tuple(shell.path(operand) for operand in o.operands) or None)
        return None
    recursive = bool(o.flags & {"r", "R", "recursive"})
    ok = True
    fs = shell.build.fs
    for operand in o.operands:
        path = shell.path(operand)
        if posixpath.basename(operand.rstrip("/")) in (".", ".."):
            shell.note(ctx, "fails", f"rm refuses to remove '.' or '..' ({operand}): it stays")
            ok = False
            continue
        if recursive and (fs.resolve(path) if operand.endswith("/") else path) == "/" \
                and "no-preserve-root" not in o.flags:
            # GNU rm's --preserve-root, on by default: it removes nothing under / and fails.
            shell.note(ctx, "fails", f"rm refuses to work recursively on '/' ({operand}) without --no-preserve-root")
            ok = False
            continue
        if fs.resolve(path, last=False) in fs.links:
            if not operand.endswith("/"):
                fs.remove(path)  # rm LINK removes the link, whatever it points to (or fails to)
                continue
            if recursive and fs.kind(path) is Kind.DIR:
                # rm -r LINK/ empties the folder the link points to and keeps both (GNU rm 9.1).
                target = fs.resolve(path)
                fs.remove(target)
                fs.make_dir(target)
                continue
        kind = fs.kind(path)
        if operand.endswith("/") and kind is Kind.FILE:
            # GNU rm: "Not a directory"; -f takes it for a file that is not there, and succeeds.
            if not o.flags & {"f", "force"}:
                shell.note(ctx, "fails", f"{operand} names a folder, and {path} is a file, so rm fails")
                ok = False
            continue
        if kind is Kind.DIR and not recursive:
            shell.note(ctx, "fails", f"{path} is a folder and rm was not told -r, so it stays")
            ok = False
            continue
        if kind is Kind.ABSENT and not o.flags & {"f", "force"}:
            shell.note(ctx, "fails", f"{path} does not exist, so rm fails (without -f)")
            ok = False
        fs.remove(path)
    return ok


def mkdir(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``mkdir [-p] [-m MODE] DIR...``: without -p, a folder that is already there is a failure."""
    o = read_options("mkdir", args)  # --context[=CTX]: 'mkdir --context DIR' makes DIR
    if o.unknown:
        shell.unread(ctx, f"mkdir with {', '.join(o.unknown)}, which the reader does not follow")
        return None
    parents = bool(o.flags & {"p", "parents"})
    ok = True
    for operand in o.operands:
        path = shell.path(operand)
        kind = shell.build.fs.kind(path)
        above = _file_at_or_above(shell.build.fs, posixpath.dirname(path))
        if above is not None:
            shell.note(ctx, "fails", f"{above} is a file, so mkdir cannot make {path}")
            ok = False
            continue
        if not parents and kind in (Kind.DIR, Kind.FILE):
            shell.note(ctx, "fails", f"{path} already exists, so mkdir fails (without -p)")
            ok = False
            continue
        if not parents and shell.build.fs.kind(posixpath.dirname(path)) is Kind.ABSENT:
            # GNU mkdir 9.1: "cannot create directory: No such file or directory" (status 1); -p makes the parents.
            shell.note(ctx, "fails", f"{posixpath.dirname(path)} does not exist, so mkdir cannot make {path} "
                                     "(without -p)")
            ok = False
            continue
        if kind is Kind.FILE:
            shell.note(ctx, "fails", f"{path} is a file, so mkdir -p fails")
            ok = False
            continue
        shell.build.fs.make_dir(path, new=not parents)
    return ok


def touch(shell: "Shell", ctx: "CommandContext", args: list[str], env: dict[str, str] | None = None) -> bool | None:
    """``touch FILE...``: creates an empty file where none is known (a placed file keeps its content)."""
    o = read_options("touch", args)
    ok = True
    for operand in o.operands:
        path = shell.path(operand)
        if path in shell.build.fs.files or o.flags & {"c", "no-create"}:
            continue
        if not folder_there(shell, ctx, "touch", path):
            ok = False
            continue
        shell.build.fs.write_other(path)
    return ok


def _file_at_or_above(fs: ImageFS, path: str) -> str | None:
    """The file the build made at ``path`` or at a folder above it, where a folder would have to be; else None."""
    while path != "/" and fs.kind(path) is not Kind.FILE:
        path = posixpath.dirname(path)
    return None if path == "/" else path


def folder_there(shell: "Shell", ctx: "CommandContext", command: str, path: str) -> bool:
    """Whether the folder a new file at ``path`` goes in can be there; if the build knows it is not, a note.

    A link at ``path`` that points at nothing yet is written through: the folder is its target's.
    """
    path = shell.build.fs.resolve(path)
    folder = posixpath.dirname(path)
    if shell.build.fs.kind(folder) in (Kind.ABSENT, Kind.FILE):
        shell.note(ctx, "fails", f"{command} cannot create {path}: {folder} is not a folder at this point of the build")
        return False
    return True


# Each takes the shell, the command's context, its arguments and the variables of its environment (VAR=x cmd).
FILE_COMMANDS: dict[str, Callable[["Shell", "CommandContext", list[str], "dict[str, str] | None"], "bool | None"]] = {
    "cp": cp, "mv": mv, "install": install, "ln": ln, "rsync": rsync, "rm": rm, "mkdir": mkdir, "touch": touch,
}
