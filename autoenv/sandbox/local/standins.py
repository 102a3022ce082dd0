"""Stand-in base images, made from Debian's packages where no registry answers.

Tasks start ``FROM python:3.12-slim``, ``debian:bookworm``, ``ubuntu:24.04`` or
a registry mirror of those. Where a registry answers, the real image is pulled.
Where none does (this machine, CI, air-gapped clusters) autoenv makes a
stand-in: a Debian root filesystem from ``mmdebstrap`` (from Debian's package
registry, which is reachable), plus a CPython of the requested minor version
where one can be had (the host's pyenv build of that version, else Debian's
``python3``, the nearest). Every stand-in carries the host's CA bundle so that
``pip`` and ``apt`` inside reach the registries behind a TLS-intercepting proxy.

A substitution is never silent: :class:`StandIn.note` says what stood in for
what, the build log prints it and the trial records it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from autoenv.sandbox.local.cache import parse_size

HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
STANDIN_REPO = "localhost/autoenv/standin"
DEFAULT_SUITE = "bookworm"
SUITES = {
    "11": "bullseye",
    "12": "bookworm",
    "13": "trixie",
    "bullseye": "bullseye",
    "bookworm": "bookworm",
    "trixie": "trixie",
}
#: Registries whose official-library mirrors are accepted for the names below.
_LIBRARY_PREFIXES = ("library/", "docker/library/")


class Substitution(BaseModel):
    """What was asked for and what stood in for it (recorded in build logs and trial results)."""

    requested: str
    stand_in: str
    note: str


@dataclass(frozen=True)
class StandIn:
    kind: str  # "debian" or "python"
    suite: str
    python: str | None = None  # "3.12"
    note: str = ""

    @property
    def image(self) -> str:
        if self.kind == "python":
            return f"{STANDIN_REPO}/python:{self.python}-{self.suite}"
        return f"{STANDIN_REPO}/debian:{self.suite}"


def _split(ref: str) -> tuple[str, str]:
    """``[registry/]path[:tag][@digest]`` -> (library path, tag)."""
    ref = ref.split("@", 1)[0]
    parts = ref.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    path = "/".join(parts)
    for prefix in _LIBRARY_PREFIXES:
        if path.startswith(prefix):
            path = path[len(prefix) :]
    name, _, tag = path.partition(":")
    return name, tag or "latest"


def _suite_in(tag: str) -> str:
    for word in re.split(r"[-_.]", tag):
        if word in ("bullseye", "bookworm", "trixie"):
            return word
    return DEFAULT_SUITE


def standin_for(ref: str) -> StandIn | None:
    """The stand-in for a base image reference, or None when autoenv has none."""
    name, tag = _split(ref)
    last = name.rsplit("/", 1)[-1]
    if name == "debian":
        suite = SUITES.get(tag.split("-")[0].split(".")[0], _suite_in(tag))
        return StandIn("debian", suite, note=f"{ref}: Debian {suite} made with mmdebstrap (minbase)")
    if name == "ubuntu" or re.fullmatch(r"ubuntu-\d+-\d+", last):
        return StandIn(
            "debian", DEFAULT_SUITE, note=f"{ref}: no Ubuntu archive is reachable; Debian {DEFAULT_SUITE} stands in"
        )
    match = re.fullmatch(r"python-(\d)-(\d+)", last) if "/" in name else None
    if name == "python" or match:
        if match:
            minor = f"{match.group(1)}.{match.group(2)}"
        else:
            found = re.match(r"(\d+)\.(\d+)", tag)
            minor = f"{found.group(1)}.{found.group(2)}" if found else None
        suite = _suite_in(tag)
        have, how = python_source(minor)
        return StandIn("python", suite, python=have, note=f"{ref}: Debian {suite} with Python {have} ({how})")
    return None


def supported_patterns() -> list[str]:
    return [
        "debian:*",
        "ubuntu:*",
        "python:3.X[-slim][-bookworm|-trixie]",
        "*/t-bench/python-3-X",
        "*/t-bench/ubuntu-YY-MM",
        "registry mirrors of these (e.g. public.ecr.aws/docker/library/python:3.12-slim)",
    ]


# -- Python builds -------------------------------------------------------------------


def _pyenv_versions() -> dict[str, Path]:
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found: dict[str, Path] = {}
    for entry in sorted(root.glob("3.*")) if root.is_dir() else []:
        match = re.fullmatch(r"(3\.\d+)\.\d+", entry.name)
        if match and (entry / "bin" / f"python{match.group(1)}").exists():
            found[match.group(1)] = entry
    return found


def debian_python(suite: str = DEFAULT_SUITE) -> str:
    return {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}.get(suite, "3.11")


def python_source(minor: str | None, suite: str = DEFAULT_SUITE) -> tuple[str, str]:
    """Which CPython stands in for ``minor``: (version, where it comes from)."""
    if minor is None or minor == debian_python(suite):
        return debian_python(suite), "Debian's python3"
    if minor in _pyenv_versions():
        return minor, f"CPython {_pyenv_versions()[minor].name} built by the host's pyenv"
    return debian_python(
        suite
    ), f"Python {minor} cannot be had here; Debian's python3 {debian_python(suite)} is the nearest"


# -- making stand-ins ------------------------------------------------------------------


def _run(argv: list[str], log, **kwargs) -> None:
    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    result = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited with {result.returncode} (see {getattr(log, 'name', 'the build log')})")


def make_debian(suite: str, log) -> str:
    """mmdebstrap a minbase Debian ``suite`` and commit it as a buildah image."""
    image = StandIn("debian", suite).image
    if not shutil.which("mmdebstrap"):
        raise RuntimeError("mmdebstrap not found: it makes the stand-in base images (apt-get install mmdebstrap)")
    with tempfile.TemporaryDirectory(prefix="autoenv-standin-") as tmp:
        tarball = Path(tmp) / "rootfs.tar"
        _run(
            [
                "mmdebstrap",
                "--variant=minbase",
                "--include=ca-certificates",
                "--aptopt=Acquire::Retries=3",
                suite,
                str(tarball),
            ],
            log,
        )
        container = subprocess.run(
            ["buildah", "from", "scratch"], capture_output=True, text=True, check=True
        ).stdout.strip()
        try:
            mount = subprocess.run(
                ["buildah", "mount", container], capture_output=True, text=True, check=True
            ).stdout.strip()
            _run(["tar", "-x", "-f", str(tarball), "-C", mount], log)
            _install_ca_bundle(Path(mount))
            # as Docker's official images: an empty apt list cache, no docs of the build
            shutil.rmtree(Path(mount) / "var/lib/apt/lists", ignore_errors=True)
            (Path(mount) / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
            _run(
                [
                    "buildah",
                    "config",
                    "--env",
                    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "--cmd",
                    "bash",
                    "--label",
                    "org.autoenv.standin=debian-" + suite,
                    container,
                ],
                log,
            )
            _run(["buildah", "commit", "--quiet", container, image], log)
        finally:
            subprocess.run(["buildah", "rm", container], capture_output=True)
    return image


def _install_ca_bundle(root: Path) -> None:
    if not HOST_CA_BUNDLE.is_file():
        return
    certs = root / "etc/ssl/certs"
    certs.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HOST_CA_BUNDLE, certs / "ca-certificates.crt")
    # survives `update-ca-certificates` when a task installs ca-certificates again
    local = root / "usr/local/share/ca-certificates"
    local.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HOST_CA_BUNDLE, local / "autoenv-host-bundle.crt")
    # pip trusts its own copy of certifi, not the system's store: point it at the bundle
    (root / "etc/pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")


PYTHON_DOCKERFILE = """\
FROM {base}
ENV LANG=C.UTF-8
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip python3-venv python-is-python3 \\
      libssl3 libffi8 libsqlite3-0 libreadline8 libbz2-1.0 liblzma5 zlib1g libuuid1 libncursesw6 \\
 && rm -rf /var/lib/apt/lists/* \\
 && rm -f /usr/lib/python3*/EXTERNALLY-MANAGED && ln -sf pip3 /usr/bin/pip
{copy}
CMD ["python3"]
"""

PYENV_COPY = """\
COPY python/ /usr/local/
RUN ldconfig && ln -sf python{minor} /usr/local/bin/python3 && ln -sf python{minor} /usr/local/bin/python \\
 && python{minor} -m ensurepip --default-pip >/dev/null && ln -sf pip{minor} /usr/local/bin/pip && ln -sf pip{minor} /usr/local/bin/pip3 \\
 && python3 --version
