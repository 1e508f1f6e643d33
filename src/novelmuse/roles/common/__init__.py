"""Tasks every role shares, and the check that uses them.

- `models_check(role)`: the probe task, one tiny structured call to the model configured for a role;
  `check_models(book, session)` is `muse models check` (configuration checks, then one probe per role).
- the call policy's correction message (``common/correction.txt``), rendered into every task call by
  `roles.correction(role)`.

Registered in prompts.yaml under role ``common``.
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_getattr

if TYPE_CHECKING:  # each name is imported from its module on first use (see novelmuse._lazy): the probe task
    # (`roles.all_tasks`) without `check_models` and the model layer it runs on
    from ._models_check import check_models
    from ._tasks import CheckReply, ProbeRequest, expected_echo, models_check

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = ["CheckReply", "ProbeRequest", "check_models", "expected_echo", "models_check"]
