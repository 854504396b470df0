"""Every rule the policy can name, by id: one class a file, in the order they run."""

from __future__ import annotations

from typing import Mapping

from .base import Rule
from .install_fails_loudly import InstallFailsLoudly
from .keep_pytorch_fallbacks import KeepPytorchFallbacks
from .no_triton_kernels import NoTritonKernels
from .python_3_10 import Python310
from .v1_length_limit import V1LengthLimit
from .v2_needs_fallback import V2NeedsFallback

RULES: Mapping[str, Rule] = {
    rule.ID: rule
    for rule in (
        Python310(),
        NoTritonKernels(),
        KeepPytorchFallbacks(),
        V2NeedsFallback(),
        V1LengthLimit(),
        InstallFailsLoudly(),
    )
}
