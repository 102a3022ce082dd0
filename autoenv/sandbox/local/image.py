"""Build a task's environment into an OCI image with buildah, and give its root filesystem to sandboxes.

buildah (Debian's package) is a real, daemonless OCI builder: full Dockerfile
semantics (multi-stage builds, ``COPY --from``, ``apt-get install`` and
``pip install`` against the registries, build steps isolated by runc with
Docker's defaults) and a layer cache shared by every task with the same
instruction prefix. Base images are pulled where a registry answers and made
from Debian's packages where none does (:mod:`autoenv.sandbox.local.standins`).

Each built image gets one read-only working container whose mounted root is the
lower layer of every sandbox of that image. Images are keyed by Harbor's
environment content hash and kept under an LRU bound (:mod:`.cache`).
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, Field
from rich.console import Console

from autoenv.errors import BuildError, MachineError
from autoenv.sandbox.dockerfile import FROM_LINE, base_images
from autoenv.sandbox.local import cache as image_cache
from autoenv.sandbox.local import standins
from autoenv.sandbox.local.cache import cache_root
from autoenv.sandbox.local.standins import Substitution

BUILDER_VERSION = "3"

IMAGE_REPO = "localhost/autoenv/env"
ROOTFS_PREFIX = "autoenv-rootfs-"


class ImageConfig(BaseModel):
    key: str
    image: str
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str = "/"
    user: str | None = None
    substitutions: list[Substitution] = Field(default_factory=list)
    builder_version: str = BUILDER_VERSION


class Image:
    def __init__(self, directory: Path, config: ImageConfig, rootfs: Path):
        self.directory = directory
        self.config = config
        self.rootfs = rootfs


def images_dir() -> Path:
    return cache_root() / "images"


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def store_lock():
    """One writer of buildah's image store at a time, across processes and threads.

    Concurrent ``buildah bud --layers`` runs that share cached layers, and an ``rmi`` of one while another builds
    on it, race in containers/storage ("layer not known"): neither the task's fault nor the machine's. Builds
    hold this lock while buildah writes the store; the cached path (an image already built) does not take it."""
    with _locked(images_dir() / ".store.lock"):
        yield


def _buildah(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["buildah", *args], capture_output=True, text=True, cwd="/")
    if check and result.returncode != 0:
        raise BuildError(f"buildah {' '.join(args[:3])}: {result.stderr.strip()[-1500:]}")
    return result


# -- base images -----------------------------------------------------------------------

_pull_failed: dict[str, str] = {}


def unpinned(ref: str) -> str:
    """``name:tag@sha256:...`` -> ``name:tag`` (the name a stand-in for a digest-pinned base is tagged as)."""
    name, _, _digest = ref.partition("@")
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


_standin_failed: dict[str, str] = {}


def _log_tail(log, lines: int = 6) -> str:
    """The last lines of a build log that is a real file (what buildah said), for the error message."""
    try:
        text = Path(log.name).read_text(errors="replace")
    except (AttributeError, OSError, TypeError):
        return ""
    tail = [ln for ln in text.splitlines() if ln.strip()][-lines:]
    return ("\n" + "\n".join(tail)) if tail else ""


def _registry(ref: str) -> str:
    first = ref.split("/")[0]
    return first if ("." in first or ":" in first or first == "localhost") and "/" in ref else "docker.io"


def ensure_base(ref: str, log) -> Substitution | None:
    """Make ``ref`` resolvable without a registry: present, pulled, or a stand-in tagged as ``ref``.

    A digest-pinned reference (``name:tag@sha256:...``, what careful task authors write) cannot be tagged: where
    no registry serves it, the stand-in is tagged as ``name:tag`` and :func:`build_image` builds from that
    (:func:`unpinned`); the substitution records the digest that was asked for.
    """
    pinned = "@" in ref
    local = unpinned(ref)
    marker = images_dir() / "standins" / (re.sub(r"[^\w.-]", "_", ref) + ".json")
    if marker.is_file() and standins.image_exists(local):
        sub = Substitution.model_validate_json(marker.read_text())
        log.write(f"autoenv: base image {ref} is a stand-in: {sub.note}\n")
        return sub
    present = ref if standins.image_exists(ref) else local if pinned and standins.image_exists(local) else None
    if present:
        made_by = standins.standin_label(present)
        if not made_by:
            return None  # a real image (pulled or loaded by the user)
        # a short name that resolves to one of our stand-ins (``debian:bookworm``) is a substitution all the same
        standin = standins.standin_for(ref)
        note = standin.note if standin else f"{ref}: autoenv's stand-in {made_by}"
        sub = Substitution(requested=ref, stand_in=made_by, note=note)
        log.write(f"autoenv: base image {ref} is a stand-in: {sub.note}\n")
        return sub
    registry = _registry(ref)
    if os.environ.get("AUTOENV_OFFLINE") != "1" and registry not in _pull_failed:
        pulled = subprocess.run(
            ["buildah", "pull", "--quiet", ref], capture_output=True, text=True, timeout=600, cwd="/"
        )
        if pulled.returncode == 0:
            log.write(f"autoenv: pulled {ref}\n")
            return None
        _pull_failed[registry] = pulled.stderr.strip().splitlines()[-1] if pulled.stderr.strip() else "pull failed"
    standin = standins.standin_for(ref)
    if standin is None:
        raise BuildError(
            f"base image {ref!r} could not be pulled ({_pull_failed.get(registry, 'offline')}) and autoenv has no "
            f"stand-in for it; "
            f"stand-ins exist for: {', '.join(standins.supported_patterns())}"
        )
    if standin.image in _standin_failed:  # once per process: every task of the run would fail the same way
        raise MachineError(_standin_failed[standin.image])
    with _locked(images_dir() / "standins" / f"{standin.image.replace('/', '_')}.lock"):
        if not standins.image_exists(standin.image):
            message = f"autoenv: making stand-in {standin.image} for {ref} (first use; Debian packages via mmdebstrap)"
            log.write(message + "\n")
            console = Console(stderr=True)
            try:
                if console.is_terminal:
                    with console.status(message + " ...", spinner="dots"):
                        standins.ensure_image(standin, log)
                else:  # a log or a pipe: one line for the event, no spinner frames
                    print(message, file=sys.stderr, flush=True)
                    standins.ensure_image(standin, log)
            except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
                # the stand-in is autoenv's own Dockerfile: its failure is the machine's, never the task's
                _standin_failed[standin.image] = (
                    f"could not make the stand-in base image {standin.image} for {ref}: {exc}{_log_tail(log)}"
                )
                raise MachineError(_standin_failed[standin.image]) from exc
    _buildah("tag", standin.image, local)
    note = standin.note + (f" (pinned to {ref.split('@', 1)[1]}, which no registry here serves)" if pinned else "")
    sub = Substitution(requested=ref, stand_in=standin.image, note=note)
    marker.write_text(sub.model_dump_json())
    log.write(f"autoenv: base image {ref} is a stand-in: {sub.note}\n")
    return sub


# -- building --------------------------------------------------------------------------

#: What buildah prints when the machine, not the Dockerfile, failed a step: its build network (netavark needs
#: iptables), the OCI runtime, the overlay storage, a full disk.
_MACHINE_SIGNS = re.compile(
    r"netavark|aardvark|slirp4netns|iptables|\bOCI runtime\b|runc: |no space left on device|"
    r"error creating overlay mount|mount_setattr|cannot set up namespace|error mounting",
    re.IGNORECASE,
)
#: buildah's own message lines (its error and log lines), as against what a task's RUN step printed.
_BUILDER_LINE = re.compile(r"^(Error: |error |ERRO\[|WARN\[|time=\S+ level=(error|fatal))")
#: What buildah's image store says when another build changed it under this one: retried once, never the task's.
_STORE_RACE = re.compile(r"layer not known|image not known|identifier is not a (container|layer)|locating item named")


def builder_lines(output: str) -> str:
    """Only the lines buildah itself wrote: a task's RUN step can print anything, a machine-fault sign included."""
    return "\n".join(line for line in output.splitlines() if _BUILDER_LINE.match(line))


