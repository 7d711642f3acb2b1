"""Report sections of ``python -m validation reproduce`` (one module per key)."""
