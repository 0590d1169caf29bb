"""Build the Docker sandbox image from the recipe shipped in the package, `cataloger_dagster/sandbox_recipe/`.

Nothing here needs a container registry: the base image can be made locally
from a debootstrap rootfs, the Python wheels are fetched on the host by pip
(which CI can reach) and the image build itself runs with network "none".
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from cataloger_dagster.resources.extras import missing_extra

try:
    import docker
    import docker.errors
    from docker.utils import kwargs_from_env
except ImportError as exc:
    raise missing_extra("docker", "building the Docker images") from exc

from cataloger_dagster.resources.defaults import SANDBOX_BASE_IMAGE as DEFAULT_BASE
from cataloger_dagster.resources.defaults import DEBIAN_MIRROR as DEFAULT_MIRROR
from cataloger_dagster.resources.defaults import SANDBOX_IMAGE as DEFAULT_TAG


LABEL = "org.cataloger.sandbox"
HASH_LABEL = "org.cataloger.sandbox.recipe-hash"
BASE_LABEL = "org.cataloger.sandbox.base"

# The interpreter and C library the wheels are chosen for. Bookworm ships
# Python 3.11 and glibc 2.36, matching the host venv; a base with an older
# glibc makes the build's import check fail rather than produce a broken image.
PYTHON_VERSION = "3.11"
GLIBC = (2, 36)

# Bump when the build logic here changes in a way the recipe files don't show.
_RECIPE_FORMAT = "1"
_RECIPE_FILES = ("Dockerfile", "requirements.txt", "build-requirements.txt")
# Reads of a build or import stream may be quiet for a long time (pip
# compiling pyarrow on a loaded 2-core machine), but never forever.
_API_TIMEOUT_S = 1800
_DEBOOTSTRAP_TIMEOUT_S = 1800
_PIP_TIMEOUT_S = 900

Progress = Callable[[str], None]


class SandboxImageError(RuntimeError):
    """The sandbox image (or its base) could not be built or inspected."""


def recipe_dir(override: Path | None = None) -> Path:
    """The directory holding the Dockerfile and requirements: `override`
    (CATALOGER_SANDBOX_RECIPE, from the settings) or the one shipped.

    The shipped one is package data, `cataloger_dagster/sandbox_recipe`, in a
    checkout and in an installed wheel alike.
    """
    package_root = Path(__file__).resolve().parents[2]
    candidates = [Path(override)] if override else []
    candidates += [package_root / "sandbox_recipe"]
    for cand in candidates:
        if (cand / "Dockerfile").is_file():
            return cand
    raise SandboxImageError(
        "sandbox image recipe not found (looked in "
        + ", ".join(str(c) for c in candidates)
        + "); reinstall cataloger-dagster or set CATALOGER_SANDBOX_RECIPE to a "
        "directory holding the Dockerfile"
    )


def recipe_hash(recipe: Path | None = None) -> str:
    """sha256 over the recipe files, stored as a label on the built image."""
    root = recipe_dir(recipe)
    h = hashlib.sha256(f"format={_RECIPE_FORMAT}\n".encode())
    for name in _RECIPE_FILES:
        h.update(f"{name}\n".encode())
        h.update((root / name).read_bytes())
    return h.hexdigest()


def docker_client() -> docker.DockerClient:
    """A client for the engine the environment points at, or a clear error."""
    try:
        client = docker.from_env(timeout=_API_TIMEOUT_S)
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxImageError(
            f"Docker engine not reachable at {_engine_address()}: {exc}. Start it (as root: "
            "`dockerd >/var/log/dockerd.log 2>&1 &`, or `systemctl start docker`), "
            "or run `bash .ci/sandbox.sh`, which installs and starts it; set "
            "DOCKER_HOST if the engine listens elsewhere."
        ) from exc
    return client


def _engine_address() -> str:
    # DOCKER_HOST is docker's own variable: the SDK says which address it would use
    try:
        return kwargs_from_env().get("base_url") or "unix:///var/run/docker.sock"
    except docker.errors.DockerException:
        return "DOCKER_HOST (its TLS settings are not valid)"


def _image_labels(client: docker.DockerClient, tag: str) -> dict[str, str] | None:
    try:
        attrs = client.api.inspect_image(tag)
    except docker.errors.ImageNotFound:
        return None
    return (attrs.get("Config") or {}).get("Labels") or {}


def image_present(tag: str = DEFAULT_TAG, *, current: bool = True, recipe: Path | None = None) -> bool:
    """Whether `tag` exists (and, with `current`, was built from this recipe)."""
    client = docker_client()
    try:
        labels = _image_labels(client, tag)
    finally:
        client.close()
    if labels is None:
        return False
    return not current or labels.get(HASH_LABEL) == recipe_hash(recipe)


def _emit(progress: Progress | None, text: str) -> None:
    if progress is not None and text:
        progress(text)


def _pip_platform_args() -> list[str]:
    # pip does not widen an explicit manylinux_2_N tag to older ones, so
    # every compatible tag is listed.
    arch = platform.machine() or "x86_64"
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(GLIBC[1], 16, -1)]
    tags += [f"manylinux2014_{arch}"]
    if arch in ("x86_64", "i686"):
        tags += [f"manylinux2010_{arch}", f"manylinux1_{arch}"]
    args: list[str] = []
    for tag in tags:
        args += ["--platform", tag]
    return args


def _pip_download(requirements: Path, dest: Path, progress: Progress | None, *, resolve: Sequence[str] = ()) -> None:
    """Wheels for the images' Python (3.11, manylinux up to glibc 2.36) into `dest`.

    Without `resolve` every requirement is taken as pinned and alone (`--no-deps`); with it
    pip resolves the dependencies itself, `resolve` holding its further options (constraints)."""
    abi = "cp" + PYTHON_VERSION.replace(".", "")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--only-binary=:all:",
        "--progress-bar",
        "off",
        "--disable-pip-version-check",
        "--python-version",
        PYTHON_VERSION,
        "--implementation",
        "cp",
        "--abi",
        abi,
        *_pip_platform_args(),
        "-d",
        str(dest),
        "-r",
        str(requirements),
        *(resolve or ["--no-deps"]),
    ]
    _run_streaming(cmd, progress, _PIP_TIMEOUT_S, what=f"fetching the wheels of {requirements.name} with pip")


def _run_streaming(cmd: list[str], progress: Progress | None, timeout: float, *, what: str) -> None:
    """Run `cmd`, forwarding its output to `progress`; raise with its tail on failure."""
    tail: deque[str] = deque(maxlen=30)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    except FileNotFoundError as exc:
        raise SandboxImageError(f"{what} failed: {cmd[0]} not found") from exc
    # The kill timer bounds the whole run even if the child stops printing.
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail.append(line)
            _emit(progress, line)
        rc = proc.wait()
    finally:
        timer.cancel()
    if rc != 0:
        reason = f"timed out after {timeout:.0f}s" if rc == -9 else f"exited {rc}"
        raise SandboxImageError(f"{what} {reason}:\n{''.join(tail)}")


def _prepare_context(ctx: Path, progress: Progress | None, recipe: Path | None) -> None:
    src = recipe_dir(recipe)
    for name in _RECIPE_FILES:
        shutil.copy2(src / name, ctx / name)
    _emit(progress, "fetching wheels for the sandbox image\n")
    _pip_download(ctx / "requirements.txt", ctx / "wheels", progress)
    _pip_download(ctx / "build-requirements.txt", ctx / "tools", progress)


def _base_missing_error(base_image: str) -> SandboxImageError:
    if base_image == DEFAULT_BASE:
        how = (
            "make it without a registry: `cataloger sandbox build-image --debootstrap-base` "
            "(as root, needs debootstrap)"
        )
    else:
        how = (
            f"`docker pull {base_image}`, or make a local one with "
            f"`cataloger sandbox build-image --debootstrap-base --base {base_image}`"
        )
    return SandboxImageError(f"base image {base_image!r} is not present in the engine: {how}")


def _consume_build(chunks: Iterator[dict], progress: Progress | None, tag: str) -> str | None:
    tail: deque[str] = deque(maxlen=40)
    image_id = None
    for chunk in chunks:
        if "error" in chunk:
            detail = (chunk.get("errorDetail") or {}).get("message") or chunk["error"]
            raise SandboxImageError(f"build of {tag!r} failed: {detail.strip()}\n--- last output ---\n{''.join(tail)}")
        text = chunk.get("stream") or chunk.get("status") or ""
        if text:
            tail.append(text if text.endswith("\n") else text + "\n")
            _emit(progress, text)
        aux = chunk.get("aux") or {}
        image_id = aux.get("ID", image_id)
    return image_id


def _remove_if_untagged(client: docker.DockerClient, image_id: str) -> None:
    # Each recipe change would otherwise leave a ~600 MB untagged image behind.
    # One still used by a container (or tagged elsewhere) is left alone.
    try:
        if not client.api.inspect_image(image_id).get("RepoTags"):
            client.api.remove_image(image_id)
    except docker.errors.APIError:
        pass


def build_image(
    base_image: str = DEFAULT_BASE,
    tag: str = DEFAULT_TAG,
    *,
    progress: Progress | None = None,
    recipe: Path | None = None,
) -> str:
    """Build the sandbox image from `base_image` and the recipe in `recipe` (default: the
    one shipped), tag it, return its image id."""
    return build_in_context(
        base_image,
        tag,
        lambda ctx: _prepare_context(ctx, progress, recipe),
        labels={LABEL: "1", HASH_LABEL: recipe_hash(recipe), BASE_LABEL: base_image},
        progress=progress,
    )


def build_in_context(
    base_image: str,
    tag: str,
    prepare: Callable[[Path], None],
    *,
    labels: dict[str, str],
    progress: Progress | None = None,
) -> str:
    """Build `tag` from a fresh context that `prepare` fills (a Dockerfile taking BASE_IMAGE,
    wheels fetched on the host), with network "none"; return its image id.  Serves both the
    sandbox image and the run workers' (cli/run_image.py)."""
    client = docker_client()
    try:
        try:
            client.api.inspect_image(base_image)
        except docker.errors.ImageNotFound:
            raise _base_missing_error(base_image) from None
        try:
            old_id = client.api.inspect_image(tag)["Id"]
        except docker.errors.ImageNotFound:
            old_id = None
        with tempfile.TemporaryDirectory(prefix="cataloger-image-build-") as tmp:
            ctx = Path(tmp)
            prepare(ctx)
            _emit(progress, f"building {tag} from {base_image}\n")
            chunks = client.api.build(
                path=str(ctx),
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
                network_mode="none",
                buildargs={"BASE_IMAGE": base_image},
                labels=labels,
                timeout=_API_TIMEOUT_S,
            )
            streamed_id = _consume_build(chunks, progress, tag)
        try:
            new_id = client.api.inspect_image(tag)["Id"]
        except docker.errors.ImageNotFound:
            raise SandboxImageError(f"the build finished (image {streamed_id}) but {tag!r} is not tagged") from None
        if old_id and old_id != new_id:
            _remove_if_untagged(client, old_id)
        return new_id
    except docker.errors.APIError as exc:
        raise SandboxImageError(f"Docker engine refused the build of {tag!r}: {exc}") from exc
    finally:
        client.close()


