"""The attach's sitecustomize and import hook, in fresh interpreters.

What a process of an attached job pays before it touches torch.distributed: nothing of torch
is imported, the sitecustomize it shadows still runs, and a failure is one line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _jobs import job_env
from straggler.attach import site_dir

PY = sys.executable


def _python(code: str, env: dict[str, str], cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def _attached(**extra: str) -> dict[str, str]:
    return job_env(STRAGGLER_AUTO="1", PYTHONPATH=site_dir(), **extra)


def test_the_hook_imports_no_torch():
    out = _python("import sys; print('torch' in sys.modules, "
                  "any(type(f).__name__ == '_Finder' for f in sys.meta_path))", _attached())
    assert out.stdout.split() == ["False", "True"], out.stderr
    assert out.stderr == ""


def test_without_straggler_auto_no_hook_and_no_torch():
    env = job_env(PYTHONPATH=site_dir())
    out = _python("import sys; print('torch' in sys.modules, "
                  "any(type(f).__name__ == '_Finder' for f in sys.meta_path))", env)
    assert out.stdout.split() == ["False", "False"], out.stderr
    assert out.stderr == ""


def test_torch_distributed_is_wrapped_when_imported():
    code = """
import inspect, torch.distributed as dist
from torch.distributed import init_process_group
from torch.distributed.distributed_c10d import init_process_group as c10d_init
orig = dist.init_process_group.__straggler_original__
print(init_process_group is dist.init_process_group is c10d_init,
      inspect.signature(init_process_group) == inspect.signature(orig),
      dist.init_process_group.__name__, dist.init_process_group.__module__,
      hasattr(dist.destroy_process_group, '__straggler_original__'),
      dist.__loader__.__class__.__name__)
"""
    out = _python(code, _attached())
    assert out.stdout.split() == ["True", "True", "init_process_group",
                                  "torch.distributed.distributed_c10d", "True",
                                  "SourceFileLoader"], out.stderr


def test_the_shadowed_sitecustomize_still_runs(tmp_path):
    other = tmp_path / "theirs"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.THEIRS = 42\n")
    for env in (_attached(), job_env()):
        env["PYTHONPATH"] = f"{site_dir()}:{other}"
        out = _python("import sitecustomize; print(THEIRS, sitecustomize.__file__)", env)
        assert out.stdout.split() == ["42", str(other / "sitecustomize.py")], out.stderr


_INIT = ("import torch.distributed as dist; "
         "dist.init_process_group('gloo', init_method='file://{store}', rank=0, world_size=1); "
         "from straggler.attach import worker; print('ran', worker.current() is None); "
         "dist.destroy_process_group()")


def test_a_bad_variable_prints_one_line_at_init_and_the_program_runs(tmp_path):
    # A process that never calls init_process_group (the launcher, a DataLoader worker, a
    # tool started with the job's environment) says nothing: it printed the line too, so a
    # 4-rank torchrun job printed 5 lines that each said "the job runs without ...".
    env = _attached(STRAGGLER_REPORT_INTERVAL="banana")
    quiet = _python("import torch.distributed as dist; print('ran')", env)
    assert quiet.stdout.split() == ["ran"] and quiet.stderr == "", quiet.stderr
    out = _python(_INIT.format(store=tmp_path / "store"), env)
    assert out.stdout.split() == ["ran", "True"], out.stderr  # unattached
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("straggler: attach failed (reading the environment: ValueError: "
                               "`STRAGGLER_REPORT_INTERVAL='banana'` must be")
    assert lines[0].endswith("the job runs without straggler detection")


def test_straggler_auto_alone_attaches_through_the_installed_pth():
    import site

    pth = [p for d in site.getsitepackages() if (p := Path(d) / "straggler_attach.pth").exists()]
    assert pth, "straggler_attach.pth is not installed (make install)"
    out = _python("import torch.distributed as dist; print(hasattr(dist.init_process_group, "
                  "'__straggler_original__'))", job_env(STRAGGLER_AUTO="1"))
    assert out.stdout.strip() == "True" and out.stderr == ""
    off = _python("import torch.distributed as dist; print(hasattr(dist.init_process_group, "
                  "'__straggler_original__'))", job_env())
    assert off.stdout.strip() == "False"


def test_a_bad_straggler_auto_is_named(tmp_path):
    quiet = _python("print('ran')", job_env(STRAGGLER_AUTO="banana"))
    assert quiet.stdout.strip() == "ran" and quiet.stderr == "", quiet.stderr
    out = _python(_INIT.format(store=tmp_path / "store"), job_env(STRAGGLER_AUTO="banana"))
    assert out.stdout.split() == ["ran", "True"], out.stderr
    assert out.stderr.count("`STRAGGLER_AUTO='banana'` must be one of") == 1, out.stderr


def test_straggler_disable_leaves_the_process_unattached(tmp_path):
    # init_process_group is wrapped (so that it tells the other ranks: docs/attach.md), but no
    # detector starts and nothing is printed.
    out = _python("import torch.distributed as dist; "
                  f"dist.init_process_group('gloo', init_method='file://{tmp_path}/store', "
                  "rank=0, world_size=1); from straggler.attach import worker; "
                  "print(worker.current() is None); dist.destroy_process_group()",
                  _attached(STRAGGLER_DISABLE="1"))
    assert out.stdout.strip() == "True" and out.stderr == "", out.stderr


_THREADS_LEFT = """
import os, torch, torch.distributed as dist
def threads(): return len(os.listdir('/proc/self/task'))  # gloo's threads are native ones
before = threads()
dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1)
opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)  # imports torch._dynamo
dist.all_reduce(torch.ones(1))
dist.destroy_process_group()
print('threads left', threads() - before)
"""


def test_destroy_process_group_ends_the_gloo_threads_of_an_attached_script():
    """An optimizer built after init_process_group keeps the default group's gloo threads alive
    past destroy_process_group() in torch 2.13 (they can abort the job at exit, docs/detector.md
    "Exit"); the attach's init_process_group imports what binds the group first: none is left."""
    plain = _python(_THREADS_LEFT, job_env())
    attached = _python(_THREADS_LEFT, _attached(STRAGGLER_QUIET="1"))
    # The premise (torch's): when a torch release frees the group itself, the workaround can go.
    assert int(plain.stdout.split()[-1]) > 0, plain.stdout + plain.stderr
    assert attached.stdout.split()[-1] == "0", attached.stdout + attached.stderr
