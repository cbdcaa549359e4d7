"""Runtime control of straggler detection over HTTP: Megatron's ``--straggler-ctrlr-port``, safe.

The reporting rank runs a tiny HTTP server in daemon threads. It listens on 127.0.0.1 unless the
user names another address. Requests never act directly: a valid ``POST`` only records the wanted
state, and the training loop picks it up at the next report point, where one broadcast carries
it to every rank (see :class:`straggler.integrations.megatron.StragglerDetectionManager`).

Endpoints (all answers are JSON)::

    GET  /           current state, the state waiting to be applied, and the last report summary
    POST /           JSON object with any of: enabled (bool), gpu_relative_perf_threshold and
                     gpu_individual_perf_threshold (numbers in [0, 1]), report_time_interval
                     (seconds, >= MIN_REPORT_INTERVAL_S)
    POST /toggle     flip ``enabled`` (what any request did in Megatron-LM)

Every request carries ``Authorization: Bearer <token>``: the user's (``token=`` or
``$STRAGGLER_CONTROLLER_TOKEN``) or one generated per job and written to a file only the job's
user can read (the start line in the log names it). Requests from browsers (an ``Origin``
header) and ``Host`` headers naming another machine (DNS rebinding) are refused (`auth`).

Bad requests get a 4xx answer with ``{"error": reason}``; nothing a request sends is executed,
and only the validated values above are kept. The server cannot harm the job it lives in: a
fixed pool of worker threads, a bounded queue of accepted connections (beyond it: 503), an idle
timeout per connection and a deadline per request, and no traceback on the job's stderr when a
client misbehaves or goes away (one debug line instead).

The parts: `settings` (the state and the checks of a request body, pure), `auth` (token,
``Host`` and ``Origin`` checks), `handler` (the endpoints), `service` (`StragglerController`);
the worker pool, queue and deadlines are the package's one HTTP server (`straggler._http`),
which the Prometheus exporter uses too.
"""

from .auth import ENV_TOKEN, ENV_TOKEN_DIR, RequestGuard, token_file_path
from .handler import MAX_BODY_BYTES
from ..._http import IDLE_TIMEOUT_S, LISTEN_BACKLOG, MAX_PENDING, REQUEST_DEADLINE_S, WORKERS
from .service import DEFAULT_HOST, StragglerController
from .settings import (
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    MIN_REPORT_INTERVAL_S,
    ControlState,
    check_control_value,
    check_requested_value,
    json_depth,
    parse_update,
)

__all__ = ["StragglerController", "ControlState", "check_control_value",
           "check_requested_value", "json_depth", "parse_update", "DEFAULT_HOST",
           "MAX_BODY_BYTES", "MAX_JSON_DEPTH", "MAX_INT_DIGITS", "MIN_REPORT_INTERVAL_S",
           "WORKERS", "MAX_PENDING", "IDLE_TIMEOUT_S", "REQUEST_DEADLINE_S", "LISTEN_BACKLOG",
           "ENV_TOKEN", "ENV_TOKEN_DIR", "RequestGuard", "token_file_path"]
