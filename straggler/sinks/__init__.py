"""Where a finished report goes besides the caller: the JSON-lines report log and the
Prometheus exporter, both behind `observers.ReportObservers`."""
