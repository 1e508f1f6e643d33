"""`python -m novelmuse` is `muse`."""

from novelmuse.cli import entry

entry()
