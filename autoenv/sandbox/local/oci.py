"""The OCI runtime configuration of a sandbox, set as Docker sets a container's.

Every value here is Docker's default unless the comment says otherwise, so a
task behaves the same under ``--env local`` and ``--env docker`` and a policy
that is root in its sandbox gets no more than Docker's root gets: the default
capability set, the default seccomp profile, the masked and read-only
``/proc`` and ``/sys`` paths, ``pivot_root`` into the image (done by the
runtime), private PID/IPC/UTS/mount/network namespaces and cgroup limits that
count every process and tmpfs page.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from pathlib import Path

from autoenv.sandbox.local.seccomp import default_profile

#: Docker's default capability set (moby ``oci/caps/defaults.go``).
DOCKER_CAPS = (
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
)

#: Docker's masked paths (moby ``oci/defaults.go``): bound over with /dev/null or an empty read-only tmpfs.
MASKED_PATHS = (
    "/proc/asound",
    "/proc/acpi",
    "/proc/interrupts",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
    "/sys/devices/virtual/powercap",
)

#: Docker's read-only paths: kernel knobs a container must not turn (``/proc/sys`` holds host-global sysctls).
READONLY_PATHS = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger")

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

_NOFILE = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 1048576)

#: The pids limit when the task sets none: a fork bomb stops here and the host stays responsive.
DEFAULT_PIDS_LIMIT = 4096

#: Docker's default /dev/shm size.
DEFAULT_SHM_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Resources:
    """cgroup limits from task.toml; ``None`` means no limit (Docker's default)."""

    memory_mb: int | None = None
    cpus: float | None = None
    pids: int | None = DEFAULT_PIDS_LIMIT

    def linux_resources(self) -> dict:
        res: dict = {"devices": [{"allow": False, "access": "rwm"}, *_ALLOWED_DEVICES]}
        if self.memory_mb:
            limit = int(self.memory_mb) * 1024 * 1024
            # swap == limit: no swap beyond the limit, as `docker run -m` does
            res["memory"] = {"limit": limit, "swap": limit}
        if self.cpus:
            period = 100_000
            res["cpu"] = {"period": period, "quota": max(1000, int(float(self.cpus) * period))}
        if self.pids:
            res["pids"] = {"limit": int(self.pids)}
        return res


def _dev(kind: str, major: int, minor: int | None = None) -> dict:
    rule = {"allow": True, "type": kind, "major": major, "access": "rwm"}
    if minor is not None:  # no minor: every minor number
        rule["minor"] = minor
    return rule


# the device cgroup rules Docker allows (null, zero, full, random, urandom, tty, console, ptmx, pts)
_ALLOWED_DEVICES = [
    _dev("c", 1, 3),
    _dev("c", 1, 5),
    _dev("c", 1, 7),
    _dev("c", 1, 8),
    _dev("c", 1, 9),
    _dev("c", 5, 0),
    _dev("c", 5, 1),
    _dev("c", 5, 2),
    _dev("c", 136),
]


def process(
    args: list[str],
    *,
    env: dict[str, str],
    cwd: str = "/",
    uid: int = 0,
    gid: int = 0,
    additional_gids: tuple[int, ...] = (),
) -> dict:
    """An OCI ``process`` object with Docker's capabilities and rlimits."""
    caps = list(DOCKER_CAPS)
    user: dict = {"uid": uid, "gid": gid}
    if additional_gids:
        user["additionalGids"] = list(additional_gids)
    return {
        "terminal": False,
        "user": user,
        "args": args,
        "env": [f"{k}={v}" for k, v in env.items()],
        "cwd": cwd,
        "capabilities": {"bounding": caps, "effective": caps, "permitted": caps},
        # Docker passes its daemon's open-files limit on; ours is the caller's hard limit
        "rlimits": [{"type": "RLIMIT_NOFILE", "hard": _NOFILE, "soft": _NOFILE}],
        "noNewPrivileges": False,
    }


def spec(
    *,
    rootfs: Path,
    init_args: list[str],
    env: dict[str, str],
    hostname: str,
    etc_files: dict[str, Path],
    resources: Resources,
    cgroups_path: str,
    network_namespace: str | None = None,
    shm_bytes: int = DEFAULT_SHM_BYTES,
) -> dict:
    """The whole ``config.json``.

    ``etc_files`` maps ``/etc/hosts``, ``/etc/hostname`` and ``/etc/resolv.conf``
    to host files bound read-only, as Docker does. ``network_namespace`` is the
    path of a namespace to join; ``None`` makes a fresh one holding only
    loopback (``no-network``).
    """
    mounts = [
        {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
        {
            "destination": "/dev",
            "type": "tmpfs",
            "source": "tmpfs",
            "options": ["nosuid", "strictatime", "mode=755", "size=65536k"],
        },
        {
            "destination": "/dev/pts",
            "type": "devpts",
            "source": "devpts",
            "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"],
        },
        {
            "destination": "/dev/shm",
            "type": "tmpfs",
            "source": "shm",
            "options": ["nosuid", "noexec", "nodev", "mode=1777", f"size={shm_bytes}"],
        },
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
        {
            "destination": "/sys/fs/cgroup",
            "type": "cgroup",
            "source": "cgroup",
            "options": ["ro", "nosuid", "noexec", "nodev"],
        },
    ]
    for target, source in sorted(etc_files.items()):
        mounts.append(
            {"destination": target, "type": "bind", "source": str(source), "options": ["rbind", "rprivate", "ro"]}
        )
    namespaces = [{"type": t} for t in ("pid", "ipc", "uts", "mount")]
    namespaces.append({"type": "network", "path": network_namespace} if network_namespace else {"type": "network"})
    return {
        "ociVersion": "1.0.2",
        "process": process(init_args, env=env),
        "root": {"path": str(rootfs), "readonly": False},
        "hostname": hostname,
        "mounts": mounts,
        "linux": {
            "namespaces": namespaces,
            "resources": resources.linux_resources(),
            "cgroupsPath": cgroups_path,
            "seccomp": default_profile(frozenset(DOCKER_CAPS)),
            "maskedPaths": list(MASKED_PATHS),
            "readonlyPaths": list(READONLY_PATHS),
            "rootfsPropagation": "rprivate",
        },
    }
