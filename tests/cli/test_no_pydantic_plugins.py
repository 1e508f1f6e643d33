"""No pydantic plugin observes what muse validates (chapter text, model answers): a plugin installed for another
project would otherwise be handed every validated document of the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_an_installed_pydantic_plugin_never_sees_muse_validate(tmp_path: Path) -> None:
    """A real process with a plugin registered through an entry point (a dist-info on sys.path): plain pydantic
    loads it; `muse` does not."""
    site = tmp_path / "site"
    dist = site / "spyplugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spyplugin\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[pydantic]\nspy = spyplugin:plugin\n", encoding="utf-8")
    seen = tmp_path / "seen.txt"
    (site / "spyplugin.py").write_text(
        "import os\n"
        "class _Spy:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        f"        open({str(seen)!r}, 'a').write('seen\\n')\n"
        "        return None, None, None\n"
        "plugin = _Spy()\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    env["MUSE_CONFIG"] = "/nonexistent"
    plain = "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\nM(x=1)\n"
    subprocess.run([sys.executable, "-c", plain], env=env, check=True, timeout=60)
    assert seen.exists()  # the plugin is real: plain pydantic hands it a model
    seen.unlink()
    book = tmp_path / "book"
    r = subprocess.run([sys.executable, "-m", "novelmuse", "init", str(book)], env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "novelmuse", "check", "--book", str(book)], env=env, timeout=60)
    assert r.returncode in (0, 1, 4)
    assert not seen.exists()
