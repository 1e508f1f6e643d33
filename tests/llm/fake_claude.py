"""A fake `claude` executable for the claude-cli provider tests (standard library only).

A fixture copies this file into a temp directory as an executable named `claude` with a `#!` line for
the test's Python. Its behaviour comes from `control.json` next to it (a fixed location, so nothing has
to travel through the environment, which the provider whitelists):

    {
      "version": "2.1.211 (Claude Code)",      # what --version prints
      "record_dir": "/abs/dir",                # each run appends call-N.json: argv, env, cwd, stdin, modes
      "skip_stdin": false,                     # true: never read stdin (a CLI that exits early)
      "responses": [ {...}, ... ]               # one per model run, in order; the last one repeats
    }

A response object:
    output            the structured_output object (default {"ok": true})
    mode              "ok" | "exit" | "error_flag" | "not_json" | "sleep" | "no_structured" | "flood"
    exit_code         for mode "exit" (default 1)
    model             the modelUsage key (default: the --model argument)
    usage             false → no usage block; or an object replacing it
    subtype, stop_reason
    sleep_s           for mode "sleep": spawn a child that writes its pid to `child_pid_file`, then sleep
    child_pid_file    where the spawned child writes its pid
    probe_paths       answer {"readable": {path: bool}} instead (what a sandbox lets the process read)
    probe_writes      with probe_paths: also try to create each of these files, answer {"writable": {path: bool}}
    echo_key          true: repeat the ANTHROPIC_API_KEY it got in its output (stdout, stderr, the result
                      text and the structured output's "note"), as a confused or hostile CLI might
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONTROL = HERE / "control.json"
COUNTER = HERE / "calls.count"


def _arg(argv: list[str], flag: str) -> str | None:
    if flag in argv:
        i = argv.index(flag)
        return argv[i + 1] if i + 1 < len(argv) else None
    return None


def _mode_of(path: str) -> str | None:
    try:
        return oct(stat.S_IMODE(os.stat(path).st_mode))
    except OSError:
        return None


def _next_run() -> int:
    """This run's number, counted under a lock (concurrent runs of the fake are tested)."""
    with (HERE / "calls.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        n = int(COUNTER.read_text() or "0") + 1 if COUNTER.exists() else 1
        COUNTER.write_text(str(n))
        return n


def _readable(path: str) -> bool:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            Path(path).read_bytes()
    except OSError:
        return False
    return True


def _writable(path: str) -> bool:
    try:
        with open(path, "x", encoding="utf-8") as fh:
            fh.write("written from inside the CLI process\n")
    except OSError:
        return False
    return True


def _record(control: dict, argv: list[str], stdin: str, n: int) -> None:
    record_dir = control.get("record_dir")
    if not record_dir:
        return
    home, tmp, cwd = os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), os.getcwd()
    doc = {
        "argv": argv,
        "env": dict(os.environ),
        "cwd": cwd,
        "stdin": stdin,
        "home": home,
        "tmpdir": tmp,
        "modes": {
            "cwd": _mode_of(cwd),
            "home": _mode_of(home),
            "tmpdir": _mode_of(tmp),
            "parent": _mode_of(os.path.dirname(cwd)),
        },
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        "sid": os.getsid(0),
    }
    Path(record_dir, f"call-{n}.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def main() -> int:
    argv = sys.argv[1:]
    control = json.loads(CONTROL.read_text(encoding="utf-8")) if CONTROL.exists() else {}
    if argv == ["--version"]:
        print(control.get("version", "2.1.211 (Claude Code)"))
        return 0
    responses = control.get("responses") or [{}]
    stdin = "" if control.get("skip_stdin") else sys.stdin.read()
    try:  # inside a sandbox this directory is read-only: then every run is run 1 and nothing is recorded
        n = _next_run()
        _record(control, argv, stdin, n)
    except OSError as exc:
        n = 1
        sys.stderr.write(f"fake claude: cannot record ({exc})\n")
    resp = responses[min(n, len(responses)) - 1]
    mode = resp.get("mode", "ok")
    model = resp.get("model") or _arg(argv, "--model") or "unknown"
    key = os.environ.get("ANTHROPIC_API_KEY", "") if resp.get("echo_key") else ""
    if key:
        sys.stderr.write(f"fake claude: using key {key}\n")
    if mode == "exit":
        sys.stdout.write(f"Invalid API key: {key}\n" if key else "")
        sys.stderr.write("fake claude: failing on purpose\n")
        return int(resp.get("exit_code", 1))
    if mode == "flood":  # far more output than any answer
        block = "x" * 65536
        for _ in range(int(resp.get("blocks", 4096))):
            sys.stdout.write(block)
        return 0
    if mode == "not_json":
        sys.stdout.write("this is not json {" + key)
        return 0
    if mode == "sleep":
        pid_file = resp["child_pid_file"]
        code = f"import os,time; open({pid_file!r},'w').write(str(os.getpid())); time.sleep(600)"
        subprocess.Popen([sys.executable, "-c", code])
        time.sleep(float(resp.get("sleep_s", 600)))
        return 0
    usage: object = {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 0}
    if resp.get("usage") is False:
        usage = None
    elif isinstance(resp.get("usage"), dict):
        usage = resp["usage"]
    is_error = mode == "error_flag"
    doc: dict = {
        "type": "result",
        "subtype": resp.get("subtype", "error_during_execution" if is_error else "success"),
        "is_error": is_error,
        "duration_ms": 5,
        "num_turns": 2,
        "result": ("" if not is_error else "API Error: something broke") + key,
        "stop_reason": resp.get("stop_reason", "end_turn"),
        "session_id": "00000000-0000-4000-8000-000000000000",
        "total_cost_usd": 0.0123,
        "modelUsage": {model: {"inputTokens": 120, "outputTokens": 30, "costUSD": 0.0123}},
    }
    if usage is not None:
        doc["usage"] = usage
    if mode != "no_structured" and not is_error:
        doc["structured_output"] = resp.get("output", {"ok": True})
        if key:
            doc["structured_output"] = {**doc["structured_output"], "note": f"the key is {key}"}
        if resp.get("probe_paths"):  # what the process can read and write (the sandbox tests)
            doc["structured_output"] = {
                "readable": {p: _readable(p) for p in resp["probe_paths"]},
                "writable": {p: _writable(p) for p in resp.get("probe_writes", [])},
            }
    sys.stdout.write(json.dumps(doc, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
