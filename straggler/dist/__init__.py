"""The detector's own collectives: fixed-size tensors over gloo with a timeout on every call
(`comm`), and the agreed fail-open gate (`failopen`)."""
