#!/usr/bin/env bash
# Mutation testing with mutmut 3, one package of patcher at a time, each
# against the fast test files that exercise it. Not part of CI (.ci/run):
# on a 2-core machine one package takes from minutes to an hour.
#
#   pip install -e '.[mutation]'
#   benchmarks/mutation.sh [PACKAGE ...]     default: transforms patchset archive; core is patcher/*.py
#   benchmarks/mutation.sh checks/triton_python.py   one module of a package
#   benchmarks/mutation.sh --tests-for PACKAGE       print the pytest arguments of its tests
#   MUTATION_SAMPLE=150 benchmarks/mutation.sh review   a seeded random sample (MUTATION_SEED=1)
#   MUTATION_FRESH=0 ...                             without the fresh-interpreter pass (below)
#   MUTATION_TESTS="tests/shipping/test_a.py ..." benchmarks/mutation.sh shipping/printf_format.py
#                                                    every mutant of one module against those tests, then its
#                                                    survivors against the package's (MUTATION_RECHECK=0: not)
#
# A sample estimates a package's score (with its 95 % interval) in a fraction
# of the time: a package holds 1,000-3,000 mutants.
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
cd "$root"   # tests_for globs tests/test_*.py
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
        transforms|authoring) echo "tests/$1" ;;
        # The CLI is also driven by the whole-command walkthroughs, by the authoring tests of
        # 'new --from-edit' (its output, inputs and refusals) and by those of 'test --activate'.
        cli)        echo tests/cli tests/end_to_end tests/authoring/test_from_edit_*.py \
                         tests/authoring/test_inactive_new_patch.py \
                         --deselect tests/end_to_end/test_readme_walkthrough.py \
                         --deselect tests/end_to_end/test_reproducible_apply.py ;;
        # Tests that read files the mutants folder lacks (or whose child, out of file descriptors,
        # cannot run mutmut's own hook) (benchmarks/, README, git,
        # .pre-commit-hooks.yaml) or PyTorch's import warning (patcher in a child whose
        # working folder is tmp_path) are run by the plain suite only.
        # A script nested 64 deep is read in the plain suite; mutmut's trampolines take more of Python's stack per
        # call, so there the reader stops sooner and the test's depth bound does not hold.
        shipping)   echo tests/shipping \
                         --deselect tests/shipping/test_vendor_shapes_read.py::test_the_realistic_drop_installs_every_module_its_table_names \
                         --deselect tests/shipping/test_script_nesting_and_option_names.py::test_a_script_nesting_too_deeply_to_run_is_a_stop_at_the_line_that_runs_it ;;
        review)     echo tests/review \
                         --deselect tests/review/test_sync_pre_commit_hook.py::test_pre_commit_hook_runs_verify_sync ;;
        numerics)   echo tests/numerics --ignore=tests/numerics/test_benchmark_scripts_run.py \
                         --ignore=tests/numerics/test_no_third_party_warnings.py ;;
        core)       echo tests/test_*.py tests/cli tests/end_to_end tests/review/test_diff_base.py \
                         --deselect tests/end_to_end/test_readme_walkthrough.py \
                         --deselect tests/end_to_end/test_reproducible_apply.py \
                         --deselect tests/test_manifest_commit.py::test_no_file_descriptor_left_to_run_git_says_so ;;  # patcher/*.py: the modules above the packages
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
    # mutmut matches with fnmatch, whose '*' spans '/': core names its modules one by one.
    [ "$package" = core ] && only=$(cd "$root" && ls patcher/*.py)
    shown=$package
    name=$package
    if [ "$target" != "$package" ]; then
        only="patcher/$target"
        [ "$package" = core ] && only="patcher/${target#core/}"
        name=$package.$(basename "$target" .py)
        shown=$only
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/patcher-mutation-$name.XXXXXX")
    (cd "$root" && git ls-files -co --exclude-standard | tar cf - -T -) | tar xf - -C "$work"
    {
        echo "[mutmut]"
        echo "source_paths = patcher/"
        echo "only_mutate ="
        for pattern in $only; do echo "    $pattern"; done
        echo "also_copy ="
        for path in fixtures/ patches/ templates/ pyproject.toml; do echo "    $path"; done
        echo "pytest_add_cli_args = -p no:cacheprovider -x -q"
        echo "pytest_add_cli_args_test_selection ="
        for test in $tests; do echo "    $test"; done
    } >> "$work/setup.cfg"
    echo "mutation: $shown in $work"
    if [ -z "${MUTATION_SAMPLE-}" ]; then
        (cd "$work" && PYTHONPATH= mutmut run --max-children "$jobs")
        if [ -n "${MUTATION_TESTS-}" ] && [ "${MUTATION_RECHECK:-1}" != 0 ]; then
            # Narrowed tests run a module's every mutant in minutes (a few a second, where the package's
            # list costs its collection, seconds, each time); what survives them is run again under the
            # package's whole list (mutmut's stats pick the tests that reach each), so that a survivor is
            # one the suite lets through, not one the narrowing missed.
            survivors=$(cd "$work" && mutmut results | sed -n 's/^ *\(.*\): survived$/\1/p')
            if [ -n "$survivors" ]; then
                python3 - "$work/setup.cfg" $(tests_for "$package") <<'PY'
import sys
path, tests = sys.argv[1], sys.argv[2:]
head = open(path).read().partition("pytest_add_cli_args_test_selection =")[0]
open(path, "w").write(head + "pytest_add_cli_args_test_selection =\n" + "".join(f"    {t}\n" for t in tests))
PY
                rm -f "$work/mutants/mutmut-stats.json"
                (cd "$work" && PYTHONPATH= mutmut run --max-children "$jobs" $survivors) > "$work/recheck.log" 2>&1 || true
            fi
        fi
        (cd "$work" && mutmut results --all true) > "$out/$name.all.txt" || true
        (cd "$work" && mutmut results) > "$out/$name.txt" || true
        killed=$(grep -c ': killed$' "$out/$name.all.txt" || true)
        total=$(grep -c ': ' "$out/$name.all.txt" || true)
        echo "$shown: $killed of $total mutants killed" | tee -a "$out/$name.txt"
        continue
    fi
    # A sample: mutmut generates every mutant and records which tests reach
    # each when it is asked for one that does not exist (it then stops on
    # "nothing matches"); the seeded sample of their names is then run.
    (cd "$work" && PYTHONPATH= mutmut run --max-children "$jobs" 'patcher.no_such_mutant') \
        > "$work/generate.log" 2>&1 || true
    # The names, from the files mutmut keeps per mutated module (its
    # print-time-estimates would drop the recorded tests: mutmut 3.8 forgets
    # those of every function it did not generate in the same run).
    (cd "$work" && python3 -c 'import glob, json
for meta in glob.glob("mutants/patcher/**/*.py.meta", recursive=True):
    print("\n".join(json.load(open(meta))["exit_code_by_key"]))') | sort > "$work/mutants.txt"
    # For the same reason the sample run generates the mutants again.
    rm -rf "$work/mutants/patcher"
    [ -s "$work/mutants.txt" ] || { echo "no mutants generated: see $work/generate.log" >&2; exit 1; }
    python3 -c 'import random, sys
names = open(sys.argv[1]).read().split()
random.Random(sys.argv[3]).shuffle(names)
print("\n".join(sorted(names[: int(sys.argv[2])])))' \
        "$work/mutants.txt" "$MUTATION_SAMPLE" "${MUTATION_SEED:-1}" > "$work/sample.txt"
    (cd "$work" && PYTHONPATH= mutmut run --max-children "$jobs" $(cat sample.txt)) > "$work/run.log" 2>&1 || true
    # mutmut stops before any mutant when the tests fail under its stats pass or with no mutant:
    # a score of 0 then would be the harness's failure, not the tests'.
    if grep -q -e "failed to collect stats" -e "Failed to run clean test" "$work/run.log"; then
        echo "mutmut could not run the tests of $shown (see $work/run.log): no score" >&2
        exit 1
    fi
    (cd "$work" && mutmut results --all true) > "$work/results.txt" || true
    # The sample's lines only (every other mutant is "not checked"), then the score
    # with its 95 % Wilson interval: a sample estimates the package's score.
    grep -F -f <(sed 's/$/:/' "$work/sample.txt") "$work/results.txt" > "$out/$name.sample.txt" || true
    # mutmut runs a mutant in a fork of the process that imported patcher, so
    # code that runs at import (click options built by a decorator, tables
    # built once) is never mutated there. Each survivor is run again in a
    # fresh interpreter, which imports the mutant; failing there is a kill.
    # The pass counts any failure as a kill, so it runs only on the tests as they were when the
    # run began (restored from the copy, whatever was put in mutants/ since) and only once they
    # pass there with no mutant: else a test failing for another reason would "kill" every survivor.
    survivors=$(sed -n 's/^ *\(.*\): survived$/\1/p' "$out/$name.sample.txt")
    # MUTATION_FRESH=0 skips the pass (each survivor runs the package's whole test list: hours
    # for a large sample of shipping, where it has never found a kill of its own).
    [ "${MUTATION_FRESH:-1}" = 0 ] && survivors=
    if [ -n "$survivors" ]; then
        rm -rf "$work/mutants/tests" && cp -r "$work/tests" "$work/mutants/tests"
        if ! (cd "$work/mutants" && MUTANT_UNDER_TEST= PYTHONPATH= timeout "${MUTATION_FRESH_TIMEOUT:-300}" \
                python3 -m pytest -x -q -p no:cacheprovider $tests) > "$work/fresh-clean.log" 2>&1; then
            echo "the tests fail in $work/mutants with no mutant (see fresh-clean.log): no fresh pass" >&2
            survivors=
        fi
    fi
    for mutant in $survivors; do
        status=0
        (cd "$work/mutants" && MUTANT_UNDER_TEST=$mutant PYTHONPATH= timeout "${MUTATION_FRESH_TIMEOUT:-300}" \
            python3 -m pytest -x -q -p no:cacheprovider $tests) > /dev/null 2>&1 || status=$?
        if [ "$status" = 1 ]; then
            sed -i "s/^\( *$mutant\): survived$/\1: killed in a fresh interpreter/" "$out/$name.sample.txt"
        fi
    done
    python3 -c 'import math, sys
lines = open(sys.argv[1]).read().splitlines()
n, k, total = len(lines), sum(": killed" in line for line in lines), int(sys.argv[3])
p, z = k / n, 1.96
mid, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
print(f"{sys.argv[2]}: {k} of {n} sampled mutants killed ({100 * p:.1f} %, 95 % interval {100 * (mid - half):.1f}-{100 * (mid + half):.1f} %) of {total} mutants, seed {sys.argv[4]}")' \
        "$out/$name.sample.txt" "$shown" "$(wc -l < "$work/mutants.txt")" "${MUTATION_SEED:-1}" | tee -a "$out/$name.sample.txt"
done
