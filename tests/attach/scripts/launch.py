"""A minimal launcher (a lighter torchrun for tests): `python launch.py N script.py [ARGS]`.

Starts N Python processes of the script with the variables torchrun sets (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT), waits for all, and exits
with the first non-zero exit status (0 when all succeeded). `LAUNCH_RANK<r>_<NAME>=VALUE` in its
environment sets NAME=VALUE for rank r alone (a node with its own environment). No import of
torch or straggler.
"""

import os
import socket
import subprocess
import sys

n, command = int(sys.argv[1]), sys.argv[2:]
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
procs = []
for rank in range(n):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(n), LOCAL_RANK=str(rank),
               LOCAL_WORLD_SIZE=str(n), GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port))
    prefix = f"LAUNCH_RANK{rank}_"
    env.update({k[len(prefix):]: v for k, v in os.environ.items() if k.startswith(prefix)})
    procs.append(subprocess.Popen([sys.executable, *command], env=env))
codes = [p.wait() for p in procs]
sys.exit(next((c for c in codes if c), 0))
