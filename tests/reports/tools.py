"""External programs some report tests need (Debian's chromium and epubcheck): absent on a developer
machine they skip with the reason shown; under CI (CI=true) their absence fails — `.ci/run` installs them."""

from __future__ import annotations

import os
import shutil

import pytest


def require(path: str | None, package: str) -> str:
    """`path` if the program was found; else skip (locally) or fail (CI) saying how to install it."""
    if path:
        return path
    message = f"{package} is not installed — `apt-get install -y {package}` (.ci/run installs it before the tests)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def epubcheck() -> str:
    """The epubcheck program, or skip/fail (see `require`)."""
    return require(shutil.which("epubcheck"), "epubcheck")


def epubcheck_command() -> list[str]:
    """How to run Debian's epubcheck: its /usr/bin/epubcheck is a jar that needs binfmt_misc, which
    containers often lack, so the jar is run with java directly when it is there."""
    jar = "/usr/share/java/epubcheck.jar"
    java = shutil.which("java")
    if java and os.path.isfile(jar):
        return [java, "-jar", jar]
    return [epubcheck()]