#: The control build's answer per base in this process: None (the machine builds) or why it cannot.
_control: dict[str, str | None] = {}


def machine_fault(output: str, base: str | None) -> str | None:
    """Why a failed ``buildah bud`` is this machine's fault, or None when the Dockerfile is to blame.

    The control build decides (the same base, one ``RUN`` step that needs the build network and the runtime): a
    machine that cannot run any step fails it, a Dockerfile step that fails on its own does not. A machine-fault
    sign in buildah's own lines (never in what a ``RUN`` step printed: a task can print ``iptables`` and fail) is
    named in the reason, but only the control confirms it. The control runs once per base and process.
    """
    own = builder_lines(output)
    match = _MACHINE_SIGNS.search(own)
    if not base:
        # nothing to build a control from (a bare docker_image): buildah's own sign is all there is
        return f"{match.group(0)} in buildah's output (run `autoenv doctor`)" if match else None
    if base not in _control:
        _control[base] = control_build(base)
    why = _control[base]
    if why is None:
        return None
    sign = next((ln.strip()[:300] for ln in own.splitlines() if match.group(0) in ln), "") if match else ""
    return f"even a one-line RUN step on {base} fails: {why}{f' ({sign})' if sign else ''} (run `autoenv doctor`)"


def control_build(base: str) -> str | None:
    """Build ``FROM base`` + ``RUN true`` (the build network and runtime in use); None when it works, else why."""
    tag = f"localhost/autoenv/control:{uuid.uuid4().hex[:12]}"  # one per build: concurrent controls do not race
    with tempfile.TemporaryDirectory(prefix="autoenv-control-") as tmp, store_lock():
        (Path(tmp) / "Dockerfile").write_text(f"FROM {base}\nRUN true\n")
        try:
            result = subprocess.run(
                ["buildah", "bud", "--pull=never", "--layers=false", "--rm", "-t", tag, tmp],
                capture_output=True, text=True, cwd="/", timeout=300,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        subprocess.run(["buildah", "rmi", tag], capture_output=True, cwd="/")
    if result.returncode == 0:
        return None
    lines = [ln for ln in (result.stdout + result.stderr).splitlines() if ln.strip()]
    return lines[-1][:400] if lines else f"buildah exited {result.returncode}"


def _step_line(dockerfile: Path, output: str) -> str:
    """``Dockerfile:N`` for buildah's ``building at STEP "..."`` error, when the step can be found."""
    match = re.search(r'building at STEP "([^"]*)', output)
    if not match:
        return str(dockerfile)
    step = match.group(1).strip()
    for number, line in enumerate(dockerfile.read_text(errors="replace").splitlines(), 1):
        if line.strip() and step.startswith(line.strip().rstrip("\\").strip()[:60]):
            return f"{dockerfile}:{number}"
    return str(dockerfile)


async def build_image(
    environment_dir: Path,
    *,
    key: str,
    docker_image: str | None = None,
    timeout_sec: float = 600.0,
    force: bool = False,
    log_path: Path | None = None,
) -> Image:
    """Build (or reuse) the image of ``environment_dir``; raise BuildError naming the failing line."""
    key = f"{key}-v{BUILDER_VERSION}"
    directory = images_dir() / key
    lock = images_dir() / f"{key}.lock"

    def locked_build() -> Image:
        # the lock is held for as long as the build runs, also past a timeout (the thread cannot be
        # cancelled): a second builder of the same image waits instead of racing on its tag and folder
        with _locked(lock):
            return _build_locked(environment_dir, key, directory, docker_image, force, log_path)

    try:
        return await asyncio.wait_for(asyncio.to_thread(locked_build), timeout=timeout_sec)
    except TimeoutError:
        raise BuildError(f"{environment_dir}/Dockerfile: build exceeded build_timeout_sec={timeout_sec:g}") from None


def _build_locked(
    environment_dir: Path, key: str, directory: Path, docker_image: str | None, force: bool, log_path: Path | None
) -> Image:
    meta = directory / "image.json"
    tag = f"{IMAGE_REPO}:{key}"
    if force:
        remove(directory)
    if meta.is_file() and (_mounted(key) or standins.image_exists(tag)):
        config = ImageConfig.model_validate_json(meta.read_text())
        image_cache.touch(directory)
        return Image(directory, config, _rootfs(key, tag))
    directory.mkdir(parents=True, exist_ok=True)
    log_file = log_path or directory / "build.log"
    with open(log_file, "a") as log:
        dockerfile = environment_dir / "Dockerfile"
        if dockerfile.is_file():
            bases = base_images(dockerfile.read_text(errors="replace"))
        elif docker_image:
            bases = [docker_image]
        else:
            raise BuildError(f"{environment_dir}: no Dockerfile and no docker_image in task.toml")
        subs = [s for s in (ensure_base(b, log) for b in bases) if s is not None]
        build_file = dockerfile
        pinned = [s.requested for s in subs if "@" in s.requested]
        if pinned and dockerfile.is_file():
            # the stand-in cannot carry the digest: build from a copy whose FROM lines name it without one
            text = dockerfile.read_text(errors="replace")
            for ref in pinned:
                text = text.replace(ref, unpinned(ref))
            build_file = directory / "Dockerfile.unpinned"
            build_file.write_text(text)
        if dockerfile.is_file():
            for attempt in (1, 2):
                log.write(f"$ buildah bud {environment_dir}\n")
                log.flush()
                with store_lock():
                    result = subprocess.run(
                        ["buildah", "bud", "--layers", "--pull=never", "--force-rm", "-t", tag,
                         "-f", str(build_file), str(environment_dir)],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd="/",
                    )  # fmt: skip
                log.write(result.stdout)
                race = result.returncode != 0 and _STORE_RACE.search(builder_lines(result.stdout))
                if not race:
                    break
                if attempt == 2:
                    raise MachineError(
                        f"building {environment_dir}: buildah's image store failed twice ({race.group(0)}), "
                        "not the Dockerfile's fault (run `autoenv doctor`)"
                    )
                log.write("autoenv: buildah's image store changed under the build; building once more\n")
            if result.returncode != 0:
                lines = [ln for ln in result.stdout.splitlines() if ln.strip()]
                detail = "\n".join(lines[-25:])
                fault = machine_fault(result.stdout, bases[0] if bases else None)
                if fault:
                    raise MachineError(
                        f"building {environment_dir} failed for a reason outside its Dockerfile: {fault}"
                    )
                raise BuildError(f"{_step_line(dockerfile, result.stdout)}: build failed:\n{detail}")
        else:
            with store_lock():
                _buildah("tag", docker_image, tag)
    info = json.loads(_buildah("inspect", "--type", "image", tag).stdout)
    cfg = (info.get("OCIv1") or {}).get("config") or {}
    env = dict(item.split("=", 1) for item in cfg.get("Env") or [] if "=" in item)
    config = ImageConfig(
        key=key,
        image=tag,
        env=env,
        workdir=cfg.get("WorkingDir") or "/",
        user=cfg.get("User") or None,
        substitutions=subs,
    )
    rootfs = _rootfs(key, tag)
    meta.write_text(config.model_dump_json(indent=2))
    # what this image adds over its base (the base's layers are shared and not evicted with it)
    image_cache.record_size(directory, max(0, _image_size(tag) - max((_image_size(b) for b in bases), default=0)))
    image_cache.touch(directory)
    with store_lock():
        image_cache.prune(images_dir(), remove=remove)
    return Image(directory, config, rootfs)


def _image_size(tag: str) -> int:
    result = _buildah("images", "--json", tag, check=False)
    try:
        return image_cache.parse_size(json.loads(result.stdout)[0].get("size"))
    except (ValueError, IndexError, TypeError):
        return 0


#: key -> where this process last found the image's working container mounted. Every trial of a cached image asked
#: buildah again (an inspect and a mount, ~0.2 s of CPU each: a Go program's start); a mount that is still there
#: answers the same. Removing the image (any process) unmounts it, and the next call asks buildah again.
_MOUNTS: dict[str, Path] = {}


def _mounted(key: str) -> Path | None:
    path = _MOUNTS.get(key)
    try:
        if path is not None and path.is_dir() and any(path.iterdir()):
            return path
    except OSError:
        pass
    _MOUNTS.pop(key, None)
    return None


def _rootfs(key: str, tag: str) -> Path:
    """The mounted root of the image's read-only working container (made on first use)."""
    if (known := _mounted(key)) is not None:
        return known
    name = ROOTFS_PREFIX + key
    with store_lock():
        if _buildah("inspect", "--type", "container", name, check=False).returncode != 0:
            _buildah("from", "--pull=never", "--name", name, tag)
        path = Path(_buildah("mount", name).stdout.strip())
    if not path.is_dir():
        raise BuildError(f"buildah mounted {name} at {path}, which is not a directory")
    _MOUNTS[key] = path
    return path


def base_rootfs(dockerfile_text: str) -> Path | None:
    """The mounted root of the image a Dockerfile's final stage starts from (its stand-in where one was used), to
    tell the task's files from the base system's; None for ``scratch``, a build stage, or a base not at hand."""
    final = list(FROM_LINE.finditer(dockerfile_text))
    if not final:
        return None
    ref = final[-1].group(1)
    if "$" in ref or ref.lower() == "scratch" or ref not in base_images(dockerfile_text):
        return None
    tag = unpinned(ref) if "@" in ref else ref
    try:
        return _rootfs("base-" + hashlib.sha256(tag.encode()).hexdigest()[:16], tag)
    except (BuildError, subprocess.CalledProcessError, OSError):
        return None


def remove(directory: Path | None) -> None:
    """Forget an image: its working container, its tag (layers shared with others stay) and its metadata.
    ``None``: drop the layers that no image uses any more."""
    if directory is None:
        _buildah("rmi", "--prune", check=False)
        return
    key = directory.name
    _MOUNTS.pop(key, None)
    _buildah("rm", ROOTFS_PREFIX + key, check=False)
    _buildah("rmi", f"{IMAGE_REPO}:{key}", check=False)
    shutil.rmtree(directory, ignore_errors=True)
