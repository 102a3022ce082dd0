"""Call the agent's code from a test without running it in the process that decides the reward.

A test that imports the agent's module runs the agent's code inside pytest: ``os._exit(0)`` at import ends
pytest with status 0, a few lines can rewrite pytest's reports, and the test's frames hold the expected values.
This file, copied into a task's ``tests/`` folder, keeps the two apart. Standard library only (any image with a
``python3`` can run it), one file with three roles:

``python3 -I /tests/agentcall.py grade -- PYTEST_ARGS`` (``tests/test.sh``, as root)
    The broker. It starts pytest as the *grader* (uid 65533, no groups) and serves it over an inherited socket:
    each agent module is imported, and each agent program run, in a child as *nobody* (uid 65534), never in
    pytest. It exits with pytest's status; ``test.sh`` turns that into the reward.

``from agentcall import agent_module, run_agent`` (in the test files, inside pytest)
    ``agent_module("stats_utils").median([3, 1, 2])`` calls a function in that child and returns its result as
    plain data (JSON); an object that is not plain data comes back as a :class:`Remote` handle, which refuses
    ``bool``, ``==`` and ``hash`` (the agent's class would decide them: compare the plain data it returns, e.g.
    ``assert mod.is_valid(x) is True``); its attributes can be set, and ``len``, iteration, indexing, ``in`` and
    ``str`` are asked of the agent's process. Lists, dicts and sets a call changed in place come back changed into
    the test's own (a test may check its input was left intact). An exception the agent's code raised, or an
    exception class its module names, is a stand-in class derived from :class:`AgentError` (and from the built-in
    type it named, so ``pytest.raises(ValueError)`` still matches): never a built-in or a class of the grader's, so
    ``ValidationError = Exception`` in the agent's module cannot make ``pytest.raises`` catch everything. A child
    that exits, hangs (even halfway through a reply) or answers garbage fails the call (:class:`AgentCrashed`).
    ``run_agent(["python3", "/app/cli.py"])`` runs an agent program as nobody, in a process group of its own, and
    returns a ``CompletedProcess``; ``agent_folder()`` is a fresh folder for the inputs such a program reads.

The child (``CHILD``, as nobody)
    Imports the module from its folder and answers one JSON request a line. Children are forked by a *zygote*
    (``python3 -I -c ZYGOTE``, started once per grading as nobody, which has imported what a child needs and never
    runs the agent's code itself): a test that asks for a fresh import gets it in ~2 ms instead of a ~40 ms
    interpreter start. Where the zygote cannot run (Python < 3.9) or is gone (the agent's code killed it), a
    child is a fresh ``python3 -I -c CHILD`` as before.

Why this holds: the agent's code runs only as nobody, which can neither signal nor trace the grader (another
uid; the grader also makes itself non-dumpable, so even a program of its own uid cannot read its memory) nor
the broker (root), and cannot read the test files (the grader's folder is 0700). Whatever the child answers is
data the trusted test compares. The zygote is nobody too: taking it over gains the agent's code nothing it does
not have (its children are the agent's code), and the broker never acts as root on what the zygote says (the
pid it reports is signalled from a process that is nobody, which can reach no one else).
"""

from __future__ import annotations

import builtins
import json
import os
import pathlib
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

GRADER_UID = 65533
AGENT_UID = 65534
FD_ENV = "AUTOENV_AGENTCALL_FD"
MAX_REPLY = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 60.0


class AgentError(Exception):
    """The base of every exception class that stands for one of the agent's (see ``_exception_class``)."""


class RemoteValueError(TypeError):
    """A test asked an object of the agent's (a :class:`Remote`) for its truth value, equality or hash."""


_COMPARE_PLAIN = (
    "it is an object of the agent's, whose class would decide the answer; compare plain data instead "
    "(`assert mod.is_valid(x) is True`, `== True` on a returned value, `obj.to_dict() == {...}`)"
)


class AgentCrashed(AssertionError):
    """The agent's code exited, hung, or answered something that is not a reply: the call failed."""


