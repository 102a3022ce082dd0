"""Build a task's Dockerfile into a cached overlay layer.

The result plays the part of a Docker image: a directory of files the
Dockerfile added or changed on top of the host system, plus the ENV, WORKDIR
and USER it left behind. Layers are keyed by Harbor's environment content hash,
so each environment builds once per machine and parallel trials share it.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shlex
import shutil
import tarfile
import uuid
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from autoenv.sandbox.local import cache as image_cache
from autoenv.sandbox.local import dockerfile as df
from autoenv.sandbox.local.namespace import BASE_ENV, CommandTimeout, Sandbox

BUILDER_VERSION = "2"

APT_SHIM = r"""#!/bin/sh
# autoenv local backend: apt cannot install into the host system, so only
# packages the host already has are accepted.
sub=""
for a in "$@"; do case "$a" in -*) ;; *) if [ -z "$sub" ]; then sub="$a"; fi ;; esac; done
case "$sub" in
  install)
    missing=""
    seen_sub=""
    for a in "$@"; do
      case "$a" in -*) continue ;; esac
      if [ -z "$seen_sub" ]; then seen_sub=1; continue; fi
      pkg="${a%%=*}"
      if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        # a virtual package (libc-dev, ...) is satisfied by an installed provider
        if ! dpkg-query -W -f='${Provides}\n' 2>/dev/null | tr ',' '\n' | sed 's/ *(.*//; s/^ *//' | grep -qx "$pkg"; then
          missing="$missing $pkg"
        fi
      fi
    done
    if [ -n "$missing" ]; then
      echo "autoenv local backend: apt package(s)$missing not installed on the host; the local backend cannot install system packages (install them on the host, or use --env docker)" >&2
      exit 100
    fi
    exit 0 ;;
  *) exit 0 ;;
esac
"""


class BuildError(Exception):
    """The environment cannot be built; the message names the Dockerfile line."""


class ImageConfig(BaseModel):
    key: str
    base: str
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str = "/"
    user: str | None = None
    builder_version: str = BUILDER_VERSION


def cache_root() -> Path:
    root = os.environ.get("AUTOENV_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "autoenv")
    return Path(root)


class Image:
    def __init__(self, directory: Path, config: ImageConfig):
        self.directory = directory
        self.config = config

    @property
    def layer(self) -> Path:
        return self.directory / "layer"


def _resolve(workdir: str, path: str) -> str:
    return str(PurePosixPath(workdir) / path) if not path.startswith("/") else path


def _copy_into(src: Path, dest_host: Path, *, into_dir: bool) -> None:
    """Docker COPY semantics: a directory's *contents* are copied."""
    if src.is_dir():
        dest_host.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dest_host, dirs_exist_ok=True, symlinks=True)
        return
    target = dest_host / src.name if into_dir else dest_host
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, target)


async def build_image(
    environment_dir: Path,
    *,
    key: str,
    docker_image: str | None = None,
    timeout_sec: float = 600.0,
    force: bool = False,
    log_path: Path | None = None,
) -> Image:
    """Build (or reuse) the layer for ``environment_dir``; raise BuildError with the failing line."""
    images = cache_root() / "images"
    images.mkdir(parents=True, exist_ok=True)
    key = f"{key}-v{BUILDER_VERSION}"
    final = images / key
    lock_file = open(images / f"{key}.lock", "w")
    try:
        await asyncio.to_thread(fcntl.flock, lock_file, fcntl.LOCK_EX)
        if force and final.exists():
            shutil.rmtree(final)
        if (final / "image.json").exists():
            image_cache.touch(final)
            return Image(final, ImageConfig.model_validate_json((final / "image.json").read_text()))
        dockerfile = environment_dir / "Dockerfile"
        if dockerfile.exists():
            config, layer = await asyncio.wait_for(_build_dockerfile(environment_dir, dockerfile, key, images, log_path), timeout=timeout_sec)
        elif docker_image:
            if not df.is_supported_base(docker_image):
                raise BuildError(f"task.toml: docker_image {docker_image!r} is not a base image the local backend can stand in for (supported: {', '.join(df.base_image_patterns())})")
            layer = images / f"{key}.build-{uuid.uuid4().hex[:8]}" / "upper"
            layer.mkdir(parents=True)
            config = ImageConfig(key=key, base=docker_image, env={})
        else:
            raise BuildError(f"{environment_dir}: no Dockerfile and no docker_image in task.toml")
        staging = layer.parent
        (staging / "image.json").write_text(config.model_dump_json(indent=2))
        layer.rename(staging / "layer")
        for leftover in ("work", "merged", "ready", "holder.log"):
            path = staging / leftover
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        staging.rename(final)
        image_cache.record_size(final)
        image_cache.touch(final)
        image_cache.prune(images)
        return Image(final, config)
    except asyncio.TimeoutError:
        raise BuildError(f"{environment_dir}/Dockerfile: build exceeded build_timeout_sec={timeout_sec:g}") from None
    finally:
        fcntl.flock(lock_file, fcntl.LOCK_UN)
        lock_file.close()


