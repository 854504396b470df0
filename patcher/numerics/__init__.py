"""Run vendor and patched ``paged_attn.py`` copies on CPU and compare them.

The submodules need PyTorch (the ``numerics`` extra); this package itself
imports nothing heavy, so ``import patcher`` stays light:

- ``stub_ops``: ``StubOps``, a PyTorch stand-in for ``vllm._custom_ops``
  as it behaves on the BI-V100 (V1 decode only, V2 raises).
- ``loader``: ``load_paged_attn`` executes a ``paged_attn.py`` source as a
  fresh module against a given ops object.
- ``cases``: seeded paged KV caches and call arguments for
  ``forward_prefix`` / ``forward_decode``, and naive reference attention.
- ``compare``: ``compare_sources`` runs a vendor and a patched copy side by
  side over a grid of shapes and says, per call, which decode tier each
  ran, how close the outputs are and what each left in the tensors it was
  given (``patcher verify-numerics``).
- ``report`` (no PyTorch): ``NumericsReport``, the lines and exit code
  ``verify-numerics`` prints for a comparison.
- ``sources`` (no PyTorch): ``paged_attn_sources`` runs apply's core in
  memory and returns the shipped ``paged_attn.py`` before and after.
- ``quiet_torch``: the one ``import torch`` of the modules above, without
  the warning PyTorch raises at import when NumPy is absent.
"""

__all__ = ["cases", "compare", "loader", "quiet_torch", "report", "sources", "stub_ops"]
