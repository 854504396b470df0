#!/usr/bin/env bash
# Mutation testing with mutmut 3, one package of patcher at a time, each
# against the fast test files that exercise it. Not part of CI (.ci/run):
# on a 2-core machine one package takes from minutes to an hour.
#
#   pip install -e '.[mutation]'
#   benchmarks/mutation.sh [PACKAGE ...]     default: transforms patchset archive; core is patcher/*.py
#   benchmarks/mutation.sh checks/triton_python.py   one module of a package
#   benchmarks/mutation.sh --tests-for PACKAGE       print the pytest arguments of its tests
#
# A PACKAGE/FILE.py argument mutates that module only, against its
# package's test folder (MUTATION_TESTS="tests/a.py tests/b.py" replaces
# them): a quicker loop while writing the tests that kill its survivors.
#
# Each run works in a throwaway copy of the checkout (mutmut writes a
# mutants/ folder and its own settings there), so the checkout is never
# touched. Results land in benchmarks/out/mutation/PACKAGE.txt: the score
# line, then every mutant that was not killed (`mutmut show NAME` in the
# copy prints its diff; the copy's path is printed and kept on failure).
# patcher/checks is left out by default only for time: its tests run the
# CLI on zips, so a full run takes hours here; name it to run it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${MUTATION_OUT:-$root/benchmarks/out/mutation}
mkdir -p "$out"
jobs=${MUTATION_JOBS:-$(nproc)}

# Tests that run patcher in a fresh interpreter with another working
# folder are deselected: mutmut's stats hook in that child looks for its
# setup.cfg in the working folder, fails, and so fails the whole run.
tests_for() {
    # A package's tests are its folder under tests/ (tests mirror patcher/),
    # plus the few elsewhere that exercise it through another unit.
    case $1 in
        transforms|cli|authoring) echo "tests/$1" ;;
        # Tests that read files the mutants folder lacks (benchmarks/, README, git,
        # .pre-commit-hooks.yaml) or PyTorch's import warning (patcher in a child whose
        # working folder is tmp_path) are run by the plain suite only.
        shipping)   echo tests/shipping \
                         --deselect tests/shipping/test_vendor_shapes_read.py::test_the_realistic_drop_installs_every_module_its_table_names ;;
        review)     echo tests/review \
                         --deselect tests/review/test_sync_pre_commit_hook.py::test_pre_commit_hook_runs_verify_sync ;;
        numerics)   echo tests/numerics --ignore=tests/numerics/test_benchmark_scripts_run.py \
                         --ignore=tests/numerics/test_no_third_party_warnings.py ;;
        core)       echo tests/test_*.py tests/cli tests/end_to_end \
                         --deselect tests/end_to_end/test_readme_walkthrough.py \
                         --deselect tests/end_to_end/test_reproducible_apply.py ;;  # patcher/*.py: the modules above the packages
        patchset)   echo tests/patchset tests/transforms ;;
        checks)     echo tests/checks tests/authoring/test_rule_examples.py ;;
        archive)    echo tests/archive tests/test_pipeline_read_ahead.py \
                         --deselect tests/archive/test_output_determinism.py::test_same_inputs_give_same_bytes_whatever_the_zone_umask_locale_or_cwd \
                         --deselect tests/archive/test_output_determinism.py::test_source_date_epoch_sets_the_time ;;
        *) echo "unknown package: $1 (transforms, patchset, archive, checks, shipping, review, cli, authoring, numerics or core)" >&2; return 2 ;;
    esac
}

if [ "${1-}" = --tests-for ]; then
    # The pytest arguments that select PACKAGE's tests, for other runners
    # (benchmarks/foreign_mutants.py) that must use the same tests.
    tests_for "${2:?--tests-for PACKAGE}"
    exit
fi
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(transforms patchset archive)
for target in "${packages[@]}"; do
    package=${target%%/*}
    tests=${MUTATION_TESTS:-$(tests_for "$package")}
    only="patcher/$package/*"
    [ "$package" = core ] && only="patcher/*.py"
    name=$package
    if [ "$target" != "$package" ]; then
        only="patcher/$target"
        [ "$package" = core ] && only="patcher/${target#core/}"
        name=$package.$(basename "$target" .py)
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/patcher-mutation-$name.XXXXXX")
    (cd "$root" && git ls-files -co --exclude-standard | tar cf - -T -) | tar xf - -C "$work"
    {
        echo "[mutmut]"
        echo "source_paths = patcher/"
        echo "only_mutate = $only"
        echo "also_copy ="
        for path in fixtures/ patches/ templates/ pyproject.toml; do echo "    $path"; done
        echo "pytest_add_cli_args = -p no:cacheprovider -x -q"
        echo "pytest_add_cli_args_test_selection ="
        for test in $tests; do echo "    $test"; done
    } >> "$work/setup.cfg"
    echo "mutation: $only in $work"
    (cd "$work" && PYTHONPATH= mutmut run --max-children "$jobs")
    (cd "$work" && mutmut results --all true) > "$out/$name.all.txt" || true
    (cd "$work" && mutmut results) > "$out/$name.txt" || true
    killed=$(grep -c ': killed$' "$out/$name.all.txt" || true)
    total=$(grep -c ': ' "$out/$name.all.txt" || true)
    echo "$only: $killed of $total mutants killed" | tee -a "$out/$name.txt"
done
