"""What the local (bubblewrap) sandbox guarantees, checked from inside a cell and from the host.

CI runs this suite as root, the case that matters most: bwrap as root must not hand
the cell host root.  test_a_non_root_host_gets_the_same_guarantees covers the other
path (an unprivileged user namespace) by running the host as nobody.  The seccomp
filter and the cgroups have their own modules' tests (test_seccomp.py, test_cgroup.py).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import cataloger_dagster
from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource
from cataloger_dagster.resources.sandbox.local import SANDBOX_UID

MEMORY_MB, TMP_MB = 512, 16
AS_ROOT = os.geteuid() == 0
# as root the sandbox is host uid 10001; otherwise it is the invoking user
HOST_UID = SANDBOX_UID if AS_ROOT else os.getuid()


def _sandbox(**overrides) -> SandboxResource:
    settings = dict(backend="local", timeout_s=20, memory_mb=MEMORY_MB, pids=64, tmp_size_mb=TMP_MB)
    return SandboxResource(**{**settings, **overrides})


def _run(runtime, code: str, timeout_s: float = 30):
    r = runtime.execute(code, timeout_s=timeout_s)
    assert r.ok, r.error
    return json.loads(r.stdout)


# ---------------------------------------------------------------- privileges
def test_every_sandboxed_process_is_an_unprivileged_host_user(local_sandbox, host_status):
    with _sandbox().session() as rt:
        child = _run(rt, "import json, subprocess\nchild = subprocess.Popen(['sleep', '60'])\n"
                         "print(json.dumps(child.pid))")
        for ns_pid in (rt.supervisor_pid, rt.worker_pid, child):
            status = host_status(ns_pid)
            assert status["Uid"].split() == [str(HOST_UID)] * 4, status["Uid"]
            assert status["Gid"].split() == [str(HOST_UID)] * 4, status["Gid"]
            assert status["Groups"] == ""
            for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
                assert int(status[caps], 16) == 0, (caps, status[caps])
            assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
        assert _run(rt, "import json, os\nchild.kill(); child.wait()\nprint(json.dumps(os.getuid()))") \
            == SANDBOX_UID


def test_proc_sys_and_sysrq_cannot_be_written(local_sandbox):
    host_before = {p: Path(p).read_text() for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness")}
    with _sandbox().session() as rt:
        out = _run(rt, """
import json, os
tried, opened, errors = 0, [], set()
for top, dirs, files in os.walk('/proc/sys'):
    for name in files + ['../../sysrq-trigger']:
        tried += 1
        try:
            os.close(os.open(os.path.join(top, name), os.O_WRONLY))
            opened.append(os.path.join(top, name))
        except OSError as exc:
            errors.add(exc.errno)
for path, value in (('/proc/sys/kernel/core_pattern', '|/tmp/x'), ('/proc/sys/vm/swappiness', '7')):
    try:
        with open(path, 'w') as f:
            f.write(value)
        opened.append(path)
    except OSError as exc:
        errors.add(exc.errno)
print(json.dumps({"tried": tried, "opened": opened, "errors": sorted(errors)}))
""")
    assert out["tried"] > 200 and out["opened"] == [], out
    assert errno.EROFS in out["errors"]
    assert {p: Path(p).read_text() for p in host_before} == host_before


# ---------------------------------------------------------------- sizes
def test_tmp_and_dev_shm_stop_at_their_size_and_dev_is_read_only(local_sandbox):
    with _sandbox().session() as rt:
        out = _run(rt, """
import errno, json, os
out = {}
for folder in ('/tmp', '/dev/shm'):
    written, i = 0, 0
    try:
        while True:  # files of 4 MiB, so that RLIMIT_FSIZE is not what stops it
            with open('%s/fill%d' % (folder, i), 'wb') as f:
                for _ in range(4):
                    f.write(b'0' * (1 << 20)); f.flush(); written += 1
            i += 1
    except OSError as exc:
        out[folder] = [written, errno.errorcode[exc.errno]]
    for name in os.listdir(folder):
        if name.startswith('fill'):  # only ours: an interpreter under /tmp has its parent folders here
            os.remove(os.path.join(folder, name))
for path in ('/dev/x', '/dev/null'):
    try:
        with open(path, 'w') as f:
            f.write('x')
        out[path] = 'written'
    except OSError as exc:
        out[path] = errno.errorcode[exc.errno]
mounts = [line.split() for line in open('/proc/self/mountinfo')]
out['unsized'] = [m[4] for m in mounts if m[m.index('-') + 1] == 'tmpfs'
                  and not m[5].startswith('ro') and 'size=' not in m[-1]]
