"""``python -m fluxgui`` and the ``fluxgui`` script: the command line (and the window with
no subcommand), through :func:`run`."""

import gc


def run() -> int:
    """Run the command line in this process; return the exit code.

    For a process's start only: start-up makes objects that live as long as the process
    (modules, classes, functions), so collecting while importing frees nothing and costs
    time. Collection starts with the command, past those objects (frozen: never
    traversed again)."""
    gc.disable()
    try:
        from fluxgui.cli import main
    finally:
        gc.freeze()
        gc.enable()
    return main()


if __name__ == "__main__":
    raise SystemExit(run())
