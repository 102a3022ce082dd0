"""Docker's default seccomp profile, as an OCI runtime ``linux.seccomp`` section.

We do not write a profile of our own: the one Docker and Podman apply by
default ships with Debian's ``golang-github-containers-common`` (a dependency
of buildah) as ``/usr/share/containers/seccomp.json``. That file is in the
Moby profile format (rules conditional on capabilities and architectures);
:func:`default_profile` resolves the conditions for the capability set and
machine we run with, exactly as Docker's daemon does before handing the
profile to runc.
"""

from __future__ import annotations

import json
import os
import platform
from functools import lru_cache
from pathlib import Path

from autoenv.errors import SandboxFault

PROFILE_PATHS = (Path("/usr/share/containers/seccomp.json"), Path("/etc/containers/seccomp.json"))

#: Go's architecture names used in the profile's ``includes.arches``.
_GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x"}
_SCMP_ARCH = {
    "x86_64": "SCMP_ARCH_X86_64",
    "aarch64": "SCMP_ARCH_AARCH64",
    "ppc64le": "SCMP_ARCH_PPC64LE",
    "s390x": "SCMP_ARCH_S390X",
}


class SeccompProfileMissing(SandboxFault):
    """No default seccomp profile is installed (install buildah or containers-common)."""


def profile_path() -> Path:
    override = os.environ.get("AUTOENV_SECCOMP_PROFILE")
    for candidate in ([Path(override)] if override else []) + list(PROFILE_PATHS):
        if candidate.is_file():
            return candidate
    raise SeccompProfileMissing(
        "Docker's default seccomp profile was not found at "
        + " or ".join(str(p) for p in PROFILE_PATHS)
        + "; install Debian's 'golang-github-containers-common' (comes with buildah) or set AUTOENV_SECCOMP_PROFILE"
    )


def _applies(rule: dict, caps: frozenset[str], arch: str) -> bool:
    includes, excludes = rule.get("includes") or {}, rule.get("excludes") or {}
    if includes.get("caps") and not set(includes["caps"]) <= caps:
        return False
    if includes.get("arches") and arch not in includes["arches"]:
        return False
    if excludes.get("caps") and set(excludes["caps"]) & caps:
        return False
    if excludes.get("arches") and arch in excludes["arches"]:
        return False
    if includes.get("minKernel"):
        return False  # conservative: never widen the profile on a kernel guess
    return True


@lru_cache(maxsize=8)
def default_profile(caps: frozenset[str]) -> dict:
    """The OCI ``linux.seccomp`` object for a container holding ``caps`` (``CAP_*`` names)."""
    source = json.loads(profile_path().read_text())
    machine = platform.machine()
    arch = _GOARCH.get(machine, machine)
    wanted = _SCMP_ARCH.get(machine)
    architectures: list[str] = []
    for entry in source.get("archMap") or []:
        if entry["architecture"] == wanted:
            architectures = [entry["architecture"], *entry.get("subArchitectures", [])]
    syscalls = []
    for rule in source.get("syscalls") or []:
        if not _applies(rule, caps, arch):
            continue
        out = {"names": rule["names"], "action": rule["action"]}
        if rule.get("args"):
            out["args"] = [{k: a[k] for k in ("index", "value", "valueTwo", "op")} for a in rule["args"]]
        if rule.get("errnoRet") is not None:
            out["errnoRet"] = rule["errnoRet"]
        syscalls.append(out)
    profile = {"defaultAction": source["defaultAction"], "architectures": architectures, "syscalls": syscalls}
    if source.get("defaultErrnoRet") is not None:
        profile["defaultErrnoRet"] = source["defaultErrnoRet"]
    return profile
