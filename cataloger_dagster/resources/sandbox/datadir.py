"""Private data folders for sandbox sessions: for the sandbox's user only, and never left behind.

A folder is 0700 (plus setgid, so that what the host writes in it belongs to the
sandbox's group and needs no bits for others) and owned by the uid the cells run
as: ``SANDBOX_UID`` when the host is root, on both backends; the invoking user
otherwise (the local backend maps that user to its uid inside; the docker
backend then runs its container as that user, see ``container_user``).
Its name holds the host, pid and start time of the process that made it, so
that a later start can remove the folders of processes that are gone.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from typing import Optional

from .base import SANDBOX_UID, host_identity

PREFIX = "cataloger-sandbox-data-"
_NAME = re.compile(re.escape(PREFIX) + r"(?P<host>.+)\.(?P<pid>\d+)\.(?P<start>\d+)-[^-.]+$")


def data_owner() -> tuple[int, int]:
    """The uid and gid that the cells run as, and that their data belongs to."""
    if os.geteuid() == 0:
        return SANDBOX_UID, SANDBOX_UID
    return os.geteuid(), os.getegid()


def container_user() -> str:
    # a container as the invoking user can read that user's 0700 folders; root gets the sandbox's uid
    return "%d:%d" % data_owner()


def _started(pid: int) -> Optional[str]:
    """When process `pid` started (clock ticks after boot), or None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()[19].decode()


def make_private_dir() -> str:
    me = os.getpid()
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{_host()}.{me}.{_started(me) or 0}-")
    uid, gid = data_owner()
    if os.geteuid() == 0:
        os.chown(path, uid, gid)
    os.chmod(path, 0o2700)
    return path


def remove_stale() -> list[str]:
    """Remove the private folders of this host's processes that are gone (killed runs)."""
    removed: list[str] = []
    if _started(os.getpid()) is None:  # no /proc: the living cannot be told from the dead
        return removed
    top = tempfile.gettempdir()
    try:
        entries = os.listdir(top)
    except OSError:
        return removed
    owners = {os.geteuid(), data_owner()[0]}
    for entry in entries:
        match = _NAME.match(entry)
        if not match or match["host"] != _host() or _started(int(match["pid"])) == match["start"]:
            continue
        path = os.path.join(top, entry)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        # only real folders of ours: never follow a link another user planted
        if stat.S_ISDIR(st.st_mode) and st.st_uid in owners:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _host() -> str:
    return host_identity().replace("/", "_")
