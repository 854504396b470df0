"""Run the command line as ``python -m patcher``, and as the ``patcher`` program (``run``)."""

from patcher.interrupt import run_supervised


def run() -> None:
    """Run the ``patcher`` command line in a child process that a watcher stops at once on SIGINT or SIGTERM."""

    def main() -> None:
        from patcher.cli import main as cli

        # One program name whatever the click version or how patcher was started
        # (click 8.1 says "python -m patcher" under -m): hints and --version name it.
        cli(prog_name="patcher")

    run_supervised(main)


if __name__ == "__main__":
    run()