def _check_debootstrap_possible() -> None:
    if os.geteuid() != 0:
        raise SandboxImageError(
            "making the base with debootstrap needs root (it creates device nodes "
            "and chroots); run as root or give an existing image with --base"
        )
    if shutil.which("debootstrap") is None:
        raise SandboxImageError(
            "debootstrap is not installed: `apt-get install debootstrap` (or run `bash .ci/sandbox.sh`)"
        )


def _mounted_under(root: Path) -> list[str]:
    prefix = str(root.resolve()) + "/"
    with open("/proc/mounts", encoding="utf-8") as fh:
        points = [line.split()[1] for line in fh]
    return sorted((p for p in points if p.startswith(prefix)), reverse=True)


def _remove_rootfs(root: Path) -> None:
    # A failed debootstrap can leave /proc or /sys mounted inside the rootfs;
    # unmount first, and never let rm cross into another filesystem.
    for point in _mounted_under(root):
        subprocess.run(["umount", "-l", point], check=False, timeout=60)
    subprocess.run(["rm", "-rf", "--one-file-system", str(root)], check=False, timeout=600)


def make_debootstrap_base(
    tag: str = DEFAULT_BASE,
    suite: str = "bookworm",
    *,
    mirror: str | None = None,
    progress: Progress | None = None,
) -> str:
    """Make a minimal Debian image with python3 from a debootstrap rootfs.

    Needs root, debootstrap and the Debian mirror; no registry. Returns the id.
    """
    _check_debootstrap_possible()
    client = docker_client()
    mirror = mirror or DEFAULT_MIRROR
    work = Path(tempfile.mkdtemp(prefix="cataloger-debootstrap-", dir=os.environ.get("TMPDIR", "/var/tmp")))
    rootfs = work / "rootfs"
    try:
        _emit(progress, f"debootstrap {suite} from {mirror} into {rootfs}\n")
        _run_streaming(
            ["debootstrap", "--variant=minbase", "--include=python3", "--components=main", suite, str(rootfs), mirror],
            progress,
            _DEBOOTSTRAP_TIMEOUT_S,
            what="debootstrap",
        )
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (rootfs / junk).glob("*"):
                if entry.is_file():
                    entry.unlink()
        _emit(progress, f"importing the rootfs as {tag}\n")
        return _import_rootfs(client, rootfs, tag)
    except docker.errors.APIError as exc:
        raise SandboxImageError(f"Docker engine refused the import of {tag!r}: {exc}") from exc
    finally:
        client.close()
        _remove_rootfs(work)


def _import_rootfs(client: docker.DockerClient, rootfs: Path, tag: str) -> str:
    repo, _, version = tag.rpartition(":")
    if not repo or "/" in version:
        repo, version = tag, "latest"
    tar = subprocess.Popen(
        ["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."],
        stdout=subprocess.PIPE,
    )
    assert tar.stdout is not None
    stdout = tar.stdout
    try:
        # A generator makes requests send the tar chunked, never whole in memory.
        body = iter(lambda: stdout.read(1 << 20), b"")
        client.api.import_image_from_stream(
            body,
            repository=repo,
            tag=version,
            changes=["ENV LANG=C.UTF-8", 'CMD ["python3"]'],
        )
    finally:
        tar.stdout.close()
        rc = tar.wait(timeout=60)
    if rc != 0:
        raise SandboxImageError(f"tar of the debootstrap rootfs exited {rc}")
    try:
        return client.api.inspect_image(tag)["Id"]
    except docker.errors.ImageNotFound:
        raise SandboxImageError(f"docker import finished but {tag!r} is not present") from None
