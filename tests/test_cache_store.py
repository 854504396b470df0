"""The cache folder is untrusted: entries are authenticated, links never followed, and pruning removes only its own files."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from patcher import cache_store
from patcher.cache_store import TAG_SIZE, Store, key_file, load_secret, take_warnings
from tests.fixtures_hostile_cache import (deep_json, fifo, folder_at, forge, huge, key_path, link_to, never_blocks,
                                          private_config, sign, unix_socket, user_files)

__all__ = ["private_config"]  # the autouse fixture: the key goes to tmp, never ~/.config

KEY = "a" * 64
OTHER = "b" * 64


@pytest.fixture
def area(tmp_path: Path) -> Path:
    """An area of a cache root in tmp_path (neither exists yet)."""
    take_warnings()
    return tmp_path / "cache" / "patched"


def _store(area: Path, limit: int = 1 << 20) -> Store:
    return Store(area, limit)


# --- entries: only what this user's key tagged is read back ------------------------------


def test_a_written_entry_reads_back_and_ends_with_its_tag(area: Path) -> None:
    with _store(area) as store:
        assert store.write(KEY, b"payload\n")
        assert store.read(KEY) == b"payload\n"
    raw = (area / KEY).read_bytes()
    assert raw[:-TAG_SIZE] == b"payload\n" and len(raw) == len(b"payload\n") + 64
    assert stat.S_IMODE((area / KEY).stat().st_mode) == 0o600


def test_a_forged_entry_is_a_miss(area: Path) -> None:
    forge(area, KEY, b"payload\n")
    assert _store(area).read(KEY) is None


def test_an_entry_tagged_under_another_name_or_area_is_a_miss(area: Path) -> None:
    with _store(area) as store:
        store.write(KEY, b"payload\n")
    os.replace(area / KEY, area / OTHER)
    assert _store(area).read(OTHER) is None
    (area.parent / "checks").mkdir(mode=0o700)
    os.replace(area / OTHER, area.parent / "checks" / KEY)
    assert Store(area.parent / "checks", 1 << 20).read(KEY) is None


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "tag-only", "not-hex"])
def test_a_damaged_entry_is_a_miss(area: Path, damage: str) -> None:
    entry = sign(area, KEY, b"payload\n")
    raw = entry.read_bytes()
    entry.write_bytes({"truncated": raw[:-1], "flipped": b"Payload\n" + raw[8:], "empty": b"",
                       "tag-only": raw[-TAG_SIZE:], "not-hex": raw[:-TAG_SIZE] + b"\xff" * TAG_SIZE}[damage])
    assert _store(area).read(KEY) is None


def test_an_entry_is_read_only_up_to_the_size_limit(area: Path) -> None:
    with _store(area, limit=100) as store:
        assert store.write(KEY, b"x" * 100)
        assert not store.write(OTHER, b"x" * 101)  # never stored: it could not be read back
        assert store.read(KEY) == b"x" * 100
    assert not (area / OTHER).exists()
    huge(area / KEY, 1 << 40)  # a terabyte, sparse: refused by its size, never read
    assert _store(area, limit=100).read(KEY) is None


def test_a_fifo_a_socket_a_folder_or_a_link_is_a_miss_that_the_next_write_replaces(area: Path, tmp_path: Path) -> None:
    names = [f"{n:064x}" for n in range(5)]
    mine = tmp_path / "mine.txt"
    os.replace(sign(area, names[3], b"a valid entry\n"), mine)  # it would verify, if the link were followed
    entries = [fifo(area / names[0]), folder_at(area / names[1]), folder_at(area / names[2], files=3),
               link_to(area / names[3], mine)]
    server = unix_socket(area / names[4])
    try:
        with _store(area) as store, never_blocks(entries[0]) as stuck:
            assert [store.read(name) for name in names] == [None] * 5
            for name in names:
                assert store.write(name, b"fresh\n")
            assert [store.read(name) for name in names] == [b"fresh\n"] * 5
        assert not stuck
    finally:
        server.close()
    assert all(stat.S_ISREG(os.lstat(area / name).st_mode) for name in names)
    assert mine.read_bytes()[:-TAG_SIZE] == b"a valid entry\n"  # the link was replaced, its target untouched
    # The full folder was moved aside with its files (the cache deletes nothing it did not write).
    [aside] = [p for p in area.iterdir() if p.name.endswith(".moved-aside")]
    assert len(list(aside.iterdir())) == 3


@pytest.mark.parametrize("hostile", [deep_json(), b"\xff\xfe not utf-8", b""])
def test_the_store_hands_back_any_payload_that_verifies(area: Path, hostile: bytes) -> None:
    # Decoding is the caller's: the store authenticates bytes, whatever they hold.
    sign(area, KEY, hostile)
    assert _store(area, limit=len(hostile) + 1).read(KEY) == hostile


def test_a_hit_makes_the_entry_the_most_recently_used(area: Path) -> None:
    entry = sign(area, KEY, b"payload\n")
    os.utime(entry, (1_000_000, 1_000_000))
    assert _store(area).read(KEY) == b"payload\n"
    assert entry.stat().st_mtime > 1_000_000


# --- the folder: refused when others can write it -----------------------------------------


def _uncached(area: Path) -> bool:
    with _store(area) as store:
        return not store.write(KEY, b"payload\n") and store.read(KEY) is None


def test_folders_are_made_private(area: Path) -> None:
    with _store(area) as store:
        store.write(KEY, b"payload\n")
    assert stat.S_IMODE(area.stat().st_mode) == 0o700 and stat.S_IMODE(area.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize(("which", "mode"), [("root", 0o777), ("root", 0o720), ("area", 0o702), ("area", 0o770)])
def test_a_folder_others_can_write_is_refused_with_one_warning(area: Path, which: str, mode: int) -> None:
    area.mkdir(parents=True, mode=0o700)
    folder = area.parent if which == "root" else area
    folder.chmod(mode)
    assert _uncached(area) and _uncached(area)
    assert take_warnings() == (f"{folder}: the cache folder can be written by group or others (mode {mode:04o}); "
                               f"the cache is off for this run (chmod -R go-w {folder})",)
    assert not list(area.iterdir())


def test_a_folder_others_can_only_read_is_used(area: Path) -> None:
    area.mkdir(parents=True, mode=0o700)
    area.parent.chmod(0o755)
    area.chmod(0o755)
    assert not _uncached(area) and take_warnings() == ()


def test_the_hint_makes_the_folder_usable(area: Path) -> None:
    area.mkdir(parents=True, mode=0o777)
    area.chmod(0o777)
    area.parent.chmod(0o777)
    assert _uncached(area)
    [warning] = take_warnings()
    subprocess.run(warning.rpartition("(")[2].rstrip(")"), shell=True, check=True)  # chmod -R go-w ROOT
    assert _uncached(area) is False


def test_a_folder_owned_by_someone_else_is_refused(area: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    area.mkdir(parents=True, mode=0o700)
    me = os.geteuid()
    monkeypatch.setattr(cache_store, "_me", lambda: me + 1)  # as seen by another user
    assert _uncached(area)
    assert take_warnings() == (f"{area.parent}: the cache folder is owned by uid {me}, not by you (uid {me + 1}); "
                               "the cache is off for this run (set PATCHER_CACHE_DIR to a folder of your own)",)


@pytest.mark.parametrize("which", ["root", "area"])
def test_a_linked_folder_is_refused_and_what_it_points_to_is_never_pruned(area: Path, tmp_path: Path,
                                                                          which: str) -> None:
    theirs = user_files(tmp_path / "user-files", 700)
    if which == "root":
        link_to(area.parent, tmp_path / "user-files")
    else:
        area.parent.mkdir(mode=0o700)
        link_to(area, tmp_path / "user-files")
    with _store(area) as store:
        assert not store.write(KEY, b"payload\n")
        store.prune(0)
    linked = area.parent if which == "root" else area
    assert take_warnings() == (f"{linked}: the cache folder is a symbolic link; the cache is off for this run "
                               f"(remove the link, the next run makes a folder there: rm {linked})",)
    assert {p: p.read_bytes() for p in (tmp_path / "user-files").iterdir()} == theirs


def test_a_folder_that_cannot_be_made_costs_only_speed(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    take_warnings()
    assert _uncached(tmp_path / "file" / "patched") and take_warnings() == ()


# --- pruning: only files whose names it writes ------------------------------------------


def test_pruning_removes_the_oldest_entries_and_nothing_it_did_not_name(area: Path, tmp_path: Path) -> None:
    outside = user_files(tmp_path / "user-files", 30)
    with _store(area) as store:
        for number in range(6):
            name = f"{number:064x}"
            store.write(name, b"entry\n")
            os.utime(area / name, (2_000_000 + number, 2_000_000 + number))
    foreign = ["notes.txt", "A" * 64, "a" * 63, "a" * 65, ".leftover.tmp", f".{'c' * 64}.12.abc.tmp"]
    for name in foreign:
        (area / name).write_text("not the cache's\n")
        os.utime(area / name, (1, 1))
    link_to(area / ("d" * 64), tmp_path / "user-files")  # a link named like an entry, to a folder
    link_to(area / ("e" * 64), next(iter(outside)))  # and to a file
    folder_at(area / ("f" * 64), files=2)
    stale = area / f".{'9' * 64}.4242.0a1b2c3d.tmp"
    fresh = area / f".{'8' * 64}.4243.0a1b2c3d.tmp"
    stale.write_text("a run that died")
    fresh.write_text("a run writing now")
    os.utime(stale, (time.time() - 2 * 3600,) * 2)
    with _store(area) as store:
        store.prune(2)
    left = {p.name for p in area.iterdir()}
    assert left == {f"{4:064x}", f"{5:064x}", *foreign, "d" * 64, "e" * 64, "f" * 64, fresh.name}
    assert {p: p.read_bytes() for p in (tmp_path / "user-files").iterdir()} == outside
    assert len(list((area / ("f" * 64)).iterdir())) == 2


# --- the key: outside the cache folder, private, made once -------------------------------


def test_the_key_is_made_once_private_in_a_private_folder(private_config: Path) -> None:
    path = key_path(private_config)
    assert key_file() == (path, False)
    first = load_secret()
    assert first is not None and len(first) == 64 and path.read_bytes().strip() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_secret() == first
    assert [p.name for p in path.parent.iterdir()] == ["cache-key"]  # no temporary file left


def test_without_xdg_config_home_the_key_is_under_the_home_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert key_file() == (tmp_path / "home" / ".config" / "patcher" / "cache-key", False)
    monkeypatch.setenv("PATCHER_CACHE_KEY_FILE", str(tmp_path / "ci-secret"))
    assert key_file() == (tmp_path / "ci-secret", True)


def test_a_key_another_run_made_first_is_kept(private_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = key_path(private_config)
    real_link = os.link

    def raced(source: str, target: str) -> None:
        Path(target).write_bytes(b"k" * 64 + b"\n")  # the other run wins
        os.chmod(target, 0o600)
        real_link(source, target)

    monkeypatch.setattr(cache_store.os, "link", raced)
    assert load_secret() == b"k" * 64
    assert [p.name for p in path.parent.iterdir()] == ["cache-key"]


def test_entries_made_with_another_key_miss_and_are_overwritten(area: Path, private_config: Path) -> None:
    # CI restores the cache folder but not the key: every entry misses, then is written with this key.
    sign(area, KEY, b"from another job\n")
    key_path(private_config).unlink()
    with _store(area) as store:
        assert store.read(KEY) is None
        store.write(KEY, b"from this job\n")
        assert store.read(KEY) == b"from this job\n"


def test_a_key_file_named_by_the_environment_is_used_wherever_the_config_is(area: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "ci-secret"
    secret.write_bytes(b"0123456789abcdef" * 4)
    secret.chmod(0o600)
    monkeypatch.setenv("PATCHER_CACHE_KEY_FILE", str(secret))
    sign(area, KEY, b"from the job that had the secret\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-machine"))
    assert _store(area).read(KEY) == b"from the job that had the secret\n"
    assert not (tmp_path / "another-machine").exists()


def _key_warning(path: Path, what: str, hint: str) -> tuple[str, ...]:
    return (f"{path}: {what}; the cache is off for this run ({hint})",)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660])
def test_a_key_others_can_read_is_refused(area: Path, private_config: Path, mode: int) -> None:
    path = key_path(private_config)
    assert load_secret() is not None
    path.chmod(mode)
    assert _uncached(area)
    assert take_warnings() == _key_warning(path, f"the cache key file can be read by group or others (mode {mode:04o})",
                                           f"chmod 600 {path}")
    path.chmod(0o600)
    assert not _uncached(area)


def test_a_key_owned_by_someone_else_is_refused(area: Path, private_config: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_secret() is not None
    area.mkdir(parents=True, mode=0o700)
    me = os.geteuid()
    real = os.fstat

    def key_owned_by_another(fd: int) -> os.stat_result:
        info = real(fd)
        if stat.S_ISREG(info.st_mode):  # the key file; the folders stay the user's
            return os.stat_result((info.st_mode, info.st_ino, info.st_dev, info.st_nlink, me + 1, *info[5:]))
        return info

    monkeypatch.setattr(cache_store.os, "fstat", key_owned_by_another)
    assert _uncached(area)
    assert take_warnings() == _key_warning(key_path(private_config),
                                           f"the cache key file is owned by uid {me + 1}, not by you (uid {me})",
                                           "set PATCHER_CACHE_KEY_FILE to a key file of your own")


def test_a_linked_key_is_refused(area: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real-key"
    real.write_bytes(b"k" * 64)
    real.chmod(0o600)
    link = link_to(tmp_path / "key-link", real)
    monkeypatch.setenv("PATCHER_CACHE_KEY_FILE", str(link))
    assert _uncached(area)
    assert take_warnings() == _key_warning(link, "the cache key file is a symbolic link",
                                           "set PATCHER_CACHE_KEY_FILE to the file it points to")


def test_a_key_that_is_a_fifo_is_refused_without_blocking(area: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pipe = fifo(tmp_path / "key-fifo")
    monkeypatch.setenv("PATCHER_CACHE_KEY_FILE", str(pipe))
    with never_blocks(pipe) as stuck:
        assert _uncached(area)
    assert not stuck
    assert take_warnings() == _key_warning(pipe, "the cache key file is not a regular file", f"replace it by one: rm {pipe}")


@pytest.mark.parametrize("content", [b"", b"short\n", b"   \n\n", b"k" * 5000])
def test_a_key_too_short_or_too_long_is_refused(area: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                content: bytes) -> None:
    secret = tmp_path / "ci-secret"
    secret.write_bytes(content)
    secret.chmod(0o600)
    monkeypatch.setenv("PATCHER_CACHE_KEY_FILE", str(secret))
    assert _uncached(area)
    [warning] = take_warnings()
    assert warning.startswith(f"{secret}: the cache key must hold 32 to 4096 characters")
    subprocess.run(warning.rpartition("(write a new one: ")[2].rstrip(")"), shell=True, check=True)  # as given
    assert not _uncached(area)


def test_a_key_file_under_a_file_turns_the_cache_off_with_how_to_fix_it(area: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "secrets").write_text("not a folder")
    monkeypatch.setenv("PATCHER_CACHE_KEY_FILE", str(tmp_path / "secrets" / "key"))
    assert _uncached(area)
    assert take_warnings() == _key_warning(tmp_path / "secrets" / "key",
                                           f"the cache key file cannot be read ({os.strerror(errno.ENOTDIR)})",
                                           "make it readable by you, or set PATCHER_CACHE_KEY_FILE to another one")


def test_a_key_that_fails_to_read_turns_the_cache_off_with_how_to_fix_it(area: Path, private_config: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_secret() is not None

    def failing_disk(fd: int, size: int) -> bytes:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(cache_store, "_read_at_most", failing_disk)
    assert _uncached(area)
    assert take_warnings() == _key_warning(key_path(private_config),
                                           f"the cache key file cannot be read ({os.strerror(errno.EIO)})",
                                           "make it readable by you, or set PATCHER_CACHE_KEY_FILE to another one")


def test_a_named_key_file_that_is_missing_is_not_made(area: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHER_CACHE_KEY_FILE", str(tmp_path / "typo"))
    assert _uncached(area)
    assert not (tmp_path / "typo").exists()
    assert take_warnings() == _key_warning(tmp_path / "typo", "PATCHER_CACHE_KEY_FILE names no file",
                                           "point it at your key file, or unset it to use a key of this machine's own")


def test_warnings_are_handed_out_once(area: Path) -> None:
    area.mkdir(parents=True, mode=0o700)
    area.chmod(0o777)
    _uncached(area)
    _uncached(area)
    assert len(take_warnings()) == 1 and take_warnings() == ()
