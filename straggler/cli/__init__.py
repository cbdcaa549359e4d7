"""The ``straggler`` command: read report logs, plot them, check the host, run the demo.

    straggler summarize LOG [LOG ...]      top stragglers, causes, time slow, time lost
    straggler plot LOG -o heatmap.png      ranks x reports heat map of scores
    straggler plot LOG --waits -o waits.png   who the job waits for, per report
    straggler doctor                       what this host offers (CUDA, NVML, torch, env)
    straggler build-ops                    build the native op observer for this torch now
    straggler demo [DEMO ARGS]             the README demo (examples/demo.py)
    straggler run [OPTIONS] -- COMMAND...  run an unchanged training command, attached
    straggler env [OPTIONS]                the attach's variables, as shell export lines

Exit status: 0 on success, 1 on an error (the message names the file, or ``FILE:LINE``), 2 on
bad arguments (argparse), 141 (as a process killed by SIGPIPE) when the reader of the output
went away (``straggler summarize LOG | head``), without a message.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

__all__ = ["main"]

EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a process killed by SIGPIPE


def _int_at_least(low: int, what: str) -> Callable[[str], int]:
    """An argparse type: an int >= `low` (argparse then exits 2 with the message)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"`{text}` must be {what}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"`{value}` must be {what}")
        return value

    return parse


def _read_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--skip-bad", action="store_true",
                   help="skip lines that are not valid records (counted on stderr) instead of "
                        "stopping at the first")
    p.add_argument("--run", default=None, metavar="RUN_ID",
                   help="only the records of this run id (a log two jobs wrote holds two)")


def _version() -> str:
    from .._version import package_version

    return package_version()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="straggler", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("summarize", help="top stragglers, their causes, time slow, time lost",
                       description="Summarize report logs (rotated files LOG.N included).")
    s.add_argument("logs", nargs="+", metavar="LOG", help="report log(s) (docs/reportlog.md)")
    s.add_argument("--top", type=_int_at_least(1, "a positive integer"), default=10,
                   help="stragglers listed (default 10)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    _read_options(s)

    pl = sub.add_parser("plot", help="ranks x reports heat map of scores (PNG, SVG, PDF)",
                        description="Heat map of each rank's lowest relative score per report; "
                                    "flagged cells marked x, confirmed cells boxed, node "
                                    "boundaries drawn. Needs matplotlib.")
    pl.add_argument("logs", nargs="+", metavar="LOG", help="report log(s)")
    pl.add_argument("-o", "--output", required=True, help="image file to write (e.g. heat.png)")
    pl.add_argument("--max-rows", type=_int_at_least(2, "an integer >= 2"), default=256,
                    help="rows drawn at most; more ranks are aggregated (min) (default 256)")
    pl.add_argument("--max-cols", type=_int_at_least(2, "an integer >= 2"), default=400,
                    help="columns drawn at most; more reports are aggregated (default 400)")
    pl.add_argument("--title", default=None, help="figure title")
    pl.add_argument("--waits", action="store_true",
                    help="plot who the job waits for at its collectives instead: time lost to "
                         "each culprit rank per report (docs/culprits.md)")
    _read_options(pl)

    sub.add_parser("doctor", help="what this host offers for straggler detection, and fixes",
                   description="Check the CUDA driver, NVML, torch CUDA, the process-group "
                               "environment and the FT launcher; always exits 0.")

    sub.add_parser("build-ops", help="build the native op observer for this torch now",
                   description="Build straggler._ops for the installed torch into the build "
                               "cache (if the package has none for it) and say which observer "
                               "the detector gets; exits 1 when it is not the native one.")

    r = sub.add_parser("run", help="run an unchanged training command with straggler detection",
                       description="Run COMMAND (e.g. `torchrun --nproc-per-node 4 train.py`) "
                                   "with the detector attached to every worker: no change to "
                                   "the script (docs/attach.md). COMMAND's exit status is "
                                   "returned unchanged.")
    from .run import add_arguments

    add_arguments(r)
    r.add_argument("--no-summary", action="store_true",
                   help="no summary of --report-log on stderr after COMMAND ended")
    r.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND...",
                   help="the command to run, after `--`")

    e = sub.add_parser("env", help="the attach's variables as shell export lines",
                       description="Print `export NAME=VALUE` lines that attach the detector "
                                   "to every Python process started in this shell "
                                   "(`eval \"$(straggler env ...)\"; srun python train.py`).")
    add_arguments(e)

    d = sub.add_parser("demo", help="run the README demo (4 CPU ranks, one slowed)",
                       description="Run examples/demo.py; arguments after `demo` go to it "
                                   "(`straggler demo --help` shows them).", add_help=False)
    d.add_argument("demo_args", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``straggler`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["demo"]:  # everything after `demo` is the demo's, in order
        args = argparse.Namespace(command="demo", demo_args=argv[1:])
    elif argv[:1] == ["run"] and "--" in argv:  # options before `--`, the command after it
        cut = argv.index("--")
        args = _parser().parse_args(argv[:cut])
        args.cmd = argv[cut + 1:]
    else:
        args = _parser().parse_args(argv)
    if args.command == "run":
        if args.cmd[:1] == ["--"]:
            args.cmd = args.cmd[1:]
        if not args.cmd:  # a usage error, as a bad option: status 2
            print("straggler run: error: no command to run: "
                  "`straggler run [OPTIONS] -- COMMAND...`", file=sys.stderr)
            return 2
    try:
        if args.command == "summarize":
            from .summarize import run_summarize

            status = run_summarize(args.logs, top=args.top, as_json=args.json,
                                   skip_bad=args.skip_bad, run=args.run)
            sys.stdout.flush()  # here, so that a reader gone away is seen in this try
            return status
        if args.command == "plot":
            from .plot import run_plot

            return run_plot(args.logs, args.output, max_rows=args.max_rows,
                            max_cols=args.max_cols, title=args.title, skip_bad=args.skip_bad,
                            run=args.run, waits=args.waits)
        if args.command == "doctor":
            from .doctor import run_doctor

            return run_doctor()
        if args.command == "build-ops":
            from .doctor import run_build_ops

            return run_build_ops()
        if args.command == "run":
            from .run import run_attached

            return run_attached(args)
        if args.command == "env":
            from .run import print_env

            return print_env(args)
        from .demo import run_demo

        return run_demo(args.demo_args)
    except BrokenPipeError:
        # The reader (head, less) has gone: say nothing, and keep the interpreter's final
        # flush from failing too.
        with contextlib.suppress(OSError, ValueError):  # stdout may be no file at all
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        return EXIT_BROKEN_PIPE
    except (OSError, ValueError, ImportError) as exc:
        print(f"straggler {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
