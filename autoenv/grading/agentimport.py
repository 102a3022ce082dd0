"""Serve a task's own tests the agent's code from out of their process: the import hook of ``autoenv task harden``.

A test that does ``sys.path.insert(0, "/app"); from inventory.models import Item`` imports the agent's code into
pytest, where it decides the reward (``os._exit(0)`` at import, rewritten reports). ``autoenv task harden`` keeps
such tests as they are and runs pytest through the broker (``tests/agentcall.py grade``) with this file loaded as a
plugin before collection (``-p agentimport``; copied to ``tests/agentimport.py``, its settings in
``tests/agentimport.json``). Standard library and pytest only: it runs in the task's verifier, as the grader.

* **Imports.** A finder first on ``sys.meta_path``: a module that resolves (through ``sys.path`` as the tests set
  it) to a place the agent can write (``roots``: the task's working folders) is not executed here; the tests get a
  stand-in module whose attributes are asked of the agent's process (``agentcall.AgentModule``, as nobody): classes,
  instances, functions and calls, exceptions (``pytest.raises`` matches them), ``isinstance``, plain data back.
  Importing a module again after removing it from ``sys.modules`` (a "fresh import" fixture) starts a fresh agent
  process for that folder.
* **Programs.** ``subprocess.run`` / ``call`` / ``check_call`` / ``check_output`` whose command, working folder or
  program lies in those places run through ``agentcall.run_agent`` (as nobody, output as data).
* **Files.** ``tmp_path`` is a folder the agent's code can write and the tests read; a file there (or in the working
  folders) the agent's code wrote unreadable for the grader (``mkstemp``'s 0600) is read as nobody, as data.

What cannot be served (tests that replace the agent's functions, pass their own callables into its code, read its
source) is refused when the task is hardened (``autoenv.taskfmt.harden``), never here at run time.
"""

from __future__ import annotations

import base64
import builtins
import importlib
import importlib.abc
import importlib.machinery
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import types

import agentcall
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "agentimport.json"), encoding="utf-8") as _fh:
    SETTINGS = json.load(_fh)
ROOTS = [os.path.normpath(r) for r in SETTINGS.get("roots", [])]
#: Folders whose files the agent's code may have written (the roots, and each ``tmp_path`` handed out).
AGENT_DIRS = list(ROOTS)
PROGRAM_TIMEOUT = float(SETTINGS.get("program_timeout", 600))
for _entry in SETTINGS.get("sys_path", []):  # what PYTHONPATH or the tests' working folder put there before
    if _entry not in sys.path:
        sys.path.append(_entry)


def _under(path, folders=None) -> bool:
    if not path:
        return False
    try:
        here = os.path.normpath(os.path.abspath(os.fsdecode(path)))
    except (TypeError, ValueError):
        return False
    return any(here == f or here.startswith(f.rstrip("/") + "/") for f in (ROOTS if folders is None else folders))


# -- imports ----------------------------------------------------------------------------------------------------

_imported: set[tuple[str, str]] = set()


class AgentModuleProxy(types.ModuleType):
    """A module of the agent's as the tests see it: every attribute is asked of the agent's process."""

    def __getattr__(self, name: str):
        handle = self.__dict__.get("__agent__")
        if handle is None or (name.startswith("__") and name != "__all__"):
            raise AttributeError(name)
        if name == "__all__":  # ``from module import *``
            return handle.run("result = list(getattr(m, '__all__', [n for n in dir(m) if not n.startswith('_')]))")
        locations = self.__dict__.get("__path__")
        if locations and importlib.machinery.PathFinder.find_spec(f"{self.__name__}.{name}", locations):
            return importlib.import_module(f"{self.__name__}.{name}")  # a submodule: served the same way
        return handle._request(None, name=name)


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return AgentModuleProxy(spec.name)

    def exec_module(self, module) -> None:
        entry = module.__spec__.loader_state
        handle = agentcall.AgentModule(module.__name__, entry)
        if (entry, module.__name__) in _imported:  # imported again: a fresh import, in a fresh agent process
            handle.reset()
        _imported.add((entry, module.__name__))
        module.__dict__["__agent__"] = handle
        handle.run("result = None")  # imported there now: an error at import is the tests' import error


class AgentFinder(importlib.abc.MetaPathFinder):
    """Finds modules as Python would; those in the agent's places get a stand-in (:class:`AgentModuleProxy`)."""

    loader = _Loader()

    def find_spec(self, name, path=None, target=None):
        found = importlib.machinery.PathFinder.find_spec(name, path)
        if found is None:
            return None
        locations = list(found.submodule_search_locations or [])
        places = ([found.origin] if found.has_location and found.origin else []) + locations
        if not places or not any(_under(p) for p in places):
            return None
        base = locations[0] if found.submodule_search_locations is not None else found.origin
        entry = base
        for _ in name.split("."):  # the sys.path entry the top-level name was found in
            entry = os.path.dirname(entry)
        spec = importlib.machinery.ModuleSpec(
            name, self.loader, origin=found.origin, is_package=found.submodule_search_locations is not None
        )
        if found.submodule_search_locations is not None:
            spec.submodule_search_locations = locations
        spec.has_location = bool(found.has_location and found.origin)
        spec.loader_state = entry
        return spec


