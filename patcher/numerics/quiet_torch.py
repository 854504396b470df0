"""Import PyTorch once for the numerics modules, without the NumPy warning it raises when NumPy is absent.

PyTorch's CPU wheels do not depend on NumPy, so ``pip install torch`` can
leave an environment without it. There, ``import torch`` itself warns
``UserWarning: Failed to initialize NumPy: No module named 'numpy'`` (its
C++ side checks for NumPy once, while ``torch/_subclasses/functional_tensor.py``
builds a CPU tensor at import time). Nothing in ``patcher.numerics``
converts to or from NumPy, so that warning says nothing about a run: it is
ignored here, for this one import and this one message, and any other
warning still shows. Import ``torch`` from this module, not directly, so
that whichever numerics module comes first gets the same treatment.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    # Only the message PyTorch raises when NumPy cannot be imported; the check runs once
    # per process, so later tensor creation does not raise it again.
    warnings.filterwarnings("ignore", message=r"Failed to initialize NumPy", category=UserWarning)
    import torch

__all__ = ["torch"]