# -- the child: runs as nobody, imports the agent's module, answers requests -------------------------------------

CHILD = r"""
import importlib, json, os, pathlib, sys
reply = os.fdopen(int(sys.argv[2]), "w", buffering=1)
os.dup2(2, 1)  # the agent's prints go to stderr, never into the replies
sys.path.insert(0, sys.argv[1])
objects, modules = {}, {}

def mro(cls):
    return [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__]

def encode(value, depth=0):
    if depth > 50:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value) and "__ref__" not in value:
        return {k: encode(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode(v, depth + 1) for v in value]}
    if isinstance(value, bytes):
        return {"__bytes__": value.decode("latin-1")}
    if isinstance(value, pathlib.PurePath):
        return {"__path__": str(value)}
    if isinstance(value, type) and issubclass(value, BaseException):
        return {"__exc__": mro(value)}
    objects[id(value)] = value
    return {"__ref__": id(value), "type": type(value).__qualname__, "callable": callable(value)}

def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "__ref__" in value:
            return objects[value["__ref__"]]
        if "__tuple__" in value:
            return tuple(decode(v) for v in value["__tuple__"])
        if "__path__" in value:
            return pathlib.Path(value["__path__"])
        if "__set__" in value:
            return set(decode(v) for v in value["__set__"])
        if "__bytes__" in value:
            return value["__bytes__"].encode("latin-1")
        if "__object__" in value:
            return object()
        return {k: decode(v) for k, v in value.items()}
    return value

for line in sys.stdin:
    request = json.loads(line)
    try:
        name = request["module"]
        if name not in modules:
            modules[name] = importlib.import_module(name)
        target = modules[name] if request.get("ref") is None else objects[request["ref"]]
        back = None
        if request.get("code") is not None:
            scope = {"m": target, **decode(request.get("names", {}))}
            exec(request["code"], scope)
            result = scope.get("result")
        else:
            for part in filter(None, (request.get("name") or "").split(".")):
                target = getattr(target, part)
            if request.get("call"):
                args, kwargs = decode(request.get("args", [])), decode(request.get("kwargs", {}))
                result = target(*args, **kwargs)
                if request.get("back"):  # the arguments as the call left them (a test may check they are intact)
                    back = [encode(args), encode(kwargs)]
            else:
                result = target
        answer = {"ok": encode(result)}
        if back is not None:
            answer["back"] = back
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        answer = {"raised": {"type": type(exc).__name__, "mro": mro(type(exc)), "message": str(exc)[:2000]}}
    reply.write(json.dumps(answer) + "\n")
"""

#: The zygote (nobody): forks a child per request received on its control socket (the child's stdin and reply
#: pipe come with it), runs ``CHILD`` there with the folder, environment and cwd a fresh interpreter would have,
#: and answers the child's pid. It never imports or runs the agent's code; its children are reaped by the kernel.
ZYGOTE = r"""
import importlib, json, os, pathlib, signal, socket, sys
control = socket.socket(fileno=int(sys.argv[1]))
child_code = compile(sys.argv[2], "<agentcall child>", "exec")
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
null = os.open(os.devnull, os.O_RDWR)
while True:
    try:
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, 2)
    except OSError:
        break
    if not message:
        break
    if len(fds) != 2:
        for fd in fds:
            os.close(fd)
        continue
    request = json.loads(message)
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            control.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the agent's code waits for its own children
            os.setsid()
            os.dup2(fds[0], 0)
            os.dup2(null, 1)
            os.close(fds[0])
            os.close(null)
            path = request["path"]
            os.chdir(path if os.path.isdir(path) else "/")
            os.environ.clear()
            os.environ.update(request["env"])
            sys.argv = ["-c", path, str(fds[1])]
            exec(child_code, {"__name__": "__main__"})
            status = 0
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(status)
    for fd in fds:
        os.close(fd)
    control.send(json.dumps({"pid": pid}).encode())
"""


def _as_user(uid: int):
    def drop() -> None:
        os.setsid()
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    return drop


