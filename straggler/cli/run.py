"""``straggler run [OPTIONS] -- COMMAND...``: run an unchanged training command, attached.

COMMAND (``torchrun --nproc-per-node 4 train.py``, ``python train.py``, ``srun ...``) runs with
the attach's environment (`straggler.attach.attach_env`): ``STRAGGLER_AUTO=1``, the settings,
and the attach's ``sitecustomize`` first on ``PYTHONPATH``. Its standard streams, its exit
status (a death by signal included) and its computation are its own; with ``--report-log``,
the log's summary follows on stderr once it ended. ``straggler env [OPTIONS]`` prints the same
variables as shell ``export`` lines, for launchers that take their own command line (Slurm's
``srun``, ``ft_launcher``). docs/attach.md.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from ..attach import AttachSettings, attach_env
from ..attach.settings import STEP_MODES

__all__ = ["add_arguments", "run_attached", "print_env"]


def _checked(check: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type from `check` (text -> value, ValueError saying what is wrong): a bad
    value then exits 2 with the usage and the option's name, as a malformed one does."""
    def parse(text: str) -> Any:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _seconds(allow_zero: bool) -> Callable[[str], Any]:
    what = "a finite number of seconds >= 0" if allow_zero else "a positive number of seconds"

    def check(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise ValueError(f"`{text}` must be {what}")
        return value

    return _checked(check)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 0 < value < 65536:
        raise ValueError(f"`{text}` must be a port between 1 and 65535")
    return value


def _hang_timeout(text: str) -> str:
    from .._env import HANG_TIMEOUT

    try:
        HANG_TIMEOUT.parse("--hang-timeout", text)
    except ValueError:
        raise ValueError(f"`{text}` must be seconds (> 0), auto or off") from None
    return text.strip()


def _log_path(text: str) -> str:
    if not text.strip():
        raise ValueError(f"`{text}` must be a file path")
    if os.path.isdir(text):
        raise ValueError(f"`{text}` is a directory: give a file path in it (`{text}/s.jsonl`)")
    return os.path.abspath(text)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options `straggler run` and `straggler env` share (a bad value exits 2)."""
    p.add_argument("--report-interval", type=_seconds(allow_zero=True), default=60.0,
                   metavar="S", help="seconds between reports (default 60; 0: every step)")
    p.add_argument("--report-log", type=_checked(_log_path), default=None, metavar="PATH",
                   help="append one JSON line per report to PATH (docs/reportlog.md)")
    p.add_argument("--prometheus", type=_checked(_port), default=None, metavar="PORT",
                   help="serve the latest report on 127.0.0.1:PORT (docs/metrics.md)")
    p.add_argument("--step", choices=STEP_MODES, default="auto",
                   help="the step boundary: the optimizer's step, else each collective on the "
                        "default group (auto, the default), or only one of them")
    p.add_argument("--comm-timeout", type=_seconds(allow_zero=False), default=120.0,
                   metavar="S", help="timeout of the detector's own collectives (default 120)")
    p.add_argument("--quiet", action="store_true",
                   help="no per-report line on the reporting rank's stderr")
    p.add_argument("--hang-timeout", type=_checked(_hang_timeout), default=None, metavar="S",
                   help="name the rank(s) a hung job waits for after S seconds without "
                        "progress: seconds, auto (the default: learned from the steps) or off "
                        "(docs/hang.md)")


def _settings(args: argparse.Namespace) -> AttachSettings:
    return AttachSettings(report_interval_s=args.report_interval, step=args.step,
                          quiet=args.quiet, comm_timeout_s=args.comm_timeout)


def _env(args: argparse.Namespace) -> dict[str, str]:
    """The attach's variables for `args` (their values already checked by the parser)."""
    env = attach_env(_settings(args), report_log=args.report_log, prometheus=args.prometheus)
    if args.hang_timeout is not None:
        from .._env import HANG_TIMEOUT

        env[HANG_TIMEOUT.name] = args.hang_timeout
    return env


def print_env(args: argparse.Namespace) -> int:
    """`straggler env`: the attach's variables as ``export NAME=VALUE`` lines; 0."""
    env = _env(args)
    for name in sorted(env):
        if (name.startswith("STRAGGLER_") or name == "PYTHONPATH") \
                and os.environ.get(name) != env[name]:
            print(f"export {name}={shlex.quote(env[name])}")
    return 0


def run_attached(args: argparse.Namespace) -> int:
    """`straggler run`: COMMAND's exit status (128 + N, or the same signal, if it was killed)."""
    command = list(args.cmd)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise ValueError("no command to run: `straggler run [OPTIONS] -- COMMAND...`")
    env = _env(args)
    try:
        child = subprocess.Popen(command, env=env)
    except FileNotFoundError:
        print(f"straggler run: error: {command[0]!r}: command not found", file=sys.stderr)
        return 127
    except PermissionError:
        print(f"straggler run: error: {command[0]!r}: permission denied", file=sys.stderr)
        return 126
    status = _wait(child)
    log = env.get("STRAGGLER_REPORT_LOG", "").replace("{rank}", "0")  # the reporting rank's
    if log and not args.no_summary:
        if os.path.exists(log):
            _summary(log)
        else:  # silence would read as "no straggler"
            ended = (f"was stopped by {signal.Signals(-status).name}" if status < 0
                     and -status in signal.valid_signals() else "ended")
            print(f"\nstraggler run: no summary: there is no report log at {log} (the job "
                  f"{ended} before its first report, --report-interval "
                  f"{args.report_interval:g} s; no process called init_process_group; or the log "
                  "could not be written there: see the job's output)", file=sys.stderr)
    if status < 0:  # killed by a signal: end the same way, so the caller sees the same death
        with contextlib.suppress(ValueError, OSError):
            signal.signal(-status, signal.SIG_DFL)
            os.kill(os.getpid(), -status)
        return 128 - status
    return status


def _wait(child: subprocess.Popen[Any]) -> int:
    """Wait for `child`: its status, or minus the signal that stopped this command.

    SIGTERM and SIGHUP are passed on. A Ctrl-C at the terminal reaches every process of the
    foreground group, the child's included, so SIGINT is passed on only when this process is
    not in the terminal's foreground group (``kill -INT``, a supervisor): as SIGTERM, which
    stops torchrun's workers without a KeyboardInterrupt traceback each. Stopped by a signal
    and the child ended by it (or by the SIGTERM standing for SIGINT): minus that signal.
    """
    received: list[int] = []

    def forward(signum: int, _frame: Any) -> None:
        received.append(signum)
        if signum == signal.SIGINT and _in_terminal_foreground():
            return  # the terminal's Ctrl-C reached the child too
        with contextlib.suppress(OSError):
            child.send_signal(signal.SIGTERM if signum == signal.SIGINT else signum)

    previous: dict[int, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave them
            previous[sig] = signal.signal(sig, forward)
    try:
        status = child.wait()
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
    if received and status < 0 and -status in (received[0], signal.SIGTERM):
        return -received[0]
    return status


def _in_terminal_foreground() -> bool:
    """Whether this process is in its terminal's foreground process group."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False  # no controlling terminal
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(fd)


def _summary(log: str) -> None:
    from .summarize import run_summarize

    print(f"\nstraggler run: summary of {log}", file=sys.stderr)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            run_summarize([log])
    except (OSError, ValueError) as exc:
        print(f"straggler run: no summary: {exc}", file=sys.stderr)
