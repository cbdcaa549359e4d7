"""straggler's zero-code attach: run at interpreter start when this folder is on PYTHONPATH.

`straggler run` (or `straggler env`) puts this folder first on ``PYTHONPATH`` and sets
``STRAGGLER_AUTO=1``. `straggler.attach.hook.start` reads the variables; with ``STRAGGLER_AUTO``
on, it installs a lazy import hook that wraps ``torch.distributed.init_process_group`` when
torch.distributed is imported; torch itself is not imported. Without it, nothing happens. The
``sitecustomize`` this one shadows (the next one on ``sys.path``) runs afterwards, as if this one
were not there. Nothing here may raise: a failure prints one line and the program runs
unattached (docs/attach.md).
"""

import os
import sys


def _attach() -> None:
    try:
        from straggler.attach.hook import start

        start()
    except Exception as exc:  # noqa: BLE001 - the program must run whatever happens here
        sys.stderr.write(f"straggler: attach failed (loading straggler: {type(exc).__name__}: "
                         f"{exc}); the job runs without straggler detection\n")
        sys.stderr.flush()


def _chain() -> None:
    """Run the next ``sitecustomize`` on sys.path, the one this file shadows, if any."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_attach()
_chain()