def _agent_env(cwd: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": "/tmp", "LANG": "C.UTF-8"}
    env.update({"PWD": cwd, "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra or {})
    return env


class _Zygote:
    """The process that forks the agent's children (nobody; see ``ZYGOTE``), or None where it cannot run."""

    def __init__(self):
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", ZYGOTE, str(theirs.fileno()), CHILD],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None,
            cwd="/",
            env=_agent_env("/"),
            preexec_fn=_as_user(AGENT_UID),
            pass_fds=(theirs.fileno(),),
        )
        theirs.close()

    @classmethod
    def start(cls) -> _Zygote | None:
        if not hasattr(socket, "send_fds"):  # Python < 3.9: every child is a fresh interpreter
            return None
        try:
            return cls()
        except OSError:
            return None

    def fork(self, path: str, stdin_r: int, reply_w: int) -> int | None:
        """A child for ``path`` with these pipe ends; its pid, or None when the zygote is gone or misbehaves."""
        if self.proc.poll() is not None:
            return None
        try:
            message = json.dumps({"path": path, "env": _agent_env(path)}).encode()
            socket.send_fds(self.control, [message], [stdin_r, reply_w])
            ready, _, _ = select.select([self.control], [], [], 5.0)
            answer = json.loads(self.control.recv(4096)) if ready else None
        except (OSError, ValueError):
            answer = None
        pid = answer.get("pid") if isinstance(answer, dict) else None
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
            self.close()
            return None
        return pid

    def close(self) -> None:
        self.control.close()
        try:
            self.proc.kill()
        except OSError:
            pass
        self.proc.wait()


def _as_agent(act) -> None:
    """Run ``act`` in a forked child that is nobody (no groups, the agent's uid and gid) and wait for it: a signal
    sent from there reaches the agent's processes and no one else's."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(AGENT_UID)
            os.setuid(AGENT_UID)
            act()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _signal_as_agent(pgid: int) -> None:
    """SIGKILL a process group as nobody, whatever pid the zygote reported."""

    def kill_group() -> None:
        for kill in (os.killpg, os.kill):  # the group, and the child itself should it not lead one yet
            try:
                kill(pgid, signal.SIGKILL)
            except OSError:
                pass

    _as_agent(kill_group)


class _Child:
    """The agent's process for one folder (nobody): its modules stay imported between calls, as in one program,
    so objects one module returns can be handed to another's functions. Forked by the zygote where there is one,
    else a fresh interpreter."""

    def __init__(self, path: str, zygote: _Zygote | None = None):
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        stdin_r, stdin_w = os.pipe()
        reply_r, reply_w = os.pipe()
        if zygote is not None:
            self.pid = zygote.fork(path, stdin_r, reply_w)
            if self.pid is None:  # fresh pipes for a fresh interpreter: nothing the zygote held is used
                for fd in (stdin_r, stdin_w, reply_r, reply_w):
                    os.close(fd)
                stdin_r, stdin_w = os.pipe()
                reply_r, reply_w = os.pipe()
        try:
            if self.pid is None:
                self.proc = subprocess.Popen(
                    [sys.executable, "-I", "-c", CHILD, path, str(reply_w)],
                    stdin=stdin_r,
                    stdout=subprocess.DEVNULL,
                    stderr=None,
                    cwd=path if os.path.isdir(path) else "/",
                    env=_agent_env(path),
                    preexec_fn=_as_user(AGENT_UID),
                    pass_fds=(reply_w,),
                )
                self.pid = self.proc.pid
        finally:
            os.close(stdin_r)
            os.close(reply_w)
        os.set_blocking(stdin_w, False)  # written with a deadline too (``_send``): a child may stop reading
        self.stdin = stdin_w
        self.replies = reply_r  # read with a deadline (``_reply``), never with a blocking readline
        self.pending = bytearray()

    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
        except (OSError, IndexError):
            return False

    def ask(self, request: dict, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        try:
            sent = self._send((json.dumps(request) + "\n").encode(), deadline)
        except OSError:
            return {"crashed": self._ended("before the call")}
        if not sent:
            self.kill()
            return {"crashed": f"took no call within {timeout:g}s (killed)"}
        line = self._reply(deadline)
        if line is None:
            self.kill()
            return {"crashed": f"no complete reply within {timeout:g}s (killed)"}
        if not line.endswith(b"\n"):
            return {"crashed": self._ended("without replying")}
        try:
            answer = json.loads(line)
        except ValueError:
            return {"crashed": "answered something that is not a reply"}
        return answer if isinstance(answer, dict) else {"crashed": "answered something that is not a reply"}

    def _send(self, data: bytes, deadline: float) -> bool:
        """The whole request written by ``deadline`` (False if not: a child that answered early and stopped
        reading its input would otherwise block the broker on a full pipe)."""
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _, ready, _ = select.select([], [self.stdin], [], left)
            if not ready:
                return False
            try:
                view = view[os.write(self.stdin, view) :]
            except BlockingIOError:
                continue
        return True

    def _reply(self, deadline: float) -> bytes | None:
        """One reply line, read until ``deadline``: None when it has not come whole by then (a child that writes
        half a line and stalls fails its call, not the whole grading); what came before an end of file otherwise
        (no newline), or the first ``MAX_REPLY`` bytes of a line too long."""
        whole = b"\n" in self.pending  # a line left from before; else scan only what each read adds
        while not whole and len(self.pending) < MAX_REPLY:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.replies], [], [], left)
            if not ready:
                return None
            try:
                chunk = os.read(self.replies, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                line, self.pending = bytes(self.pending), bytearray()
                return line
            self.pending += chunk
            whole = b"\n" in chunk
        end = self.pending.find(b"\n") + 1 or MAX_REPLY
        line = bytes(self.pending[:end])
        del self.pending[:end]
        return line

    def _ended(self, when: str) -> str:
        if self.proc is None:
            return f"the agent's process ended {when}"
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = "killed"
        return f"the agent's process ended {when} (status {code})"

    def kill(self) -> None:
        for fd in (self.stdin, self.replies):  # raw descriptors: closed once (the number may be another's later)
            if fd >= 0:
                os.close(fd)
        self.stdin = self.replies = -1
        if self.proc is None:
            _signal_as_agent(self.pid)
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()


def _run_program(request: dict) -> dict:
    """An agent program as nobody, in a session (and process group) of its own; its output as data. At the
    deadline its whole group is killed (from a process that is nobody), so a child it left holding the output
    pipes cannot stall the grading either."""
    cwd = request.get("cwd") or "/"
    timeout = float(request.get("timeout") or DEFAULT_TIMEOUT)
    try:
        proc = subprocess.Popen(
            request["argv"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=_agent_env(cwd, request.get("env")),
            preexec_fn=_as_user(AGENT_UID),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return {"returncode": 127, "stdout": "", "stderr": str(exc)}
    try:
        out, err = proc.communicate((request.get("input") or "").encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        _signal_as_agent(proc.pid)
        try:
            proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a process that left the group holds the pipes: stop reading them
            for stream in (proc.stdout, proc.stderr):
                stream.close()
        proc.wait()
        return {"returncode": -9, "stdout": "", "stderr": "timed out", "timed_out": True}
    return {
        "returncode": proc.returncode,
        "stdout": out[:MAX_REPLY].decode("utf-8", "replace"),
        "stderr": err[-65536:].decode("utf-8", "replace"),
    }


def _kill_agent_processes() -> None:
    """Every process nobody still has (a daemon the agent's code left), killed as nobody."""
    _as_agent(lambda: os.kill(-1, signal.SIGKILL))


_READ = "import sys; sys.stdout.write(open(sys.argv[1], encoding='utf-8', errors='replace').read())"


def read_agent_file(path) -> str:
    """A text file as the agent's code sees it (read as nobody, by the interpreter pytest runs on): what the
    agent's program wrote with a mode the grader may not read (0600 from an atomic save, say)."""
    done = run_agent([sys.executable, "-I", "-c", _READ, os.fspath(path)], cwd="/", text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise OSError(f"{path}: {lines[-1] if lines else 'cannot be read'}")
    return done.stdout


#: pytest as the grader: made non-dumpable before any test runs, with this module loaded from its own folder; the
#: files it makes are readable by others (umask 022), as ``agent_folder`` needs.
GRADER = (
    "import os, sys; os.umask(0o022); sys.path.insert(0, sys.argv[1]); import agentcall; agentcall._no_dumps(); "
    "import pytest; "
    "sys.exit(pytest.main(sys.argv[2:], plugins=[agentcall]))"
)


def grade(pytest_args: list[str]) -> int:
    """The broker (root): pytest as the grader, agent code as nobody in children, pytest's status returned."""
    if os.geteuid() != 0:
        print("agentcall: the broker runs as root (tests/test.sh)", file=sys.stderr)
        return 2
    mine, theirs = socket.socketpair()
    here = os.getcwd()  # the grader's own folder (test.sh: a fresh 0700 copy of the test files and this one)
    argv = [sys.executable, "-I", "-c", GRADER, here, *pytest_args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env[FD_ENV] = str(theirs.fileno())
    pytest = subprocess.Popen(argv, env=env, pass_fds=(theirs.fileno(),), preexec_fn=_as_user(GRADER_UID), cwd=here)
    theirs.close()
    children: dict[str, _Child] = {}
    zygote: _Zygote | None = None
    started = False
    reader = mine.makefile("rb")
    try:
        for line in reader:
            try:
                request = json.loads(line)
                if request.get("op") == "run":
                    answer = _run_program(request)
                elif request.get("op") == "reset":
                    child = children.pop(request["path"], None)
                    if child:
                        child.kill()
                    answer = {"ok": None}
                else:
                    key = request["path"]
                    if key not in children or not children[key].alive():
                        if not started:  # the first agent module of this grading
                            zygote, started = _Zygote.start(), True
                        children[key] = _Child(key, zygote)
                    answer = children[key].ask(request, float(request.get("timeout", DEFAULT_TIMEOUT)))
                    if "crashed" in answer:
                        children.pop(key).kill()
            except (ValueError, KeyError, TypeError, OSError) as exc:
                answer = {"crashed": f"broker: {type(exc).__name__}: {exc}"}
            mine.sendall((json.dumps(answer) + "\n").encode())
    finally:
        for child in children.values():
            child.kill()
        if zygote is not None:
            zygote.close()
        reader.close()
        mine.close()  # pytest, should it still wait on a reply (a fault in the broker), gets "the broker is gone"
        status = pytest.wait()
        _kill_agent_processes()
    return status


# -- inside pytest: the grader's side --------------------------------------------------------------------------

_broker: socket.socket | None = None
_broker_file = None


def _no_dumps() -> None:
    """Make this process non-dumpable: a process of the same uid can then neither trace it nor read its memory."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def _ask(request: dict) -> dict:
    global _broker, _broker_file
    if _broker is None:
        fd = os.environ.get(FD_ENV)
        if not fd:
            raise RuntimeError("agentcall: no broker; run the tests through tests/test.sh (agentcall.py grade)")
        _broker = socket.socket(fileno=int(fd))
        _broker_file = _broker.makefile("rb")
    _broker.sendall((json.dumps(request) + "\n").encode())
    line = _broker_file.readline(MAX_REPLY)
    if not line:
        raise AgentCrashed("agentcall: the broker is gone")
    return json.loads(line)


_exception_classes: dict[str, type] = {}


def _exception_class(mro: list[str]) -> type:
    """A local exception class standing for the agent's (by qualified name, its bases in the same order), so that
    ``pytest.raises(mod.ValidationError)`` matches what the agent's code raised, and nothing else.

    Every stand-in derives from :class:`AgentError`; one for a built-in exception (``ValueError``) derives from
    that built-in too, so ``pytest.raises(ValueError)`` matches the agent's. None *is* a built-in or a class of
    the grader's: a module that writes ``ValidationError = Exception`` hands the tests a stand-in that matches
    what the agent raised as ``Exception``, never ``AgentCrashed``, an ``AssertionError`` or pytest's own."""
    name = mro[0] if mro else "agent.Error"
    if name not in _exception_classes:
        short = name.rsplit(".", 1)[-1] or "Error"
        bases: tuple = (AgentError,)
        if name.startswith("builtins."):  # the end of the chain: a built-in type, or a name the agent made up
            builtin = getattr(builtins, name.split(".", 1)[1], None)
            if (
                isinstance(builtin, type)
                and issubclass(builtin, Exception)
                and builtin is not Exception
                and not issubclass(builtin, AssertionError)
            ):
                bases = (AgentError, builtin)
        elif len(mro) > 1:
            bases = (_exception_class(mro[1:]),)
            # a built-in the class also derives from that the first base's chain lacks (``class NotFound(AppError,
            # KeyError)`` when AppError's stand-in was made first, from another class): so ``pytest.raises(KeyError)``
            # still matches
            for other in mro[2:]:
                builtin = getattr(builtins, other.split(".", 1)[1], None) if other.startswith("builtins.") else None
                if (
                    isinstance(builtin, type)
                    and issubclass(builtin, Exception)
                    and builtin is not Exception
                    and not issubclass(builtin, AssertionError)
                    and not any(issubclass(b, builtin) for b in bases)
                ):
                    bases += (builtin,)
        try:
            cls = type(short, bases, {"__module__": ("agent." + name.rsplit(".", 1)[0]) if "." in name else "agent"})
        except TypeError:  # built-ins whose layouts do not combine
            cls = type(short, (AgentError,), {"__module__": "agent"})
        _exception_classes[name] = cls
    return _exception_classes[name]


def _raise(raised: dict):
    """The agent's exception, raised again in the test as its stand-in (``_exception_class``)."""
    cls = _exception_class([str(n) for n in raised.get("mro") or [f"agent.{raised.get('type')}"]])
    message = str(raised.get("message", ""))
    try:
        error = cls(message)
    except TypeError:  # a built-in with another constructor (UnicodeDecodeError): the message, as an AgentError
        error = AgentError(f"{cls.__name__}: {message}")
    raise error


def _encode(value):
    if isinstance(value, Remote):
        return {"__ref__": value._ref}
    if isinstance(value, os.PathLike):
        return {"__path__": os.fspath(value)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [_encode(v) for v in value]}
    if isinstance(value, bytes):
        return {"__bytes__": value.decode("latin-1")}
    if type(value) is object:  # a bare marker (``object()``, e.g. a value no encoder takes): a fresh one there
        return {"__object__": True}
    return value


def _write_back(sent: tuple, before: str, back, owner: AgentModule) -> None:
    """The lists, dicts and sets a test passed, changed in place as the agent's call changed its copies: a test
    that checks its argument is left intact (or filled in) sees what the agent's code did to it."""
    if not isinstance(back, list) or len(back) != 2 or json.dumps(back, sort_keys=True) == before:
        return
    args, kwargs = sent
    back = _decode(back, owner)
    pairs = list(zip(args, back[0] if isinstance(back[0], list) else []))
    pairs += [(kwargs[k], v) for k, v in (back[1] if isinstance(back[1], dict) else {}).items() if k in kwargs]
    for original, after in pairs:
        if isinstance(original, list) and isinstance(after, list):
            original[:] = after
        elif isinstance(original, dict) and isinstance(after, dict):
            original.clear()
            original.update(after)
        elif isinstance(original, set) and isinstance(after, set):
            original.clear()
            original.update(after)


def _decode(value, owner: AgentModule):
    if isinstance(value, list):
        return [_decode(v, owner) for v in value]
    if isinstance(value, dict):
        if "__ref__" in value:
            return Remote(owner, value["__ref__"], str(value.get("type")), bool(value.get("callable")))
        if "__tuple__" in value:
            return tuple(_decode(v, owner) for v in value["__tuple__"])
        if "__set__" in value:
            return {_decode(v, owner) for v in value["__set__"]}
        if "__bytes__" in value:
            return str(value["__bytes__"]).encode("latin-1")
        if "__path__" in value:
            return pathlib.Path(str(value["__path__"]))
        if "__exc__" in value:
            return _exception_class([str(n) for n in value["__exc__"]])
        return {k: _decode(v, owner) for k, v in value.items()}
    return value


def _unwrap(answer: dict, what: str, owner: AgentModule):
    if "ok" in answer:
        return _decode(answer["ok"], owner)
    if "raised" in answer:
        _raise(answer["raised"] if isinstance(answer["raised"], dict) else {})
    raise AgentCrashed(f"{what}: {answer.get('crashed', 'no reply')}")


class Remote:
    """An object that lives in the agent's process (an instance, a class, a function): attributes are read and
    calls made there; plain values (numbers, strings, lists, tuples, dicts) come back as themselves.

    A handle has no truth value, no equality and no hash: the agent's class would decide them, so ``assert
    mod.is_valid(x)`` would pass for any object it returns. Using one so raises :class:`RemoteValueError`;
    compare the plain data the agent's code returns (``assert mod.is_valid(x) is True``, ``obj.to_dict() ==
    {...}``, ``obj.name == "x"``)."""

    def __bool__(self):
        raise RemoteValueError(f"{self!r} has no truth value here: {_COMPARE_PLAIN}")

    def __eq__(self, other):
        raise RemoteValueError(f"{self!r} cannot be compared with ==: {_COMPARE_PLAIN}")

    def __ne__(self, other):
        raise RemoteValueError(f"{self!r} cannot be compared with !=: {_COMPARE_PLAIN}")

    def __hash__(self):
        raise RemoteValueError(f"{self!r} cannot be hashed: {_COMPARE_PLAIN}")

    def __init__(self, owner: AgentModule, ref: int | None, type_name: str, is_callable: bool):
        self._owner, self._ref, self._type, self._callable = owner, ref, type_name, is_callable

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._owner._request(self._ref, name=name)

    def __call__(self, *args, **kwargs):
        return self._owner._request(self._ref, call=True, args=args, kwargs=kwargs)

    def __setattr__(self, name: str, value) -> None:
        """``obj.attr = value`` sets the attribute on the agent's object (the handle's own fields start with _)."""
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            self._in_agent("setattr(obj, name, value)", name=name, value=value)

    def _in_agent(self, expression: str, **names):
        """``expression`` evaluated in the agent's process with this object as ``obj``."""
        if self._ref is None:
            return self._owner.run(f"obj = m\nresult = {expression}", **names)
        return self._owner.run(f"result = {expression}", obj=self, **names)

    def __len__(self) -> int:
        return self._in_agent("len(obj)")

    def __getitem__(self, key):
        return self._in_agent("obj[key]", key=key)

    def __setitem__(self, key, value) -> None:
        self._in_agent("obj.__setitem__(key, value)", key=key, value=value)

    def __contains__(self, item) -> bool:
        return self._in_agent("item in obj", item=item) is True

    def __iter__(self):
        return iter(self._in_agent("list(obj)"))

    def __str__(self) -> str:
        return self._in_agent("str(obj)")

    def __instancecheck__(self, obj) -> bool:
        """``isinstance(obj, cls)`` for a class of the agent's: asked in the agent's process."""
        if not isinstance(obj, Remote):
            return False
        return self._owner.run("result = isinstance(obj, cls)", obj=obj, cls=self) is True

    def __repr__(self) -> str:
        return f"<agent {self._type}>"


class AgentModule(Remote):
    """A module of the agent's, used from the grader: everything it gives runs in the agent's child process."""

    def __init__(self, module: str, path: str = "/app", timeout: float = DEFAULT_TIMEOUT):
        super().__init__(self, None, "module " + module, False)
        self._module, self._path, self._timeout = module, path, timeout

    def _request(self, ref: int | None, *, name: str = "", call: bool = False, args=(), kwargs=None):
        request = {"module": self._module, "path": self._path, "ref": ref, "name": name, "call": call}
        kwargs = kwargs or {}
        request.update(args=_encode(list(args)), kwargs=_encode(kwargs), timeout=self._timeout)
        mutable = [v for v in (*args, *kwargs.values()) if isinstance(v, (list, dict, set))]
        if call and mutable:
            request["back"] = True
        answer = _ask(request)
        if mutable and "back" in answer:
            before = json.dumps([request["args"], request["kwargs"]], sort_keys=True)
            _write_back((args, kwargs), before, answer["back"], self)
        return _unwrap(answer, f"{self._module}.{name}" if name else self._module, self)

    def run(self, code: str, **names):
        """Run ``code`` in the agent's process with its module as ``m`` (and ``names``); return its ``result``."""
        request = {"module": self._module, "path": self._path, "code": code, "names": _encode(names)}
        return _unwrap(_ask({**request, "timeout": self._timeout}), f"{self._module}: {code.strip()[:60]}", self)

    def reset(self) -> AgentModule:
        """A fresh process for the agent's folder next time: its modules imported anew, its objects gone."""
        _ask({"op": "reset", "module": self._module, "path": self._path})
        return self


def agent_module(module: str, path: str = "/app", *, timeout: float = DEFAULT_TIMEOUT, fresh: bool = True):
    """The agent's ``module`` (imported from ``path`` in a process of its own, as nobody) for calls from a test;
    ``fresh``: a new import, as a test that pops it from ``sys.modules`` would have."""
    handle = AgentModule(module, path, timeout)
    return handle.reset() if fresh else handle


def agent_folder(files: dict | None = None, *, writable: bool = False) -> pathlib.Path:
    """A fresh folder for what an agent program reads (and, ``writable``, writes), away from the tests.

    The grader's own folders are its alone (the copy of the tests, pytest's ``tmp_path``), so a program that
    ``run_agent`` starts (nobody) can read nothing there. Its inputs go here instead: a new folder under /tmp
    that nobody can read (0755; 1777 when ``writable``: nobody may add files but not replace the grader's),
    holding ``files`` (relative name -> text, bytes, or a path whose content is copied). Files the test writes
    into it later are readable too (the grader's umask is 022). Never put expected values here."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="agent-", dir="/tmp"))
    for rel, content in (files or {}).items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, os.PathLike):
            content = pathlib.Path(content).read_bytes()
        if isinstance(content, str):
            target.write_text(content)
        else:
            target.write_bytes(content)
        target.chmod(0o644)
    folder.chmod(0o1777 if writable else 0o755)
    return folder


def run_agent(
    argv,
    *,
    input=None,
    cwd: str = "/app",
    timeout: float = DEFAULT_TIMEOUT,
    env: dict[str, str] | None = None,
    text: bool = False,
    capture_output: bool = True,
    check: bool = False,
    **_ignored,
) -> subprocess.CompletedProcess:
    """``subprocess.run`` for the agent's programs: run as nobody by the broker, never as the grader.

    Takes ``subprocess.run``'s usual keywords (``input``, ``cwd``, ``timeout``, ``env``, ``text``, ``check``); the
    output is always captured. A program that outlives ``timeout`` raises ``subprocess.TimeoutExpired``.
    """
    argv = [str(a) for a in ([argv] if isinstance(argv, str) else argv)]
    data = input.decode("utf-8", "replace") if isinstance(input, bytes) else input
    request = {"op": "run", "argv": argv, "input": data, "cwd": str(cwd), "timeout": timeout, "env": env}
    answer = _ask(request)
    if "returncode" not in answer:
        raise AgentCrashed(f"{argv}: {answer.get('crashed', 'no reply')}")
    if answer.get("timed_out"):
        raise subprocess.TimeoutExpired(argv, timeout)
    out, err = answer["stdout"], answer["stderr"]
    if not text:
        out, err = out.encode(), err.encode()
    done = subprocess.CompletedProcess(argv, answer["returncode"], out, err)
    if check:
        done.check_returncode()
    return done


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "grade":
        args = sys.argv[2:]
        sys.exit(grade(args[1:] if args[:1] == ["--"] else args))
    print(__doc__)
    sys.exit(2)
