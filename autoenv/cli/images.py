"""``autoenv images``: the local backend's images: stand-in bases and task images under an LRU bound."""

from __future__ import annotations

import sys
import time
from typing import Annotated

import typer

from autoenv.cli.common import console, fail, print_json
from autoenv.errors import MachineError

images_app = typer.Typer(
    no_args_is_help=True, help="The local backend's images (stand-in bases and built task images)."
)


@images_app.command("list")
def list_images(json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Stand-in base images and built task images, with sizes and when each was last used."""
    from autoenv.sandbox.local import cache, standins
    from autoenv.sandbox.local.image import images_dir

    built = sorted(cache.images(images_dir()), key=lambda i: -i.last_used)
    made = standins.list_standins()
    if json_out:
        print_json(
            {
                "standins": made,
                "images": [{"key": i.path.name, "size": i.size, "last_used": i.last_used} for i in built],
                "limit": cache.max_bytes(),
            }
        )
        return
    console.print(f"stand-in base images ({len(made)}):")
    for item in made:
        console.print(f"  {item['image']}  {item['size'] / 1024**2:.0f} MiB", highlight=False)
    total = sum(i.size for i in built)
    console.print(
        f"task images in {images_dir()}: {len(built)}, {total / 1024**2:.0f} MiB (limit "
        f"{cache.max_bytes() / 1024**3:g} GiB)"
    )
    for image in built[:50]:
        console.print(
            f"  {image.path.name}  {image.size / 1024**2:.0f} MiB  used {(time.time() - image.last_used) / 60:.0f} min "
            f"ago",
            highlight=False,
        )


@images_app.command("make")
def make(
    refs: Annotated[list[str], typer.Argument(help="Base image references, e.g. python:3.12-slim debian:bookworm")],
) -> None:
    """Make base images available offline: pull each where a registry answers, else make its stand-in."""
    from autoenv.sandbox.local.image import BuildError, ensure_base

    for ref in refs:
        try:
            sub = ensure_base(ref, sys.stderr)
        except (BuildError, MachineError) as exc:
            fail(str(exc))
        console.print(f"{ref}: " + (f"stand-in ({sub.note})" if sub else "available"), highlight=False)


@images_app.command("prune")
def prune(
    max_gb: Annotated[
        float | None, typer.Option(help="Target size in GiB (default AUTOENV_CACHE_MAX_GB or 10).")
    ] = None,
    all_unused: Annotated[bool, typer.Option("--all", help="Also evict images used within the last hour.")] = False,
) -> None:
    """Evict least recently used task images until the cache fits (stand-in bases are kept)."""
    from autoenv.sandbox.local import cache
    from autoenv.sandbox.local.image import images_dir
    from autoenv.sandbox.local.image import remove as remove_image

    limit = None if max_gb is None else int(max_gb * 1024**3)
    removed = cache.prune(images_dir(), limit, recent_sec=0.0 if all_unused else cache.RECENT_SEC, remove=remove_image)
    console.print(f"removed {len(removed)} image(s)")


def register(app: typer.Typer) -> None:
    app.add_typer(images_app, name="images")
