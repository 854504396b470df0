"""Run the CLI as ``python -m patcher``."""

from patcher.cli import main

main()
