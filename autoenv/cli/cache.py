"""``autoenv cache``: inspect and bound the local backend's image cache."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from autoenv.cli.common import console
from autoenv.sandbox.local import cache
from autoenv.sandbox.local.image import cache_root
from autoenv.sandbox.local.image import remove as remove_image

cache_app = typer.Typer(no_args_is_help=True, help="The local backend's image cache (AUTOENV_CACHE, default ~/.cache/autoenv).")


@cache_app.command("info")
def info() -> None:
    """Where the cache is, how many images it holds and their size."""
    images = cache.images(cache_root() / "images")
    total = sum(i.size for i in images)
    console.print(f"{cache_root() / 'images'}: {len(images)} image(s), {total / 1024**2:.0f} MiB (limit {cache.max_bytes() / 1024**3:g} GiB)")


@cache_app.command("prune")
def prune(
    max_gb: Annotated[Optional[float], typer.Option(help="Target size in GiB (default AUTOENV_CACHE_MAX_GB or 10).")] = None,
    all_unused: Annotated[bool, typer.Option("--all", help="Also evict images used within the last hour.")] = False,
) -> None:
    """Evict least recently used images until the cache fits."""
    limit = None if max_gb is None else int(max_gb * 1024**3)
    removed = cache.prune(cache_root() / "images", limit, recent_sec=0.0 if all_unused else cache.RECENT_SEC, remove=remove_image)
    console.print(f"removed {len(removed)} image(s)")


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")
