"""Tasks every role shares, and the check that uses them.

- `models_check(role)`: the probe task, one tiny structured call to the model configured for a role;
  `check_models(book, session)` is `muse models check` (configuration checks, then one probe per role).
- the call policy's correction message (``common/correction.txt``), rendered into every task call by
  `roles.correction(role)`.

Registered in prompts.yaml under role ``common``.
"""

from ._models_check import check_models
from ._tasks import CheckReply, ProbeRequest, expected_echo, models_check

__all__ = ["CheckReply", "ProbeRequest", "check_models", "expected_echo", "models_check"]