sys.meta_path.insert(0, AgentFinder())


# -- programs ---------------------------------------------------------------------------------------------------

_PATHS = re.compile(r"(?<![\w.-])(/[^\s'\";|&<>()`]*)")
_run = subprocess.run


def _argv(args, shell: bool) -> list[str]:
    if isinstance(args, (str, bytes, os.PathLike)):
        args = [os.fsdecode(args)]
    else:
        args = [os.fsdecode(a) for a in args]
    return ["/bin/sh", "-c", *args] if shell else args


def _agents_program(argv: list[str], cwd) -> bool:
    """The command runs something of the agent's: its folder, a path it names, or the program it starts."""
    if cwd is not None and _under(cwd):
        return True
    if any(_under(m.group(1)) for a in argv for m in _PATHS.finditer(a)):
        return True
    program = shutil.which(argv[0]) if argv else None
    return bool(program) and _under(program)


def run(args, *popenargs, **kwargs):
    """``subprocess.run``; the agent's programs (see :func:`_agents_program`) through ``agentcall.run_agent``."""
    argv = _argv(args, bool(kwargs.get("shell")))
    cwd = kwargs.get("cwd")
    if popenargs or not _agents_program(argv, cwd):
        return _run(args, *popenargs, **kwargs)
    text = any(kwargs.get(k) for k in ("text", "universal_newlines", "encoding", "errors"))
    done = agentcall.run_agent(
        argv,
        input=kwargs.get("input"),
        cwd=os.fspath(cwd) if cwd is not None else "/",
        timeout=kwargs.get("timeout") or PROGRAM_TIMEOUT,
        env=kwargs.get("env"),
        text=text,
    )
    captured = kwargs.get("capture_output")
    if kwargs.get("stderr") == subprocess.STDOUT:
        done.stdout, done.stderr = done.stdout + done.stderr, None
    elif not (captured or kwargs.get("stderr") == subprocess.PIPE):
        sys.stderr.write(done.stderr if text else done.stderr.decode(errors="replace"))
        done.stderr = None
    if not (captured or kwargs.get("stdout") == subprocess.PIPE):
        sys.stdout.write(done.stdout if text else done.stdout.decode(errors="replace"))
        done.stdout = None
    if kwargs.get("check"):
        done.check_returncode()
    return done


def call(args, **kwargs) -> int:
    return run(args, **kwargs).returncode


def check_call(args, **kwargs) -> int:
    return run(args, check=True, **kwargs).returncode


def check_output(args, **kwargs):
    return run(args, stdout=subprocess.PIPE, check=True, **kwargs).stdout


subprocess.run, subprocess.call, subprocess.check_call, subprocess.check_output = run, call, check_call, check_output


# -- files ------------------------------------------------------------------------------------------------------

_READ = "import base64, sys; sys.stdout.write(base64.b64encode(open(sys.argv[1], 'rb').read()).decode())"
_open = builtins.open


def read_as_agent(path) -> bytes:
    """A file's bytes as the agent's code sees them (read as nobody): what it wrote with a mode only it can read."""
    done = agentcall.run_agent([sys.executable, "-I", "-c", _READ, os.fspath(path)], cwd="/", text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise PermissionError(f"{path}: {lines[-1] if lines else 'cannot be read'}")
    return base64.b64decode(done.stdout)


def agent_open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
    """``open``; a file in the agent's folders the grader may not read is read as nobody (reading only)."""
    try:
        return _open(file, mode, buffering, encoding, errors, newline, closefd, opener)
    except PermissionError:
        if not isinstance(file, (str, bytes, os.PathLike)) or set(mode) & set("wax+") or not _under(file, AGENT_DIRS):
            raise
    data = read_as_agent(file)
    if "b" in mode:
        return io.BytesIO(data)
    return io.TextIOWrapper(io.BytesIO(data), encoding=encoding or "utf-8", errors=errors, newline=newline)


builtins.open = io.open = agent_open


@pytest.fixture()
def tmp_path() -> pathlib.Path:
    """A fresh folder the agent's code (nobody) can write and the tests read: pytest's own is the grader's alone."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="agent-tmp-", dir="/tmp"))
    folder.chmod(0o777)
    AGENT_DIRS.append(str(folder))
    return folder