async def _build_dockerfile(environment_dir: Path, dockerfile: Path, key: str, images: Path, log_path: Path | None) -> tuple[ImageConfig, Path]:
    try:
        instructions = df.parse(dockerfile)
    except df.DockerfileError as exc:
        raise BuildError(str(exc)) from exc
    root = images / f"{key}.build-{uuid.uuid4().hex[:8]}"
    sandbox = Sandbox(root=root, network=True, hostname="build")
    args: dict[str, str] = {}
    env: dict[str, str] = {}
    workdir = "/"
    user: str | None = None
    base = ""
    log = open(log_path, "a") if log_path else None
    started = False

    def fail(ins: df.Instruction, message: str) -> BuildError:
        return BuildError(f"{dockerfile}:{ins.line}: {ins.keyword} {ins.args[:200]}: {message}")

    try:
        for ins in instructions:
            variables = {**args, **env}
            if ins.keyword == "ARG":
                name, _, default = ins.args.partition("=")
                args[name.strip()] = df.substitute(default.strip().strip('"'), variables)
            elif ins.keyword == "FROM":
                base = df.substitute(ins.args.split()[0], variables)
                if not df.is_supported_base(base):
                    raise fail(ins, f"base image {base!r} is not one the local backend can stand in for (supported: {', '.join(df.base_image_patterns())}; extend with AUTOENV_LOCAL_BASE_IMAGES)")
                sandbox.spawn()
                await asyncio.to_thread(sandbox.wait_ready)
                started = True
                shim_dir = sandbox.host_path("/tmp/.autoenv-shims")
                shim_dir.mkdir(parents=True, exist_ok=True)
                for name in ("apt-get", "apt"):
                    (shim_dir / name).write_text(APT_SHIM)
                    (shim_dir / name).chmod(0o755)
            elif ins.keyword == "ENV":
                try:
                    for k, v in df.parse_env_args(ins.args).items():
                        env[k] = df.substitute(v, {**args, **env})
                except ValueError as exc:
                    raise fail(ins, str(exc)) from exc
            elif ins.keyword == "WORKDIR":
                workdir = _resolve(workdir, df.substitute(ins.args.strip(), variables))
                sandbox.host_path(workdir).mkdir(parents=True, exist_ok=True)
            elif ins.keyword == "USER":
                user = df.substitute(ins.args.strip(), variables).split(":")[0]
                check = await sandbox.run(["id", "-u", user], env={**BASE_ENV})
                if check.return_code != 0:
                    raise fail(ins, f"user {user!r} does not exist in the image")
            elif ins.keyword in ("COPY", "ADD"):
                if "from" in ins.flags:
                    raise fail(ins, "COPY --from (multi-stage) is not supported by the local backend")
                parts = ins.exec_form() or shlex.split(df.substitute(ins.args, variables))
                if len(parts) < 2:
                    raise fail(ins, "needs at least one source and a destination")
                *sources, dest = parts
                dest = _resolve(workdir, dest)
                into_dir = dest.endswith("/") or len(sources) > 1
                for source in sources:
                    if "://" in source:
                        raise fail(ins, "remote URLs are not supported by the local backend (the sandbox build has no general network)")
                    matches = sorted(environment_dir.glob(source)) if any(c in source for c in "*?[") else [environment_dir / source]
                    for src in matches:
                        if not src.resolve().is_relative_to(environment_dir.resolve()):
                            raise fail(ins, f"source {source!r} is outside the build context")
                        if not src.exists():
                            raise fail(ins, f"source {source!r} not found in the build context {environment_dir}")
                        dest_host = sandbox.host_path(dest)
                        if ins.keyword == "ADD" and src.is_file() and tarfile.is_tarfile(src):
                            dest_host.mkdir(parents=True, exist_ok=True)
                            with tarfile.open(src) as tf:
                                tf.extractall(dest_host, filter="data")
                        else:
                            is_dir_dest = into_dir or (dest_host.is_dir() and src.is_file())
                            await asyncio.to_thread(_copy_into, src, dest_host, into_dir=is_dir_dest)
                if "chown" in ins.flags:
                    owner = ins.flags["chown"]
                    result = await sandbox.run(["chown", "-R", owner, dest])
                    if result.return_code != 0:
                        raise fail(ins, f"chown {owner}: {result.stderr.strip()}")
            elif ins.keyword == "RUN":
                command = ins.exec_form() or ins.args
                run_env = {**BASE_ENV, **args, **env, "PATH": "/tmp/.autoenv-shims:" + env.get("PATH", BASE_ENV["PATH"])}
                result = await sandbox.run(command if isinstance(command, list) else ["/bin/sh", "-c", command], cwd=workdir, env=run_env, user=user)
                if log:
                    log.write(f"$ {ins.args}\n{result.stdout}{result.stderr}\n")
                if result.return_code != 0:
                    tail = (result.stdout + result.stderr).strip()[-1500:]
                    raise fail(ins, f"exited with code {result.return_code}:\n{tail}")
            # IGNORED instructions: nothing to do (Harbor never uses CMD/ENTRYPOINT).
    except CommandTimeout as exc:
        raise BuildError(f"{dockerfile}: {exc}") from exc
    except BaseException:
        if started:
            await asyncio.to_thread(sandbox.stop)
            started = False
        shutil.rmtree(root, ignore_errors=True)
        raise
    finally:
        if started:
            await asyncio.to_thread(sandbox.stop)
        if log:
            log.close()
    return ImageConfig(key=key, base=base, env=env, workdir=workdir, user=user), sandbox.upper_dir