print(json.dumps(out))
""")
    for folder in ("/tmp", "/dev/shm"):
        written, code = out[folder]
        assert code == "ENOSPC" and TMP_MB - 4 <= written <= TMP_MB, out
    assert out["/dev/x"] == "EROFS" and out["/dev/null"] == "written"
    assert out["unsized"] == [], out


# ---------------------------------------------------------------- refusing as root
def test_without_setpriv_root_is_refused(local_sandbox, data_dir, tmp_path, monkeypatch):
    only_bwrap = tmp_path / "bin"
    only_bwrap.mkdir()
    (only_bwrap / "bwrap").symlink_to(shutil.which("bwrap"))
    monkeypatch.setenv("PATH", str(only_bwrap))
    if AS_ROOT:
        with pytest.raises(SandboxError, match=r"setpriv.*util-linux.*backend='docker'"):
            with _sandbox().session(str(data_dir)):
                pass
    else:
        with _sandbox().session(str(data_dir)) as rt:
            assert rt.execute("1 + 1").result == "2"


def test_a_data_dir_the_sandbox_user_cannot_read_is_refused(local_sandbox, data_dir):
    data_dir.chmod(0o700)
    if AS_ROOT:
        with pytest.raises(SandboxError, match=f"not readable by the sandbox's uid {SANDBOX_UID}"):
            with _sandbox().session(str(data_dir)):
                pass
        os.chown(data_dir, SANDBOX_UID, SANDBOX_UID)  # as the snapshot writer leaves it
    with _sandbox().session(str(data_dir)) as rt:
        assert rt.execute("import os\nos.listdir('/data')").result == "['table.csv']"


# ---------------------------------------------------------------- a host that is not root
NOT_ROOT_HOST = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
from cataloger_dagster.resources.sandbox import SandboxResource
with SandboxResource(backend="local", timeout_s=20, memory_mb=512, tmp_size_mb=16).session(sys.argv[1]) as rt:
    r = rt.execute('''
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
try:
    open('/proc/sys/kernel/core_pattern', 'w')
    proc_sys = 'written'
except OSError as exc:
    proc_sys = exc.errno
print(json.dumps({"uid": os.getuid(), "data": os.listdir('/data'), "proc_sys": proc_sys,
                  "unshare": libc.unshare(0x10000000) == -1 and ctypes.get_errno(),
                  "status": open('/proc/self/status').read()}))
''')
    out = json.loads(r.stdout)
    def ours(pid):
        # other sandboxes on this host (other runs) have a worker of the same pid inside theirs
        while pid not in ('0', '1'):
            try:
                pid = open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()[1]
            except OSError:
                return False
            if pid == str(os.getpid()):
                return True
        return False
    host = None
    for pid in os.listdir('/proc'):
        try:
            status = open('/proc/%s/status' % pid).read()
        except OSError:
            continue
        if 'NSpid:\\t%s\\t%d\\n' % (pid, rt.worker_pid) in status and ours(pid):
            host = [l for l in status.splitlines() if l.startswith('Uid:')][0].split()[1:]
    out["host_uid"] = host
    print(json.dumps(out))
"""


def test_a_non_root_host_gets_the_same_guarantees(local_sandbox, tmp_path):
    data = Path(tempfile.mkdtemp(prefix="cataloger-nonroot-"))
    try:
        (data / "t.csv").write_text("a\n1\n")
        argv = [sys.executable, "-c", NOT_ROOT_HOST, str(data)]
        user = os.getuid()
        if AS_ROOT:
            user = 65534  # nobody
            for path in (data, data / "t.csv"):
                os.chown(path, user, user)
            argv = _as_nobody(argv)
        env = {"PATH": os.environ["PATH"], "HOME": str(data),
               "PYTHONPATH": str(Path(cataloger_dagster.__file__).parents[1])}
        out = subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(data)
    assert result["uid"] == SANDBOX_UID and result["data"] == ["t.csv"]
    assert result["host_uid"] == [str(user)] * 4
    assert result["proc_sys"] in (errno.EROFS, errno.EACCES) and result["unshare"] == errno.EPERM
    status = dict(line.split(":\t", 1) for line in result["status"].splitlines() if ":\t" in line)
    assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0
    assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2"


def _as_nobody(argv: list[str]) -> list[str]:
    """argv run as nobody, in a mount namespace where the interpreter is reachable to it
    (a pyenv under root's 0700 home is not, otherwise)."""
    outer = [shutil.which("bwrap"), "--dev-bind", "/", "/", "--tmpfs", "/root"]
    for prefix in sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}):
        for parent in reversed(Path(prefix).parents[:-1]):
            outer += ["--perms", "0755", "--dir", str(parent)]
        outer += ["--ro-bind", prefix, prefix]
    return outer + ["--", shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups",
                    "--", *argv]
