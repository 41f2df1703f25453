"""Reaching Ray for ``run --engine ray``: the address forms, a bounded join, the local Ray's own temporary folder,
and a watch on the cluster while a run uses it.

* A cluster address (``auto`` or ``host:port``) is tried first in a child process (``probe``: a TCP look at the
  port, then ``ray.init`` there, killed after ``PROBE_TIMEOUT`` seconds or on cancel): Ray's own join retries an
  unreachable GCS for many minutes and, once it has begun in a process, leaves that process unable to use any other
  Ray. So an address that does not answer is one UserError within a minute, and this process (the dashboard's)
  stays free for the next run, ``local`` included.
* A local Ray keeps its session files in a ``studio-ray-*`` folder of the temporary directory, removed when this
  process shuts Ray down or ends (``atexit``), or by ``cleanup_local`` when the cluster is found gone.
* ``watch_cluster`` looks at the cluster's GCS port every second while a run uses it and calls back once when it
  no longer answers (a killed local cluster, a cluster gone down), so the run ends with one line of its own instead
  of Ray's log lines and its exit minutes later.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from core.errors import UserError

log = logging.getLogger(__name__)

__all__ = ["PROBE_TIMEOUT", "check_ray_address", "cleanup_local", "probe", "quiet_terminal", "ship_worker_code",
           "shutdown", "start_ray", "watch_cluster"]

PROBE_TIMEOUT = 30.0    # seconds a cluster address has to answer a join
CONNECT_TIMEOUT = 5.0   # seconds for the TCP look at its port
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
_ADDRESS = re.compile(rf"(?:ray://)?({_HOST}):([0-9]{{1,5}})", re.IGNORECASE)   # ray:// to refuse it
_RAY_LOCK = threading.Lock()
_STATE: dict = {"address": None, "temp_dirs": [], "work_dirs": [], "quiet": False}   # this process's Ray: its address; its local
                                                                     # Rays' folders; whether its init is silenced

_PROBE = """
import sys
try:
    import ray
    ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR", include_dashboard=False)
    print("STUDIO-PROBE-OK", flush=True)
    ray.shutdown()
except BaseException as exc:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    print("STUDIO-PROBE-ERROR " + text, flush=True)
    sys.exit(3)
