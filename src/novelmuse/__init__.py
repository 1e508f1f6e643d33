"""novelmuse — an AI editorial room for long Chinese web novels (command `muse`)."""

__version__ = "0.1.0"
