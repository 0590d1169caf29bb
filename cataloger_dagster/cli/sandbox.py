"""`cataloger sandbox ...`: build the Docker sandbox image.

Registered in the main CLI with `main.add_command(sandbox)`; also runnable
alone as `python -m cataloger_dagster.cli.sandbox build-image`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from cataloger_dagster.cli.options import examples, json_option
from cataloger_dagster.resources.defaults import RUN_IMAGE, SANDBOX_BASE_IMAGE, SANDBOX_IMAGE


def _progress_to_stderr(text: str) -> None:
    click.echo(text, err=True, nl=False)


def _image_builders():
    """The modules that build the images, or a one-line error naming the extra they need."""
    from cataloger_dagster.resources.extras import MissingExtra

    try:
        from cataloger_dagster.cli import run_image
        from cataloger_dagster.resources.sandbox import image
    except MissingExtra as exc:
        raise click.ClickException(str(exc)) from None
    return image, run_image


@click.group("sandbox", epilog=examples("cataloger sandbox build-image --if-missing"))
def sandbox() -> None:
    """The sandbox image used by SandboxResource(backend="docker")."""


@sandbox.command(
    "build-image",
    epilog=examples(
        "cataloger sandbox build-image --if-missing",
        "cataloger sandbox build-image --debootstrap-base --if-missing --json",
    ),
)
@click.option("--base", default=SANDBOX_BASE_IMAGE, show_default=True, help="Base image with python3 3.11.")
@click.option("--tag", default=SANDBOX_IMAGE, show_default=True, help="Tag for the built image.")
@click.option(
    "--debootstrap-base",
    is_flag=True,
    help="First make BASE from a debootstrap rootfs (root and debootstrap needed, no registry).",
)
@click.option(
    "--if-missing",
    is_flag=True,
    help="Skip the build when TAG exists from the current recipe; with "
    "--debootstrap-base, make BASE only when it is absent.",
)
@json_option
def build_image_cmd(base: str, tag: str, debootstrap_base: bool, if_missing: bool, as_json: bool) -> None:
    """Build the sandbox image (ibis, duckdb, pandas, numpy inside). Progress goes to stderr.

    The recipe is CATALOGER_SANDBOX_RECIPE's (default: the one shipped), the debootstrap
    mirror CATALOGER_DEBIAN_MIRROR's."""
    from cataloger_dagster.settings.model import SettingsError, load_settings

    sandbox_image, _ = _image_builders()

    try:
        settings = load_settings()
        result = _build(
            base,
            tag,
            debootstrap_base=debootstrap_base,
            if_missing=if_missing,
            recipe=settings.sandbox_recipe,
            mirror=settings.debian_mirror,
        )
    except (sandbox_image.SandboxImageError, SettingsError) as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result))
    else:
        verb = "built" if result["built"] else "up to date"
        click.echo(f"{result['image']} {result['id']} ({verb}, base {result['base']})")


def _build(base: str, tag: str, *, debootstrap_base: bool, if_missing: bool, recipe: Path | None, mirror: str) -> dict:
    import docker.errors

    from cataloger_dagster.resources.sandbox import image as sandbox_image

    recipe_hash = sandbox_image.recipe_hash(recipe)  # a missing recipe is said before Docker is asked
    client = sandbox_image.docker_client()
    try:

        def image_id(ref: str) -> str | None:
            try:
                return client.api.inspect_image(ref)["Id"]
            except docker.errors.ImageNotFound:
                return None

        if if_missing and sandbox_image.image_present(tag, current=True, recipe=recipe):
            return {"image": tag, "id": image_id(tag), "base": base, "built": False, "recipe_hash": recipe_hash}
        if debootstrap_base and not (if_missing and image_id(base)):
            sandbox_image.make_debootstrap_base(base, mirror=mirror, progress=_progress_to_stderr)
    finally:
        client.close()
    built_id = sandbox_image.build_image(base, tag, progress=_progress_to_stderr, recipe=recipe)
    return {"image": tag, "id": built_id, "base": base, "built": True, "recipe_hash": recipe_hash}


@sandbox.command("build-run-image", epilog=examples("cataloger sandbox build-run-image --if-missing"))
@click.option(
    "--base",
    default=SANDBOX_BASE_IMAGE,
    show_default=True,
    help="Base image with python3 3.11 (the sandbox image's; `build-image --debootstrap-base` makes it).",
)
@click.option("--tag", default=RUN_IMAGE, show_default=True, help="Tag for the built image.")
@click.option("--if-missing", is_flag=True, help="Skip the build when TAG exists from the current sources and pins.")
@json_option
def build_run_image_cmd(base: str, tag: str, if_missing: bool, as_json: bool) -> None:
    """Build the image Dagster's DockerRunLauncher runs each table in (deploy/docker/), from this
    checkout and the versions this environment runs.  Progress goes to stderr."""
    sandbox_image, run_image = _image_builders()
    try:
        built = not (if_missing and run_image.run_image_present(tag))
        image_id = (
            run_image.build_run_image(base, tag, progress=_progress_to_stderr)
            if built
            else sandbox_image.docker_client().api.inspect_image(tag)["Id"]
        )
    except sandbox_image.SandboxImageError as exc:
        raise click.ClickException(str(exc)) from exc
    result = {"image": tag, "id": image_id, "base": base, "built": built, "source_hash": run_image.source_hash()}
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(f"{tag} {image_id} ({'built' if built else 'up to date'}, base {base})")


if __name__ == "__main__":
    sandbox()
