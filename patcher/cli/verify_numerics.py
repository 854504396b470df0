"""``patcher verify-numerics VENDOR``: the patched paged_attn.py computes what the vendor's does."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import PatcherError
from ..numerics.report import NumericsReport
from .errors import handle_errors
from .options import (image_stage_said, input_argument, load_patches, load_policy_for, patches_option, set_option,
                      stage_option, verbose_option)
from .progress import ProgressBar

EPILOG = (
    "Runs apply's patching in memory, loads the vendor's and the patched shipped paged_attn.py side by"
    " side with a stub vllm._custom_ops (V1 in plain PyTorch; V2 raising NotImplementedError as on the"
    " BI-V100, then, for decode, a working V2), and calls forward_prefix and forward_decode on seeded"
    " paged KV caches on the CPU: head sizes 128 and 256, block sizes 16 and 32, several GQA ratios,"
    " fp32/fp16/bf16, contexts of 0, one block, a ragged last block, several sequences, past 16K tokens,"
    " and lengths on both sides of each decode threshold. Every call gets fresh copies of its inputs."
    " Prints, per function, the tier each copy ran, whether the outputs are bitwise equal or how far"
    " apart, and each copy's max error against a reference computed from the unpaged keys and values."
    " Every tensor argument is compared too, bit for bit, after each copy: when both write the same"
    " values into one (the vendor's prefill scales an fp32 query in place) it is printed once as a"
    " warning; a write only one copy makes, or different values written, leaves the caller with"
    " different contents and is a difference, naming the input, the copy, the dtypes and the max abs"
    " diff. A progress bar is drawn on stderr when it is a terminal."
    " Exit codes: 0 prefill bitwise equal, decode within fp32 round-off, and every input holding the"
    " same bits after either copy, everywhere; 1 a difference;"
    " 2 bad input, a patch that does not apply, or PyTorch missing (pip install 'patcher[numerics]');"
    " 3 internal error."
)


@click.command("verify-numerics", epilog=EPILOG)
@input_argument()
@stage_option
@patches_option
@set_option
@click.option("--full-thresholds", is_flag=True,
              help="Keep PagedAttention._PYTORCH_DECODE_THRESHOLD at its value (slower); by default it is "
                   "lowered equally on both copies, just above the other thresholds.")
@click.option("--cases", "show_cases", is_flag=True, help="List every case under its tier line.")
@verbose_option
@handle_errors
def verify_numerics_command(source: Path, stage: str | None, patches_dir: Path | None, overrides: tuple[str, ...],
                            full_thresholds: bool, show_cases: bool, verbose: bool) -> None:
    """Compare the vendor's and the patched paged_attn.py outputs on the CPU (needs PyTorch)."""
    try:  # imported here, once: an installed PyTorch can still fail to load (a missing shared library)
        from ..numerics import quiet_torch  # noqa: F401
    except (ImportError, OSError) as error:  # torch's own loader raises OSError for a missing library
        missing = isinstance(error, ModuleNotFoundError) and error.name == "torch"
        raise PatcherError("verify-numerics needs PyTorch, which " + (
            "is not installed" if missing else f"does not import ({type(error).__name__}: {error})"),
            hint="pip install 'patcher[numerics]'") from None
    from ..archive import open_source
    from ..numerics.compare import compare_sources
    from ..numerics.sources import paged_attn_sources

    patch_set = load_patches(patches_dir, overrides)
    v1_limit = int(load_policy_for(patch_set.directory).rules["v1-length-limit"].params["max-tokens"])
    with open_source(source) as tree:
        sources = paged_attn_sources(tree, patch_set, image_stage_said(tree, stage))
    with ProgressBar("verifying numerics", unit="cases", scale=1) as bar:
        result = compare_sources(sources.vendor, sources.patched, v1_limit=v1_limit,
                                 full_thresholds=full_thresholds, progress=bar.update)
    patches = ", ".join(sources.patches) or "no patch (already applied)"
    report = NumericsReport(result, f"{sources.path} of {source.name}: vendor vs patched ({patches})")
    for line in report.lines(cases=show_cases):
        click.echo(line)
    if report.exit_code:
        raise SystemExit(int(report.exit_code))
