"""`muse studio`: the book in a local web app — the second face over the services the CLI calls.

Pages (desk, chapters, outlines, memory, spend, experiments) are rendered from the HTML report's Jinja2
templates under the studio's own frame; actions call the same service functions as the commands. Security for a
local server that can change files: loopback only unless allowed, a random token per start (an HttpOnly
SameSite=Strict cookie), POST with a CSRF token for every change, Host and Origin checks (see `_security`).

- `serve`: bind, print the link, open the browser, serve until Ctrl-C.
- `create_app`: the guarded ASGI application (tests and benchmarks run it on their own server).
"""

from ._app import create_app
from ._security import Secrets, allowed_hosts, cookie_name
from ._server import Started, bind, is_loopback, serve

__all__ = ["Secrets", "Started", "allowed_hosts", "bind", "cookie_name", "create_app", "is_loopback", "serve"]
