"""Long work started from a page (a write): run in its own thread and event loop, its progress kept as a list of
events that any number of pages follow (server-sent events, resumable by Last-Event-ID), cancellable. A cancel is
the asyncio cancellation of the service's task: its model session ends the run `interrupted`, as Ctrl-C does in
the terminal, and a rerun resumes it."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from ..errors import MuseError

#: What the job's work is given: a function to report an event (a kind and its fields).
Emit = Callable[..., None]


@dataclass
class Job:
    """One piece of long work and everything it reported."""

    id: str
    title: str
    events: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    loop: asyncio.AbstractEventLoop | None = None
    task: asyncio.Task[Any] | None = None

    def emit(self, kind: str, **fields: Any) -> None:
        with self.lock:
            self.events.append({"id": len(self.events) + 1, "kind": kind, **fields})

    def since(self, seen: int) -> tuple[list[dict[str, Any]], bool]:
        with self.lock:
            return self.events[seen:], self.done

    def cancel(self) -> bool:
        """Ask the work to stop (False when it has ended already)."""
        if self.done or self.loop is None or self.task is None:
            return False
        self.loop.call_soon_threadsafe(self.task.cancel)
        return True


class Jobs:
    """The studio's running and finished jobs (in memory: the work itself is recorded by its service)."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def running(self) -> Job | None:
        return next((j for j in self._jobs.values() if not j.done), None)

    def start(self, title: str, work: Callable[[Emit], Coroutine[Any, Any, dict[str, Any]]]) -> Job:
        """Run `work(emit)` in a new thread; its result (a dict) is the job's last event, `end`."""
        with self._lock:
            if self.running() is not None:
                raise RuntimeError("a job is running")
            job = Job(secrets.token_hex(8), title)
            self._jobs[job.id] = job

        async def main() -> None:
            job.task = asyncio.current_task()
            try:
                result = await work(job.emit)
                job.emit("end", outcome="ok", **result)
            except asyncio.CancelledError:
                job.emit(
                    "end", outcome="cancelled", text="cancelled: the run is recorded as interrupted; rerun to resume"
                )
            except MuseError as exc:
                job.emit("end", outcome="error", code=exc.code, text=exc.render())
            except Exception as exc:  # a bug: said, never a traceback on the page
                job.emit("end", outcome="error", code="INTERNAL", text=f"error[INTERNAL]: {type(exc).__name__}")
            finally:
                job.done = True

        def thread() -> None:
            loop = asyncio.new_event_loop()
            job.loop = loop
            try:
                loop.run_until_complete(main())
            finally:
                loop.close()

        threading.Thread(target=thread, name=f"studio-job-{job.id}", daemon=True).start()
        return job