"""


def check_ray_address(address) -> str | None:
    """The Ray address normalised — ``local`` (start a Ray in this process), ``auto`` (the cluster this machine is
    part of) or ``host:port`` (a cluster's GCS address: this process joins it as a driver) — None for empty;
    UserError naming the accepted forms otherwise. A Ray Client address (``ray://host:10001``) is refused with the
    way round: Ray Data 2.60 does not run through Ray Client (its executor needs a driver's core worker)."""
    if address is None:
        return None
    text = address.strip() if isinstance(address, str) else None
    if text == "":
        return None
    if text is not None and text.lower() in ("local", "auto"):
        return text.lower()
    m = _ADDRESS.fullmatch(text or "")
    if m is None or not 0 < int(m.group(2)) < 65536:
        raise UserError(f"the Ray address must be local, auto or host:6379 (a cluster's GCS address); got "
                        f"{address!r}")
    if text.lower().startswith("ray://"):
        raise UserError(f"Ray Data does not run through Ray Client ({text}): give the cluster's GCS address "
                        f"{m.group(1)}:6379 (this machine joins as a driver and must be reachable from the cluster), "
                        "or run the command on a cluster node with auto (ray job submit … -- python -m core run …)")
    return f"{m.group(1)}:{int(m.group(2))}"


def ship_worker_code() -> None:
    """Pickle the worker code by value: Ray's workers then need no checkout of this project."""
    from ray import cloudpickle

    from core.models import retry_policy
    from core.runner import ray_mapping, ray_workers

    for module in (retry_policy, ray_mapping, ray_workers):
        cloudpickle.register_pickle_by_value(module)


def _join_hint(address: str) -> str:
    return (f"cannot join the Ray at {address}: {{}} (is it up? a cluster with token authentication needs "
            "RAY_AUTH_MODE=token and its token in RAY_AUTH_TOKEN or ~/.ray/auth_token)")


def probe(address: str, *, timeout: float = PROBE_TIMEOUT, stop=None) -> None:
    """Join the cluster at ``address`` (``auto`` or ``host:port``) from a child process and leave again; UserError
    when it does not answer within ``timeout`` seconds, refuses, or ``stop()`` turns true meanwhile."""
    hint = _join_hint(address)
    if address != "auto":
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT):
                pass
        except OSError as exc:
            raise UserError(hint.format(f"no answer at that port ({exc.strerror or type(exc).__name__})")) from None
    env = {**os.environ, "RAY_BACKEND_LOG_LEVEL": "fatal"}
    proc = subprocess.Popen([sys.executable, "-c", _PROBE, address], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if stop is not None and stop():
                raise UserError(f"cancelled while joining the Ray at {address}")
            if time.monotonic() > deadline:
                raise UserError(hint.format(f"no Ray cluster answered within {timeout:g} s"))
            time.sleep(0.1)
        out = proc.stdout.read().decode("utf-8", "replace") if proc.stdout else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stdout:
            proc.stdout.close()
    if "STUDIO-PROBE-OK" not in out:
        why = out.split("STUDIO-PROBE-ERROR", 1)[-1].strip().splitlines()
        raise UserError(hint.format(why[0] if why and why[0] else f"the join failed (exit {proc.returncode})"))


def quiet_terminal() -> None:
    """For a command in a terminal (the CLI): Ray's own log lines stay out of it — its C++ lines below fatal (the
    driver's, and a local cluster's, whose folder goes at exit anyway), Ray Data's INFO lines, and the one line Ray
    prints when it starts — unless RAY_BACKEND_LOG_LEVEL / RAY_DATA_LOG_LEVEL ask for them."""
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    os.environ.setdefault("RAY_DATA_LOG_LEVEL", "ERROR")
    _STATE["quiet"] = os.environ["RAY_BACKEND_LOG_LEVEL"] == "fatal"


_KEEPER_RELEASE = threading.Event()


def _init(**kwargs) -> None:
    """``ray.init`` from a thread that lives as long as this process's Ray: a local Ray's processes are started
    with a parent-death signal, which Linux sends when the *thread* that started them ends — a Ray started from a
    run's thread (the dashboard's) died with that run, and took the next Ray call of the process down."""
    if threading.current_thread() is threading.main_thread():
        _init_here(**kwargs)
        return
    failed: list[BaseException] = []
    ready = threading.Event()
    _KEEPER_RELEASE.clear()

    def keep() -> None:
        try:
            _init_here(**kwargs)
        except BaseException as exc:  # noqa: BLE001  (handed to the caller)
            failed.append(exc)
        finally:
            ready.set()
        if not failed:
            _KEEPER_RELEASE.wait()   # until ``shutdown``, or the process ends (a daemon thread)

    threading.Thread(target=keep, name="ray-keeper", daemon=True).start()
    ready.wait()
    if failed:
        raise failed[0]


def _init_here(**kwargs) -> None:
    """``ray.init``; with ``quiet_terminal`` in force, with the process's descriptor 2 on /dev/null meanwhile (Ray's
    C++ side writes there directly; a failure still comes back as the exception)."""
    import ray

    if not _STATE["quiet"]:
        ray.init(**kwargs)
        return
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        ray.init(**kwargs)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def work_folder() -> str:
    """A ``studio-ray-run-*`` folder for a run's block files, removed by ``drop_folder`` or ``cleanup_local``."""
    path = tempfile.mkdtemp(prefix="studio-ray-run-")
    _STATE["work_dirs"].append(path)
    return path


def drop_folder(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    if path in _STATE["work_dirs"]:
        _STATE["work_dirs"].remove(path)


def cleanup_local() -> None:
    """Remove the local Ray's temporary folder (its processes stopped or gone) and the runs' work folders."""
    for path in list(_STATE["work_dirs"]):
        drop_folder(path)
    while _STATE["temp_dirs"]:
        shutil.rmtree(_STATE["temp_dirs"].pop(), ignore_errors=True)


def _shutdown_local() -> None:
    try:
        import ray

        if ray.is_initialized():
            ray.shutdown()
    except Exception as exc:  # noqa: BLE001  (at exit: whatever Ray raises, the folder still goes)
        log.debug("ray.shutdown() failed at exit (%s)", type(exc).__name__)
    cleanup_local()


def start_ray(address: str | None = None, *, stop=None) -> str:
    """Start a local Ray (``None`` / ``local``) or join the cluster at ``address``, once per process; returns the
    address in use. Joining another cluster than the one this process already uses is refused (one process talks to
    one Ray); a Ray that cannot be started or reached is one UserError (a cluster address is probed first, see the
    module's docstring)."""
    import ray

    want = check_ray_address(address) or "local"
    with _RAY_LOCK:
        if ray.is_initialized():
            have = _STATE["address"]
            if address and have and want != have:
                raise UserError(f"this process already uses the Ray at {have}; one process talks to one Ray cluster "
                                f"(run the CLI, or restart the app, for {want})")
            return have or want
        if want != "local":
            probe(want, stop=stop)
        try:
            if want == "local":
                temp = tempfile.mkdtemp(prefix="studio-ray-")
                if not _STATE["temp_dirs"]:
                    atexit.register(_shutdown_local)
                _STATE["temp_dirs"].append(temp)
                _init(num_cpus=max(1, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False,
                      logging_level="ERROR", _temp_dir=temp)
            else:
                _init(address=want, log_to_driver=False, logging_level="ERROR")
        except Exception as exc:  # noqa: BLE001  (ConnectionError, RuntimeError, an authentication error …)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            _shutdown_local()
            if want == "local":
                raise UserError(f"cannot start a local Ray: {first}") from None
            raise UserError(_join_hint(want).format(first)) from None
        _STATE["address"] = want
        return want


def shutdown() -> None:
    """Shut this process's Ray down (a local one's folder removed); the next ``start_ray`` starts or joins anew."""
    with _RAY_LOCK:
        _shutdown_local()
        _STATE["address"] = None
        _KEEPER_RELEASE.set()


def watch_cluster(on_lost, *, every: float = 1.0, misses: int = 2) -> threading.Event:
    """Look at the GCS port of this process's Ray every ``every`` seconds; after ``misses`` looks in a row without
    an answer call ``on_lost()`` once. Returns the event that ends the watch."""
    import ray

    host, _, port = ray.get_runtime_context().gcs_address.rpartition(":")
    done = threading.Event()

    def watch() -> None:
        missed = 0
        while not done.wait(every):
            try:
                with socket.create_connection((host.strip("[]"), int(port)), timeout=every):
                    missed = 0
            except OSError:
                missed += 1
                if missed >= misses:
                    done.set()
                    on_lost()
                    return

    threading.Thread(target=watch, name="ray-watch", daemon=True).start()
    return done
