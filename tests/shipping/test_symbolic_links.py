"""Symbolic links the build makes: what is read or written through one reaches its target.

``ln -s TARGET LINK`` does not look at TARGET (GNU ln 9.1): a link to a
path that does not exist yet is made all the same, and shows the target
once the build writes it. A copy into ``LINK/...`` lands in the target
folder and shows at both paths; ``cp`` writes through a link to a file
(and refuses a link to nothing), while ``mv``, ``install``, ``rsync`` and
``cp --remove-destination`` replace the link; ``rm LINK`` removes the link
only. Each case was run under bash 5.2 and dash 0.5.12 with GNU
coreutils 9.1 and compared with what lands where.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import image_of, plan_of, script_context

X, Y = "s/x.py", "s/sub/y.py"


def placed(script: str) -> dict[str, str]:
    """What the script placed outside its own folder: image path -> context file."""
    image = image_of(script_context("mkdir /made\n" + script))
    return {path: source for path, source in image.items() if path.startswith("/made/")}


def notes(script: str) -> list[tuple[str, int, str]]:
    plan = plan_of(script_context("mkdir /made\n" + script))
    return [(n.kind, n.line, n.reason) for n in plan.notes]


@pytest.mark.parametrize("link", ["ln -s /made/pkg /made/alias", "ln -s pkg /made/alias", "ln -sfn pkg /made/alias",
                                  "cd /made && ln -s pkg alias && cd /w/s"])
def test_a_copy_into_a_link_to_a_folder_lands_in_the_folder(link: str) -> None:
    script = f"mkdir /made/pkg\n{link}\ncp x.py /made/alias/a.py\n"
    assert placed(script) == {"/made/pkg/a.py": X, "/made/alias/a.py": X}


def test_a_file_written_into_the_target_shows_at_the_link() -> None:
    assert placed("mkdir /made/pkg\nln -s /made/pkg /made/alias\ncp x.py /made/pkg/\n") == {
        "/made/pkg/x.py": X, "/made/alias/x.py": X}


def test_folders_made_through_a_link_are_made_in_the_target() -> None:
    script = "mkdir /made/d\nln -s /made/d /made/e\nmkdir -p /made/e/f/g\ncp x.py /made/d/f/g/\n"
    assert placed(script) == {"/made/d/f/g/x.py": X, "/made/e/f/g/x.py": X}


def test_a_link_to_a_link_reaches_the_last_target() -> None:
    script = "mkdir /made/d\nln -s /made/d /made/e\nln -s e /made/f\ncp x.py /made/f/\n"
    assert placed(script) == {"/made/d/x.py": X, "/made/e/x.py": X, "/made/f/x.py": X}


def test_a_link_made_inside_a_linked_folder_is_read_from_its_real_place() -> None:
    script = "mkdir /made/d /made/q\nln -s /made/d /made/e\nln -s /made/q /made/e/r\ncp x.py /made/e/r/\n"
    assert placed(script) == {"/made/q/x.py": X, "/made/d/r/x.py": X, "/made/e/r/x.py": X}


def test_a_link_to_a_path_that_does_not_exist_yet_is_made_and_fails_nothing() -> None:
    assert notes("ln -s /made/x.py /made/l.py\nln -s ../made/d /made/e\n") == []
    assert placed("ln -s /made/x.py /made/l.py\n") == {}


def test_a_link_made_before_its_target_shows_the_target_once_written() -> None:
    script = "ln -s /made/x.py /made/l.py\nln -s d /made/e\ncp x.py /made/\nmkdir /made/d\ncp sub/y.py /made/d/\n"
    assert placed(script) == {"/made/x.py": X, "/made/l.py": X, "/made/d/y.py": Y, "/made/e/y.py": Y}


def test_a_folder_linked_before_it_is_made_takes_copies_through_the_link() -> None:
    assert placed("ln -s /made/d /made/e\nmkdir /made/d\ncp x.py /made/e/\n") == {"/made/d/x.py": X, "/made/e/x.py": X}


def test_cp_writes_through_a_link_to_a_file() -> None:
    script = "cp sub/y.py /made/t.py\nln -s /made/t.py /made/l.py\ncp x.py /made/l.py\n"
    assert placed(script) == {"/made/t.py": X, "/made/l.py": X}


@pytest.mark.parametrize("command", ["mv x.py /made/l.py", "install -m 644 x.py /made/l.py",
                                     "cp --remove-destination x.py /made/l.py", "rsync -a x.py /made/l.py"])
def test_mv_install_rsync_and_remove_destination_replace_the_link(command: str) -> None:
    script = f"cp sub/y.py /made/t.py\nln -s t.py /made/l.py\n{command}\n"
    assert placed(script) == {"/made/t.py": Y, "/made/l.py": X}


@pytest.mark.parametrize(("command", "kept"), [("cp", {}), ("install -m 644", {"/made/t.py": Y})])
def test_a_base_image_file_copied_onto_a_link_goes_where_the_context_copy_would(command: str,
                                                                                 kept: dict[str, str]) -> None:
    # A default config of the base image copied over the link: cp writes it into the linked file (so the
    # context's copy is gone from both paths); install replaces the link and leaves its target as it was.
    script = f"cp sub/y.py /made/t.py\nln -s /made/t.py /made/l.py\n{command} /etc/app/defaults.py /made/l.py\n"
    assert placed(script) == kept and notes(script) == []


def test_cp_does_not_write_through_a_link_to_nothing() -> None:
    script = "ln -s /made/x.py /made/l.py\ncp x.py /made/l.py || cp sub/y.py /made/failed.py\n"
    assert placed(script) == {"/made/failed.py": Y}
    assert notes(script)[0] == ("fails", 3, "/made/l.py is a link to /made/x.py, which does not exist, and cp does "
                                            "not write through it, so nothing is copied")


def test_install_replaces_a_link_to_nothing() -> None:
    assert placed("ln -s /made/x.py /made/l.py\ninstall x.py /made/l.py\n") == {"/made/l.py": X}


def test_a_redirection_through_a_link_to_nothing_needs_the_target_folder() -> None:
    script = "ln -s /made/q/x.py /made/l.py\necho hi > /made/l.py || cp x.py /made/failed.py\n"
    assert placed(script) == {"/made/failed.py": X}
    assert ("fails", 3, "the redirection cannot create /made/q/x.py: /made/q is not a folder at this point of "
                        "the build") in notes(script)


def test_rm_of_a_link_keeps_its_target() -> None:
    script = "mkdir /made/d\ncp x.py /made/d/\nln -s /made/d /made/e\nrm /made/e\n"
    assert placed(script) == {"/made/d/x.py": X}


def test_rm_of_the_target_leaves_the_link_showing_nothing_until_it_is_remade() -> None:
    script = "mkdir /made/d\ncp x.py /made/d/\nln -s /made/d /made/e\nrm -rf /made/d\n"
    assert placed(script) == {}
    assert placed(script + "mkdir /made/d\ncp sub/y.py /made/e/\n") == {"/made/d/y.py": Y, "/made/e/y.py": Y}


def test_a_moved_link_no_longer_shows_at_its_old_path() -> None:
    script = "mkdir /made/d\nln -s /made/d /made/e\ncp x.py /made/e/\nmv /made/e /made/f\n"
    assert placed(script) == {"/made/d/x.py": X, "/made/f/x.py": X}


def test_a_link_into_the_base_image_takes_the_copy_to_the_base_image_path() -> None:
    # The vendor's way to reach an installed package: a short link to its site-packages folder.
    site = "/usr/local/lib/python3.10/site-packages/vllm"
    script = f"ln -s {site} /made/vllm\ncp x.py /made/vllm/attention/ops/paged_attn.py\n"
    image = image_of(script_context("mkdir /made\n" + script))
    assert image[f"{site}/attention/ops/paged_attn.py"] == X
    assert image["/made/vllm/attention/ops/paged_attn.py"] == X


@pytest.mark.parametrize("script", [
    "ln -s /made/a /made/b\nln -s /made/b /made/a\ncp x.py /made/a/ || cp x.py /made/loop.py\n",
    "ln -s . /made/self\ncp x.py /made/self/self/self/a.py\n",
])
def test_a_loop_of_links_is_read_to_an_end(script: str) -> None:
    # A loop of two links is ELOOP to cp (the copy fails); a link to its own folder is that folder, at any depth.
    assert placed(script) in ({"/made/loop.py": X}, {"/made/a.py": X})


def test_rm_r_of_a_link_with_a_slash_empties_its_target_and_keeps_both() -> None:
    script = "mkdir /made/d\ncp x.py /made/d/\nln -s /made/d /made/e\nrm -rf /made/e/\ncp sub/y.py /made/e/\n"
    assert placed(script) == {"/made/d/y.py": Y, "/made/e/y.py": Y}


def test_rm_r_of_a_link_with_a_slash_goes_on_to_the_operands_after_it() -> None:
    script = ("mkdir /made/d\ncp x.py /made/d/\ncp sub/y.py /made/old.py\nln -s /made/d /made/e\n"
              "rm -rf /made/e/ /made/old.py\n")
    assert placed(script) == {}


def test_a_relative_link_made_in_a_base_image_folder_is_read_from_that_folder() -> None:
    # 'ln -s ../lib/app/x.py ... /usr/local/bin/': each link points up from /usr/local/bin, a folder only the
    # base image has, not from the folder the script is in.
    script = ("mkdir -p /usr/local/lib/app\ncp x.py sub/y.py /usr/local/lib/app/\n"
              "ln -s ../lib/app/x.py ../lib/app/y.py /usr/local/bin/\nln -s -t /usr/local/sbin ../lib/app/x.py\n")
    image = image_of(script_context(script))
    assert {path: image[path] for path in image if path.startswith(("/usr/local/bin/", "/usr/local/sbin/"))} == {
        "/usr/local/bin/x.py": X, "/usr/local/bin/y.py": Y, "/usr/local/sbin/x.py": X}


def test_a_link_made_into_a_base_image_folder_named_with_a_slash_is_made_inside_it() -> None:
    # 'ln -s TARGET /usr/local/libexec/': the slash names a folder, so the link is /usr/local/libexec/y.py, and
    # shows what the build writes at its target afterwards.
    script = ("mkdir -p /usr/local/lib/app\ncp sub/y.py /usr/local/lib/app/\n"
              "ln -s /usr/local/lib/app/y.py /usr/local/libexec/\ncp x.py /usr/local/lib/app/y.py\n")
    image = image_of(script_context(script))
    assert {path: image[path] for path in image if path.startswith("/usr/local/")} == {
        "/usr/local/lib/app/y.py": X, "/usr/local/libexec/y.py": X}


def test_rm_of_a_link_to_nothing_succeeds() -> None:
    assert notes("ln -s /made/none /made/l\nrm /made/l\n") == []


def test_a_thousand_links_to_one_folder_show_each_file_at_a_bounded_number_of_paths() -> None:
    # A hostile script: every file written into the folder would show at each of the thousand links. Each is
    # mirrored at no more than 64 paths, and a copy read through any link, mirrored or not, still finds its file.
    links = "".join(f"ln -s /made/t /made/l{i}\n" for i in range(1000))
    copies = "".join(f"cp x.py /made/t/f{i}.py\n" for i in range(50))
    found = placed(f"mkdir /made/t\n{links}{copies}cp /made/l999/f7.py /made/out.py\n")
    assert len(found) <= 64 * 50 + 1
    assert found["/made/t/f49.py"] == X and found["/made/out.py"] == X


# -- '..' after a link, cd -L and -P, and the names realpath and pwd print ----------------------------------------


@pytest.mark.parametrize("copy", ["cp x.py /made/k/../c.py", "cd /made/k && cp /w/s/x.py ../c.py && cd /w/s",
                                  "cp -r sub /made/k/.. && mv /made/a/sub/y.py /made/a/c.py"])
def test_dot_dot_in_a_programs_path_leaves_the_folder_the_link_leads_to(copy: str) -> None:
    # The kernel walks /made/k/.. as /made/a/b/.. = /made/a (bash 5.2, dash 0.5.12 and cp 9.1 agree).
    placed_now = placed(f"mkdir -p /made/a/b\nln -s /made/a/b /made/k\n{copy}\n")
    assert "/made/a/c.py" in placed_now and "/made/c.py" not in placed_now


def test_cd_dot_dot_drops_the_link_name_as_bash_and_dash_do_by_default() -> None:
    script = "mkdir -p /made/a/b\nln -s /made/a/b /made/k\ncd /made/k\ncd ..\ncp /w/s/x.py c.py\n"
    assert placed(script) == {"/made/c.py": X}


@pytest.mark.parametrize("cd", ["cd -P /made/k/..", "cd -LP /made/k/..", "cd -P /made/k && cd .."])
def test_cd_minus_p_goes_where_the_link_leads(cd: str) -> None:
    script = f"mkdir -p /made/a/b\nln -s /made/a/b /made/k\n{cd}\ncp /w/s/x.py c.py\n"
    assert placed(script) == {"/made/a/c.py": X}


def test_the_last_of_cd_minus_l_and_minus_p_counts() -> None:
    script = "mkdir -p /made/a/b\nln -s /made/a/b /made/k\ncd -PL /made/k/..\ncp /w/s/x.py c.py\n"
    assert placed(script) == {"/made/c.py": X}


@pytest.mark.parametrize("command, printed", [
    ("realpath /made/k", "/made/a/b"), ("readlink -f /made/k/../q", "/made/a/q"), ("realpath -s /made/k/", "/made/k"),
    ("cd /made/k && pwd -P", "/made/a/b"), ("cd /made/k && pwd", "/made/k"), ("cd /made/k && pwd -P -L", "/made/k"),
    ("cd -P /made/k && echo $PWD", "/made/a/b")])
def test_realpath_and_pwd_name_what_bash_and_coreutils_print(command: str, printed: str) -> None:
    script = (f"mkdir -p /made/a/b\nln -s /made/a/b /made/k\nR=$({command})\n"
              f"case $R in {printed}) cp /w/s/x.py /made/right.py;; *) cp /w/s/x.py /made/wrong.py;; esac\n")
    assert placed(script) == {"/made/right.py": X}


# -- mv of a link moves the link ------------------------------------------------------------------------------------


def test_a_moved_link_still_leads_to_its_target() -> None:
    script = "mkdir -p /made/a/b\nln -s /made/a/b /made/k\nmv /made/k /made/m\ncp x.py /made/m/c.py\ncp sub/y.py /made/a/b/\n"
    assert placed(script) == {"/made/a/b/c.py": X, "/made/m/c.py": X, "/made/a/b/y.py": Y, "/made/m/y.py": Y}


def test_a_link_moved_into_a_folder_shows_nothing_once_its_target_is_removed() -> None:
    script = ("mkdir -p /made/a/b /made/n\ncp x.py /made/a/b/\nln -s /made/a/b /made/k\nmv /made/k /made/n/\n"
              "rm -r /made/a\n")
    assert placed(script) == {}


def test_a_moved_link_to_nothing_yet_is_moved_and_shows_its_target_once_written() -> None:
    script = "ln -s /made/none /made/g\nmv /made/g /made/h\nmkdir /made/none\ncp x.py /made/h/\n"
    assert placed(script) == {"/made/none/x.py": X, "/made/h/x.py": X}
    assert notes(script) == []


def test_removing_the_folder_above_a_links_target_empties_the_link() -> None:
    script = ("mkdir -p /made/a/b\ncp x.py /made/a/b/\nln -s /made/a/b /made/k\nln -s /made/k /made/j\nrm -rf /made/a\n"
              "mkdir -p /made/a/b\ncp sub/y.py /made/j/\n")
    assert placed(script) == {"/made/a/b/y.py": Y, "/made/k/y.py": Y, "/made/j/y.py": Y}


def test_a_relative_link_made_through_a_link_is_read_from_the_folder_it_lives_in() -> None:
    # ln -s ../x /made/k/l makes l inside /made/a/b, the folder k leads to: ../x is /made/a/x.
    script = "mkdir -p /made/a/b /made/a/x\nln -s /made/a/b /made/k\nln -s ../x /made/k/l\ncp x.py /made/k/l/\n"
    assert placed(script) == {"/made/a/x/x.py": X, "/made/a/b/l/x.py": X, "/made/k/l/x.py": X}


@pytest.mark.parametrize("move", ["mv /made/a/k /made/k", "mv /made/a/k /made/", "cd /made/a && mv k .. && cd /w/s"])
def test_a_moved_relative_link_reads_its_target_from_its_new_folder(move: str) -> None:
    # The link holds the text 'b': at /made/k it leads to /made/b, no longer to /made/a/b.
    script = f"mkdir -p /made/a/b /made/b\nln -s b /made/a/k\n{move}\ncp x.py /made/k/\n"
    assert placed(script) == {"/made/b/x.py": X, "/made/k/x.py": X}


def test_a_link_made_again_with_an_absolute_target_forgets_its_relative_text() -> None:
    script = "mkdir -p /made/a/b /made/b\nln -s b /made/a/k\nln -sfn /made/a/b /made/a/k\nmv /made/a/k /made/q\ncp x.py /made/q/\n"
    assert placed(script) == {"/made/a/b/x.py": X, "/made/q/x.py": X}


# -- ln -r: the target named from the current folder, the link holding the way from its own -------------------------


@pytest.mark.parametrize("options", ["-sr", "-s --relative"])
def test_a_relative_link_made_with_minus_r_leads_to_the_target_named_from_the_current_folder(options: str) -> None:
    # GNU ln 9.1: 'ln -s --relative sub /made/d/s' run in /w/s holds '../../w/s/sub'.
    assert placed(f"mkdir /made/d\nln {options} sub /made/d/s\n") == {
        "/made/d/s/y.py": Y, "/made/d/s/deep/z.py": "s/sub/deep/z.py"}


def test_a_minus_r_link_moved_elsewhere_reads_its_relative_way_from_there() -> None:
    # ln -sr /made/a/b /made/k holds 'a/b': moved to /made/a/k2 it leads to /made/a/a/b, which is not there.
    script = ("mkdir -p /made/a/b /made/a/a/b\nln -sr /made/a/b /made/k\nmv /made/k /made/a/k2\n"
              "cp x.py /made/a/k2/r.py\n")
    assert placed(script) == {"/made/a/a/b/r.py": X, "/made/a/k2/r.py": X}


def test_minus_r_without_minus_s_fails() -> None:
    assert notes("ln -r x.py /made/h.py\n")[0] == ("fails", 2, "ln cannot do --relative without --symbolic")
    assert placed("ln -r x.py /made/h.py || cp x.py /made/f.py\n") == {"/made/f.py": X}


@pytest.mark.parametrize("links", [21, 25, 40])
def test_a_path_through_up_to_forty_links_then_up_is_walked_from_where_the_links_lead(links: int) -> None:
    # Linux follows 40 links in one lookup; each k below leads back to /made/a/b, and '..' leaves it for /made/a
    # (cp x.py /made/a/b/k/.../k/../c.py makes /made/a/c.py; 41 links is ELOOP: checked with cp of coreutils 9.1).
    script = f"mkdir -p /made/a/b\nln -s /made/a/b /made/a/b/k\ncp x.py /made/a/b{'/k' * links}/../c.py\n"
    assert placed(script) == {"/made/a/c.py": X}


def test_a_path_through_forty_one_links_then_up_is_too_many_links_for_cp() -> None:
    # Linux follows 40 links in one lookup; cp fails with "Too many levels of symbolic links".
    script = (f"mkdir -p /made/a/b\nln -s /made/a/b /made/a/b/k\n"
              f"cp x.py /made/a/b{'/k' * 41}/../c.py || cp x.py /made/failed.py\n")
    assert placed(script) == {"/made/failed.py": X}


def test_a_relative_link_ending_in_a_slash_keeps_naming_the_link_it_leads_through() -> None:
    # ln -s ../real/ keeps the text: l leads through whatever /made/real is when used, here the second link.
    script = ("mkdir -p /made/a /made/other /made/third\nln -s /made/other /made/real\nln -s ../real/ /made/a/l\n"
              "rm /made/real\nln -s /made/third /made/real\ncp x.py /made/a/l/\n")
    assert placed(script) == {"/made/third/x.py": X, "/made/real/x.py": X, "/made/a/l/x.py": X}


# Each checked with bash 5.2, dash 0.5.12 and GNU ln 9.1: without -f (or a backup), ln fails ("File exists") where
# the build made something at the link's path, a link to nothing included, and leaves it as it was; a hard link
# to a folder is refused.
@pytest.mark.parametrize(("script", "made"), [
    ("ln -s /w/s/x.py /made/a\nln -s /w/s/sub/y.py /made/a || cp x.py /made/f", {"/made/a": X, "/made/f": X}),
    ("ln -s /w/s/x.py /made/a\nln -sf /w/s/sub/y.py /made/a", {"/made/a": Y}),
    ("ln -s /nowhere /made/a\nln -s /w/s/x.py /made/a || cp x.py /made/f", {"/made/f": X}),
    ("ln -s x.py /made/\nln -s x.py /made/ || cp x.py /made/f", {"/made/f": X}),  # /made/x.py leads to nothing
    ("ln /w/s/x.py /made/h\nln /w/s/x.py /made/h || cp x.py /made/f", {"/made/h": X, "/made/f": X}),
    # The link already there stays; ln goes on to the next target, and fails at the end.
    ("ln -s /w/s/x.py /made/x.py\nln -s /w/s/x.py /w/s/sub/y.py /made/ || cp x.py /made/f",
     {"/made/x.py": X, "/made/y.py": Y, "/made/f": X}),
    ("ln -s /w/s/sub /made/d\nln -sn /w/s/x.py /made/d || cp x.py /made/f",
     {"/made/d/y.py": Y, "/made/d/deep/z.py": "s/sub/deep/z.py", "/made/f": X}),
    ("mkdir /made/d\nln -sT /w/s/x.py /made/d || cp x.py /made/f", {"/made/f": X}),
    ("mkdir /made/d\nln -s --no-target-directory /w/s/x.py /made/d || cp x.py /made/f", {"/made/f": X}),
    ("ln /w/s/sub /made/a || cp x.py /made/f", {"/made/f": X}),
    # The hard link to the folder is refused; ln goes on to the next target, and fails at the end.
    ("ln /w/s/sub /w/s/x.py /made/ || cp x.py /made/f", {"/made/x.py": X, "/made/f": X}),
])
def test_ln_without_force_leaves_what_the_build_made_at_the_link(script: str, made: dict[str, str]) -> None:
    assert placed(script) == made


def test_ln_says_why_it_leaves_what_is_there() -> None:
    assert notes("ln -s /w/s/x.py /made/a\nln -s /w/s/x.py /made/a || true\n") == [
        ("fails", 3, "ln cannot make /made/a: something the build made is there (no -f)")]


# GNU ln 9.1: 'ln -sf TARGET DIR/' replaces the link or file of that name in DIR (it does not write through a
# link there), and cannot put a link in place of a folder.
@pytest.mark.parametrize(("script", "made"), [
    ("ln -sf a/y.py /made/y.py\nln -sf /w/s/sub/y.py /made/ && cp x.py /made/after.py", {"/made/y.py": Y,
                                                                                         "/made/after.py": X}),
    ("cp x.py /made/y.py\nln -sf /w/s/sub/y.py /made/", {"/made/y.py": Y}),
    ("mkdir /made/y.py\nln -sf /w/s/sub/y.py /made/ || cp x.py /made/f", {"/made/f": X}),
    ("mkdir /made/y.py\nln -sf /w/s/sub/y.py /w/s/x.py /made/ || cp x.py /made/f", {"/made/x.py": X, "/made/f": X}),
])
def test_ln_force_into_a_folder_replaces_what_has_the_links_name(script: str, made: dict[str, str]) -> None:
    assert placed(script) == made


@pytest.mark.parametrize("options", ["-sfT", "-sf --no-target-directory", "-sfn", "-sf --no-dereference"])
def test_ln_force_with_no_target_directory_replaces_a_link_to_a_folder(options: str) -> None:
    # GNU ln 9.1: -T and -n take LINK as the link itself, not the folder it leads to; the folder keeps its files.
    assert placed(f"ln -s /w/s/sub /made/d\nln {options} /w/s/x.py /made/d\n") == {"/made/d": X}


def test_ln_with_options_the_reader_does_not_know_names_each_and_makes_nothing() -> None:
    # GNU ln 9.1: "invalid option -- 'q'"; it makes no link.
    assert notes("ln -sqy x.py /made/\n") == [("unread", 2, "ln with -q, -y, which the reader does not follow")]
    assert placed("ln -sqy x.py /made/\n") == {}


# GNU ln 9.1 with -b (or --backup, or -S): what stood at LINK is kept under its backup name, '~' or, as
# $VERSION_CONTROL or --backup=numbered asks, '.~N~'; a link made inside a folder backs up nothing.
@pytest.mark.parametrize(("script", "made"), [
    ("cp x.py /made/a\nln -sb /w/s/sub/y.py /made/a", {"/made/a~": X, "/made/a": Y}),
    ("cp x.py /made/a\nVERSION_CONTROL=numbered ln -sb /w/s/sub/y.py /made/a", {"/made/a.~1~": X, "/made/a": Y}),
    ("mkdir /made/d\ncp sub/y.py /made/d/\nln -sb /w/s/x.py /made/d", {"/made/d/y.py": Y, "/made/d/x.py": X}),
    # An unknown backup type: ln fails, and the file at LINK stays.
    ("cp x.py /made/a\nln --backup=bogus -s /w/s/sub/y.py /made/a || cp x.py /made/f", {"/made/a": X, "/made/f": X}),
])
def test_ln_backup_keeps_what_stood_at_the_link(script: str, made: dict[str, str]) -> None:
    assert placed(script) == made


def test_ln_says_which_backup_type_it_does_not_know() -> None:
    assert notes("cp x.py /made/a\nln --backup=bogus -s /w/s/sub/y.py /made/a || true\n") == [
        ("fails", 3, "ln: invalid argument 'bogus' for 'backup type'")]


def test_a_backup_ln_makes_names_the_ln_line_after_the_steps_of_the_file_it_keeps() -> None:
    plan = plan_of(script_context("mkdir /made\ncp x.py /made/a\nln -sb /w/s/sub/y.py /made/a\n"))
    backup = plan.image["/made/a~"].steps
    assert [(s.file, s.line, s.command, s.hides_failure, s.stops_on_error, s.stage) for s in backup] == [
        ("Dockerfile", 3, "COPY", (), True, "stage 0"), ("s/i.sh", 2, "cp", (), False, "stage 0"),
        ("s/i.sh", 3, "ln", (), False, "stage 0")]
    # The backup is made after the cp and before the link takes its place.
    assert backup[1].order < backup[2].order < plan.image["/made/a"].steps[-1].order


# GNU cp 9.1 copies a link as a link under -P, -d, -a, and -r without -L or -H (-H follows the operands only);
# mv moves the links inside a folder as links. A relative link then leads where its text leads from its new
# folder, so it may lead to nothing there. Each row was run with bash 5.2 and GNU coreutils 9.1.
@pytest.mark.parametrize(("script", "expected"), [
    ('ln -s x.py link.py\ncp -r link.py /made/\n', {}),
    ('ln -s /w/s/x.py link.py\ncp -r link.py /made/\n', {"/made/link.py": X}),
    ('ln -s x.py link.py\ncp link.py /made/\n', {"/made/link.py": X}),
    ('ln -s x.py link.py\ncp -P link.py /made/\n', {}),
    ('ln -s x.py link.py\ncp -d link.py /made/\n', {}),
    ('ln -s x.py link.py\ncp -a link.py /made/\n', {}),
    ('ln -s x.py link.py\ncp -rL link.py /made/\n', {"/made/link.py": X}),
    ('ln -s x.py link.py\ncp -rH link.py /made/\n', {"/made/link.py": X}),
    # --parents makes /made/link.py as the operand names it, and copies it as the rest of the line says.
    ('ln -s x.py link.py\ncp -a --parents link.py /made/\n', {}),
    ('ln -s x.py link.py\ncp -P --parents link.py /made/\ncp x.py /made/\n', {"/made/link.py": X, "/made/x.py": X}),
    ('ln -s x.py link.py\ncp --parents link.py /made/\n', {"/made/link.py": X}),
    ('mkdir d\nln -s ../x.py d/l.py\ncp -r d /made/\n', {}),
    ('mkdir d\nln -s ../x.py d/l.py\ncp -rH d /made/\n', {}),
    ('mkdir d\nln -s ../x.py d/l.py\ncp -rL d /made/\n', {"/made/d/l.py": X}),
    ('mkdir d\nln -s /w/s/x.py d/l.py\ncp -a d /made/\n', {"/made/d/l.py": X}),
    ('mkdir d\ncp x.py d/\nln -s x.py d/l.py\ncp -r d /made/e\n', {"/made/e/x.py": X, "/made/e/l.py": X}),
    ('mkdir d\nln -s ../x.py d/l.py\nmv d /made/\n', {}),
    ('mkdir d\nln -s /w/s/sub d/pkg\ncp -r d /made/\n', {"/made/d/pkg/y.py": Y, "/made/d/pkg/deep/z.py": "s/sub/deep/z.py"}),
    ('ln -s sub pkg\ncp -r pkg /made/\n', {}),
    ('ln -s sub pkg\ncp -r pkg/ /made/p\n', {"/made/p/y.py": Y, "/made/p/deep/z.py": "s/sub/deep/z.py"}),
    ('mkdir -p /made/q\nln -s /made/q q\ncp -r q /made/r\ncp x.py /made/q/\n', {"/made/q/x.py": X, "/made/r/x.py": X}),
])
def test_a_copy_keeps_a_link_as_a_link_unless_told_to_follow_it(script: str, expected: dict[str, str]) -> None:
    assert placed(script) == expected


def test_a_relative_link_made_into_a_base_image_folder_named_with_a_slash_is_read_from_that_folder() -> None:
    # GNU ln 9.1: 'ln -s ../lib/app/y.py /usr/local/libexec/' makes libexec/y.py -> /usr/local/lib/app/y.py.
    script = ("mkdir -p /usr/local/lib/app\ncp sub/y.py /usr/local/lib/app/\n"
              "ln -s ../lib/app/y.py /usr/local/libexec/\n")
    assert image_of(script_context(script)).get("/usr/local/libexec/y.py") == Y


@pytest.mark.parametrize("made", ["mkdir -p /usr/local/lib/app /usr/local/libexec\n", "mkdir -p /usr/local/lib/app\n"])
def test_a_link_to_a_folder_named_with_a_slash_is_made_inside_the_folder_given(made: str) -> None:
    # GNU ln 9.1: 'ln -s /usr/local/lib/app/ /usr/local/libexec/' makes libexec/app -> /usr/local/lib/app/.
    script = f"{made}ln -s /usr/local/lib/app/ /usr/local/libexec/\ncp x.py /usr/local/lib/app/n.py\n"
    image = image_of(script_context(script))
    assert {p: image[p] for p in image if p.startswith("/usr/local/libexec")} == {"/usr/local/libexec/app/n.py": X}
