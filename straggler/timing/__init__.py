"""What a training loop enters and wraps, and when reports are due: sections (host clock and
GPU timers), per-op capture, wrapped callables, the report interval."""
