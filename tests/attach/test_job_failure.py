"""The failure message of an attached job's test (`_jobs.job_failure`) shows the workers' own
output, not torchrun's traceback, so that a failure in CI explains itself."""

from __future__ import annotations

import subprocess

from _jobs import job_failure

# The shape of `straggler run -- torchrun ...`'s stderr when one worker aborted at exit and the
# other raised (torch 2.13's torchrun; trimmed).
STDERR = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/x/scripts/train.py", line 24, in <module>
[rank1]: ValueError: the script's own error
terminate called without an active exception
E1124 15:50:11.686000 30978 torch/distributed/elastic/multiprocessing/api.py:1002] failed \
(exitcode: -6) local_rank: 0 (pid: 31010) of binary: /x/python
Traceback (most recent call last):
  File "/x/torch/distributed/run.py", line 1010, in <module>
    main()
  File "/x/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 362, in wrapper
    return f(*args, **kwargs)
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
/x/scripts/train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  rank      : 0 (local_rank: 0)
  exitcode  : -6 (pid: 31010)
  traceback : Signal 6 (SIGABRT) received by PID 31010
============================================================

straggler run: summary of /tmp/reports.jsonl
run 1 of 1: 3 ranks, 12 reports
"""


def test_the_message_keeps_the_workers_output_and_torchruns_table_only():
    message = job_failure(subprocess.CompletedProcess([], 1, "", STDERR))
    assert message.startswith("exit status 1;")
    for kept in ("[rank1]: ValueError: the script's own error",
                 "terminate called without an active exception", "failed (exitcode: -6)",
                 "exitcode  : -6 (pid: 31010)", "Signal 6 (SIGABRT) received by PID 31010"):
        assert kept in message
    for dropped in ("torch/distributed/run.py", "errors/__init__.py", "ChildFailedError",
                    "straggler run: summary", "12 reports", "====="):
        assert dropped not in message


def test_a_failure_without_torchrun_keeps_everything_before_the_summary():
    stderr = "Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 3\n" \
             "\nstraggler run: summary of /tmp/r.jsonl\nrun 1 of 1\n"
    message = job_failure(subprocess.CompletedProcess([], 1, "out\n", stderr))
    assert "KeyError: 3" in message and "a.py" in message and "run 1 of 1" not in message
    assert "stdout (tail):\nout" in message