"""  # noqa: E501


def make_python(standin: StandIn, log) -> str:
    base = StandIn("debian", standin.suite).image
    ensure_image(StandIn("debian", standin.suite), log)
    with tempfile.TemporaryDirectory(prefix="autoenv-standin-") as tmp:
        context = Path(tmp)
        copy = ""
        source = _pyenv_versions().get(standin.python or "")
        if source is not None and standin.python != debian_python(standin.suite):
            _copy_pyenv(source, context / "python", standin.python)
            copy = PYENV_COPY.format(minor=standin.python)
        (context / "Dockerfile").write_text(PYTHON_DOCKERFILE.format(base=base, copy=copy))
        _run(["buildah", "bud", "--quiet", "--layers", "--pull=never", "-t", standin.image, str(context)], log)
    return standin.image


def _copy_pyenv(source: Path, target: Path, minor: str) -> None:
    """A pyenv build without its test suite and without any package installed into it on the host."""
    stdlib = f"lib/python{minor}"

    def ignore(directory: str, names: list[str]) -> list[str]:
        rel = os.path.relpath(directory, source)
        if rel == stdlib:
            return [n for n in names if n in ("test", "idlelib", "tkinter", "turtledemo", "site-packages")]
        if rel == "lib":
            return [n for n in names if n.startswith("pkgconfig")]
        if rel == "bin":
            return [n for n in names if not n.startswith(("python", "2to3", "pydoc", "idle"))]
        return [n for n in names if n == "__pycache__"]

    shutil.copytree(source, target, symlinks=True, ignore=ignore)
    (target / stdlib / "site-packages").mkdir(exist_ok=True)


def image_exists(image: str) -> bool:
    return subprocess.run(["buildah", "inspect", "--type", "image", image], capture_output=True).returncode == 0


def standin_label(image: str) -> str | None:
    """The stand-in an image was made from (its ``org.autoenv.standin`` label), or None for a real image."""
    result = subprocess.run(
        ["buildah", "inspect", "--type", "image", "--format", '{{index .OCIv1.Config.Labels "org.autoenv.standin"}}',
         image],
        capture_output=True, text=True,
    )  # fmt: skip
    label = result.stdout.strip() if result.returncode == 0 else ""
    return None if not label or label == "<no value>" else label


def ensure_image(standin: StandIn, log) -> str:
    """Make the stand-in unless it exists already."""
    if image_exists(standin.image):
        return standin.image
    return make_python(standin, log) if standin.kind == "python" else make_debian(standin.suite, log)


def list_standins() -> list[dict]:
    """The stand-in images made on this machine, with their sizes in bytes."""
    result = subprocess.run(["buildah", "images", "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        return []
    found = []
    for image in json.loads(result.stdout or "[]"):
        for name in image.get("names") or []:
            if name.startswith(STANDIN_REPO):
                found.append({"image": name, "size": parse_size(image.get("size"))})
    return sorted(found, key=lambda item: item["image"])
