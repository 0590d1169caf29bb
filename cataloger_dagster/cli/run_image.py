"""Build the image Dagster's DockerRunLauncher starts each run in, from deploy/docker/.

It is built like the sandbox image (image.build_in_context: wheels fetched on the host,
network "none" for the build, the same debootstrap base) and holds this package with its
`docker` and `anthropic` extras, each dependency pinned to the version the building environment runs, so
a run in a container runs what the tests ran.  The investigations' sandbox is not inside
it: the run starts the sandbox image beside its own container (deploy/docker/dagster.yaml).

The recipe needs a checkout of the repository (the package's wheel is built from it).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
from importlib import metadata
from pathlib import Path

from cataloger_dagster.resources.defaults import RUN_IMAGE as DEFAULT_RUN_TAG

# image before docker: without the docker extra, image's import says which extra to install
from cataloger_dagster.resources.sandbox import image
from cataloger_dagster.resources.sandbox.image import Progress, SandboxImageError

import docker.errors

RUN_LABEL = "org.cataloger.run-worker"
RUN_HASH_LABEL = "org.cataloger.run-worker.source-hash"
PACKAGE = "cataloger-dagster"
# the run launcher and the Docker sandbox, and the agent a run may ask for
EXTRAS = "anthropic,docker"
# What a run's code is made of: a change to any of them makes the image stale.
_SOURCES = ("cataloger_dagster", "pyproject.toml")  # the package holds its templates and recipes
_SKIP = re.compile(r"(__pycache__|\.pyc$|\.egg-info)")
_WHEEL_TIMEOUT_S = 900


def checkout_root() -> Path:
    """The repository this package runs from; the recipe and the wheel's sources are there."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "deploy" / "docker" / "Dockerfile").is_file() or not (root / "pyproject.toml").is_file():
        raise SandboxImageError(
            f"the run-worker image is built from a checkout of the repository (deploy/docker/Dockerfile "
            f"and pyproject.toml beside cataloger_dagster/), not found at {root}: run the command from "
            "a clone installed with `pip install -e`"
        )
    return root


def constraints() -> list[str]:
    """`name==version` of every distribution of this environment but the package itself."""
    pins = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name and name != PACKAGE:
            pins[name] = f"{name}=={dist.version}"
    return [pins[n] for n in sorted(pins)]


def source_hash(root: Path | None = None) -> str:
    """sha256 over the recipe, the pins and the package's sources: the image's label."""
    root = root or checkout_root()
    h = hashlib.sha256(b"run-image 1\n")
    h.update((root / "deploy" / "docker" / "Dockerfile").read_bytes())
    h.update("\n".join(constraints()).encode())
    for top in _SOURCES:
        path = root / top
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            rel = f.relative_to(root).as_posix()
            if not _SKIP.search(rel):
                h.update(f"\n{rel}\n".encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def run_image_present(tag: str = DEFAULT_RUN_TAG) -> bool:
    """Whether `tag` exists, built from the current sources and pins."""
    client = image.docker_client()
    try:
        labels = (client.api.inspect_image(tag).get("Config") or {}).get("Labels") or {}
    except docker.errors.ImageNotFound:
        return False
    finally:
        client.close()
    return labels.get(RUN_HASH_LABEL) == source_hash()


def _prepare(ctx: Path, root: Path, progress: Progress | None) -> None:
    """The context: the package's wheel in ./package, its dependencies' in ./wheels, pip in ./tools.

    The two folders are apart so the Dockerfile installs the dependencies in a layer of their
    own, which a change to the package's code leaves cached."""
    shutil.copy2(root / "deploy" / "docker" / "Dockerfile", ctx / "Dockerfile")
    package, wheels = ctx / "package", ctx / "wheels"
    package.mkdir()
    wheels.mkdir()
    image._emit(progress, "building the package's wheel\n")
    image._run_streaming(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            "-w",
            str(package),
            str(root),
        ],
        progress,
        _WHEEL_TIMEOUT_S,
        what="building the package's wheel with pip",
    )
    version = metadata.version(PACKAGE)
    (ctx / "requirements.txt").write_text(f"{PACKAGE}[{EXTRAS}]=={version}\n")
    (ctx / "constraints.txt").write_text("\n".join(constraints()) + "\n")
    image._emit(progress, "fetching the run worker's wheels\n")
    image._pip_download(
        ctx / "requirements.txt",
        wheels,
        progress,
        resolve=["--find-links", str(package), "-c", str(ctx / "constraints.txt")],
    )
    for own in wheels.glob(f"{PACKAGE.replace('-', '_')}-*.whl"):
        own.unlink()  # pip copies the package's wheel beside its dependencies; it is in ./package
    image._pip_download(image.recipe_dir() / "build-requirements.txt", ctx / "tools", progress)


def build_run_image(
    base_image: str = image.DEFAULT_BASE, tag: str = DEFAULT_RUN_TAG, *, progress: Progress | None = None
) -> str:
    """Build the run-worker image from `base_image` and the checkout; return its id."""
    root = checkout_root()
    labels = {RUN_LABEL: "1", RUN_HASH_LABEL: source_hash(root), image.BASE_LABEL: base_image}
    return image.build_in_context(
        base_image, tag, lambda ctx: _prepare(ctx, root, progress), labels=labels, progress=progress
    )
