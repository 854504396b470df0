"""Work out which context file lands where in the image, from the Dockerfile and its scripts."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from ..archive.tree import SourceTree
from ..errors import ShippingError
from .dockerfile import Dockerfile, parse_dockerfile
from .dockerignore import DOCKERIGNORE, IgnoreRule, glob_regex, has_glob, is_ignored, parse_dockerignore
from .install_script import InstallScript, read_install_script

DOCKERFILE = "Dockerfile"


@dataclass(frozen=True)
class Installed:
    """A context file and where an install script puts it in the image."""

    path: str
    image_path: str
    script: str  # context path of the install script
    line: int
    hides_failure: tuple[str, ...]
    stops_on_error: bool = True  # False when a failed copy would not stop the image build


@dataclass(frozen=True)
class Script:
    """An install script the Dockerfile runs, and what it does."""

    path: str  # context path
    image_path: str
    run_line: int  # the Dockerfile line that runs it
    body: InstallScript


@dataclass(frozen=True)
class ShipPlan:
    """Everything the Docker build takes from the context, and where it goes."""

    dockerfile: Dockerfile
    copied: dict[str, str]  # context path -> image path, for every file COPY/ADD takes
    scripts: tuple[Script, ...]
    installed: tuple[Installed, ...]
    ignored: tuple[str, ...] = ()  # context files .dockerignore keeps out of the build context
    copied_by: dict[str, int] = field(default_factory=dict)  # context path -> line of the COPY/ADD that ships it
    ignore_rules: tuple[IgnoreRule, ...] = ()  # the .dockerignore, for files a run adds

    def ships(self, path: str) -> bool:
        """Whether a context file reaches the image at all."""
        return path in self.copied

    def would_ship(self, path: str) -> bool:
        """Whether a file added to the context at ``path`` would be copied into the image."""
        if is_ignored(self.ignore_rules, path):
            return False
        return any(_expand_copy([path], source, copy.destination)
                   for copy in self.dockerfile.copies for source in copy.sources)

    def find(self, target: str) -> list[Installed]:
        """Every install whose image path ends with ``target`` (e.g. vllm/attention/ops/paged_attn.py)."""
        suffix = "/" + target.strip("/")
        found = [i for i in self.installed if i.image_path.endswith(suffix)]
        found += [
            Installed(path, image, DOCKERFILE, 0, ())
            for path, image in sorted(self.copied.items())
            if image.endswith(suffix) and not any(i.path == path for i in found)
        ]
        return found

    def shipped_copy(self, target: str) -> str:
        """The one context file the image runs as ``target``, or raise ShippingError."""
        found = self.find(target)
        sources = sorted({i.path for i in found})
        if not sources:
            scripts = ", ".join(s.path for s in self.scripts) or "none"
            raise ShippingError(
                f"nothing the image ships lands at .../{target} (install scripts run: {scripts})",
                where=DOCKERFILE,
                hint="run 'patcher inspect' to see what the build copies where",
            )
        if len(sources) > 1:
            raise ShippingError(
                f"several files are installed as .../{target}: {', '.join(sources)}",
                where=DOCKERFILE,
                hint="the image would end up with whichever is copied last; remove the extra copy",
            )
        return sources[0]


def plan_shipping(tree: SourceTree) -> ShipPlan:
    """Read the Dockerfile and the install scripts it runs."""
    if not tree.exists(DOCKERFILE):
        raise ShippingError("no Dockerfile at the context root", where=tree.label)
    text = _text(tree, DOCKERFILE)
    dockerfile = parse_dockerfile(text)
    rules = parse_dockerignore(_text(tree, DOCKERIGNORE)) if tree.exists(DOCKERIGNORE) else ()
    all_paths = [f.path for f in tree.files()]
    ignored = tuple(p for p in all_paths if is_ignored(rules, p))
    skipped = set(ignored)
    paths = [p for p in all_paths if p not in skipped]
    copied: dict[str, str] = {}
    copied_by: dict[str, int] = {}
    for copy in dockerfile.copies:
        for source in copy.sources:
            for path, image_path in _expand_copy(paths, source, copy.destination):
                copied[path] = image_path
                copied_by[path] = copy.line
    by_image = {image: path for path, image in copied.items()}
    scripts: list[Script] = []
    installed: list[Installed] = []
    for run in dockerfile.runs:
        script = by_image.get(run.script)
        if script is None:
            continue  # a script from the base image: nothing of ours to follow
        body = read_install_script(_text(tree, script), run.cwd, run.environment, run.script, where=script)
        scripts.append(Script(script, run.script, run.line, body))
        for step in body.copies:
            for source_path, image_path in _expand_install(copied, step.source, step.destination, step.recursive):
                installed.append(Installed(source_path, image_path, script, step.line, step.hides_failure,
                                           step.stops_on_error))
    return ShipPlan(dockerfile, copied, tuple(scripts), tuple(installed), ignored, copied_by, rules)


# A Dockerfile is a few lines and an install script a few hundred; both are read
# whole and followed line by line, so a hostile one is refused by size first.
MAX_SCRIPT = 1 << 20


def _text(tree: SourceTree, path: str) -> str:
    size = next((f.size for f in tree.files() if f.path == path), 0)
    if size > MAX_SCRIPT:
        raise ShippingError(f"is {size} bytes; patcher follows scripts of at most {MAX_SCRIPT}", where=path,
                            hint="a Dockerfile or install script this large is not the vendor's: check the input")
    try:
        return tree.read(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ShippingError("not UTF-8 text", where=path) from None


def _expand_copy(paths: list[str], source: str, destination: str) -> list[tuple[str, str]]:
    """Context files a COPY source names, with their image paths (Docker copies folder contents)."""
    if has_glob(source):
        # Docker matches each file and folder against the pattern; several
        # matches need a folder destination, which then receives each one.
        regex = glob_regex(source)
        folders = sorted({parent for p in paths for parent in parent_folders(p)})
        matches = [m for m in [*paths, *folders] if regex.fullmatch(m)]
        into = destination if destination.endswith("/") or len(matches) < 2 else destination + "/"
        found: list[tuple[str, str]] = []
        for match in sorted(matches):
            if match in paths:
                found.append((match, posixpath.join(into, posixpath.basename(match)) if into.endswith("/") else into))
            else:
                found.extend(_expand_copy(paths, match, into))
        return found
    if source in ("", "."):
        return [(p, posixpath.join(destination, p)) for p in paths]
    if source in paths:
        image = posixpath.join(destination, posixpath.basename(source)) if destination.endswith("/") else destination
        return [(source, image)]
    prefix = source.rstrip("/") + "/"
    return [(p, posixpath.join(destination, p[len(prefix):])) for p in paths if p.startswith(prefix)]


def _expand_install(copied: dict[str, str], source: str, destination: str, recursive: bool) -> list[tuple[str, str]]:
    """Context files a ``cp`` in the image copies, with where they land."""
    if has_glob(posixpath.basename(source)):
        # cp ./*.py DEST/: each matching file lands in DEST under its own name.
        regex = glob_regex(source)
        return sorted((p, posixpath.join(destination, posixpath.basename(image)))
                      for p, image in copied.items() if regex.fullmatch(image))
    files = [(p, image) for p, image in copied.items() if image == source]
    if files:
        path = files[0][0]
        if destination.endswith("/") or _looks_like_folder(destination, source):
            return [(path, posixpath.join(destination, posixpath.basename(source)))]
        return [(path, destination)]
    if not recursive:
        return []
    prefix = source.rstrip("/") + "/"
    # cp -r SRC DEST/ puts SRC inside DEST; cp -r SRC DEST (no slash) is read
    # the same way, as vendor scripts copy packages into existing folders.
    base = posixpath.join(destination, posixpath.basename(source.rstrip("/")))
    return sorted((p, posixpath.join(base, image[len(prefix):])) for p, image in copied.items() if image.startswith(prefix))


def parent_folders(path: str) -> list[str]:
    """The folders holding the context path ``path``, outermost first."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _looks_like_folder(destination: str, source: str) -> bool:
    name, source_name = posixpath.basename(destination), posixpath.basename(source)
    return "." not in name and "." in source_name
