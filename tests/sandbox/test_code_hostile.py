"""Hostile code against the code sandbox: every case asserts that its EFFECT did not happen (the
secret is absent from what came back, the file does not exist, the listener saw nothing, the process
is gone), not only that an error was raised.

Many cases first step around the import list (`random._os` is the real `os`; any module's
`__builtins__` holds the real `__import__`), because the list is only the clear error: what must
hold is the process's confinement.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from app.sandbox import confinement
from app.sandbox.code import CodeLimits, CodeResult, CodeSandbox, SandboxUnavailableError
from tests.sandbox.conftest import SECRET, SECRET_ENV, Listener, Service, none_left, require, sandbox_processes

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIMITS = CodeLimits(timeout_seconds=5.0)
SHORT = CodeLimits(timeout_seconds=1.0)
ESCAPE = "import random\nos = random._os\nimp = random.__builtins__['__import__']\n"
COLD_UIDS = range(230_000, 230_050)  # the cold pool's own, so its processes can be counted


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cold() -> AsyncIterator[CodeSandbox]:
    """A pool without warm workers: after a run, no process of its user ids may be left."""
    pool = CodeSandbox(warm=0, uids=COLD_UIDS)
    await pool.start()
    require(pool)
    yield pool
    await pool.close()


async def run(sandbox: CodeSandbox, code: str, limits: CodeLimits = LIMITS, **inputs: object) -> CodeResult:
    return await sandbox.run_code(code, inputs, {}, limits)


def leaked(result: CodeResult, *needles: str) -> bool:
    seen = f"{result.result!r} {result.error}"
    return any(needle in seen for needle in (SECRET, *needles))


# --- reading what is the service's --------------------------------------------------------------

READS = {
    "data dir file": "result = open(inputs['data'] + '/secret.txt').read()",
    "database file": "result = open(inputs['db'], 'rb').read().decode('latin-1')",
    "data dir listing": ESCAPE + "result = [open(inputs['data'] + '/' + n).read() for n in os.listdir(inputs['data'])]",
    "os.environ": ESCAPE + "result = dict(os.environ)",
    "getenv": ESCAPE + f"result = os.getenv('{SECRET_ENV}')",
    "/proc/self/environ": "result = open('/proc/self/environ').read()",
    "/proc/1/environ": "result = open('/proc/1/environ').read()",
    "another process's environ": "result = open(f\"/proc/{inputs['holder']}/environ\").read()",
    "another process's memory": ESCAPE + (
        "maps = open(f\"/proc/{inputs['holder']}/maps\").read().splitlines()\n"
        "mem = os.open(f\"/proc/{inputs['holder']}/mem\", os.O_RDONLY)\nfound = []\n"
        "for line in maps:\n    a, b = (int(x, 16) for x in line.split()[0].split('-'))\n"
        "    try:\n        found.append(os.pread(mem, min(b - a, 2**20), a).decode('latin-1'))\n"
        "    except OSError:\n        pass\n"
        f"result = [t for t in found if '{SECRET}' in t]"),
    "/etc/shadow": "result = open('/etc/shadow').read()",
    "symlink to the data": ESCAPE + "os.symlink(inputs['data'] + '/secret.txt', 'l')\nresult = open('l').read()",
    "hard link to the data": ESCAPE + "os.link(inputs['data'] + '/secret.txt', 'l')\nresult = open('l').read()",
    "os.open on the data": ESCAPE + "fd = os.open(inputs['data'] + '/secret.txt', os.O_RDONLY)\nresult = os.read(fd, 100).decode()",
    "chroot escape": ESCAPE + (
        "os.mkdir('x')\nos.chroot('x')\nos.chdir('../../../../..')\nos.chroot('.')\n"
        "result = open(inputs['data'] + '/secret.txt').read()"),
    "subclasses walk to os": (
        "w = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
        "g = w.__init__.__globals__\nfd = g['open'](inputs['data'] + '/secret.txt', 0)\nresult = g['read'](fd, 100).decode()"),
}


@pytest.mark.parametrize("code", READS.values(), ids=READS.keys())
async def test_the_services_secrets_cannot_be_read(sandbox: CodeSandbox, service: Service, code: str) -> None:
    # A process of the service's holding the secret in its environment and its memory.
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import sys, time; s = sys.argv[1] * 2; time.sleep(60)", SECRET,
        env={**os.environ, SECRET_ENV: SECRET})
    try:
        result = await run(sandbox, code, data=str(service.data_dir), db=str(service.database), holder=holder.pid)
    finally:
        holder.kill()
        await holder.wait()
    assert not leaked(result, SECRET_ENV, "root:"), result


async def test_a_walk_of_everything_it_sees_finds_no_secret(sandbox: CodeSandbox, service: Service) -> None:
    code = ESCAPE + (
        "found, seen = [], 0\nfor top, dirs, files in os.walk('/'):\n"
        "    for name in files:\n        seen += 1\n"
        "        try:\n            text = open(top + '/' + name, 'rb').read(10**6).decode('latin-1')\n"
        "        except Exception:\n            continue\n"
        f"        if '{SECRET}' in text: found.append(top + '/' + name)\n"
        "result = [found, seen]")
    result = await run(sandbox, code, CodeLimits(timeout_seconds=30))
    assert result.ok and result.result[0] == [] and result.result[1] > 0, result  # it walked, and found nothing


async def test_system_files_are_not_there(sandbox: CodeSandbox) -> None:
    result = await run(sandbox, ESCAPE + "result = sorted(os.listdir('/'))\nresult.append(open('/etc/passwd').read())")
    assert not result.ok and "root:x:0:0" not in f"{result.result} {result.error}"
    listing = await run(sandbox, ESCAPE + "result = sorted(os.listdir('/'))")
    assert listing.ok and not {"etc", "work", "proc", "dev", "home"} & set(listing.result), listing


async def test_the_workers_environment_is_clean(sandbox: CodeSandbox) -> None:
    result = await run(sandbox, ESCAPE + "result = dict(os.environ)")
    assert result.ok and not set(result.result) - {"LC_CTYPE"}, result  # only what Python sets itself


# --- writing outside the scratch directory ------------------------------------------------------

WRITES = {
    "open for writing": "open(inputs['target'], 'w').write('x')",
    "os.open": ESCAPE + "os.close(os.open(inputs['target'], os.O_CREAT | os.O_WRONLY))",
    "os.system": ESCAPE + "result = os.system('touch ' + inputs['target'])",
    "subprocess": ESCAPE + "imp('subprocess').run(['touch', inputs['target']])",
    "posix_spawn": ESCAPE + "os.waitpid(os.posix_spawn('/usr/bin/touch', ['touch', inputs['target']], {}), 0)",
    "execv": ESCAPE + "os.execv('/usr/bin/touch', ['touch', inputs['target']])",
    "ctypes": ESCAPE + "imp('ctypes').CDLL(None).system(('touch ' + inputs['target']).encode())",
    "importlib": ESCAPE + "imp('importlib').import_module('subprocess').call(['touch', inputs['target']])",
    "sys.modules": ESCAPE + "imp('sys').modules['os'].system('touch ' + inputs['target'])",
    "subclasses walk to os.system": (
        "w = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
        "w.__init__.__globals__['system']('touch ' + inputs['target'])"),
    "catch_warnings walk": (
        "c = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]\n"
        "c()._module.__builtins__['__import__']('os').system('touch ' + inputs['target'])"),
    "builtins tampering": (
        "import random\n__builtins__['__import__'] = random.__builtins__['__import__']\n"
        "import os\nos.system('touch ' + inputs['target'])"),
    "into /etc": "open('/etc/' + inputs['name'], 'w').write('x')",
    "relative climb out of scratch": "open('../../../../' + inputs['target'], 'w').write('x')",
}


@pytest.mark.parametrize("code", WRITES.values(), ids=WRITES.keys())
async def test_nothing_is_written_outside_the_scratch_directory(sandbox: CodeSandbox, service: Service,
                                                               code: str, request: pytest.FixtureRequest) -> None:
    name = "pwned-" + "".join(c if c.isalnum() else "-" for c in request.node.callspec.id) + f"-{os.getpid()}"
    target = service.outside / name
    await run(sandbox, code, target=str(target), name=name)
    assert not target.exists() and not Path("/etc", name).exists()


async def test_the_standard_library_it_sees_is_read_only(sandbox: CodeSandbox) -> None:
    library = Path(os.__file__)
    before = library.read_bytes()
    result = await run(sandbox, "import random\nopen(random._os.__file__, 'a').write('import shutil\\n')")
    assert not result.ok and library.read_bytes() == before


# --- the network --------------------------------------------------------------------------------

CONNECTS = {
    "socket": ESCAPE + "imp('socket').create_connection(('127.0.0.1', inputs['port']), timeout=2)",
    "_socket": ESCAPE + "s = imp('_socket').socket()\ns.connect(('127.0.0.1', inputs['port']))",
    "urllib": ESCAPE + "imp('urllib.request').urlopen(f\"http://127.0.0.1:{inputs['port']}/\", timeout=2)",
    "http.client": ESCAPE + "c = imp('http.client').HTTPConnection('127.0.0.1', inputs['port'], timeout=2)\nc.request('GET', '/')",
    "asyncio": ESCAPE + ("asyncio = imp('asyncio')\nasyncio.run(asyncio.open_connection('127.0.0.1', inputs['port']))"),
    "builtins tampering": ("import random\n__builtins__['__import__'] = random.__builtins__['__import__']\n"
                           "import socket\nsocket.create_connection(('localhost', inputs['port']), timeout=2)"),
    "ctypes socket call": ESCAPE + "result = imp('ctypes').CDLL(None).socket(2, 1, 0)",
}


@pytest.mark.parametrize("code", CONNECTS.values(), ids=CONNECTS.keys())
async def test_a_listener_on_loopback_sees_no_connection(sandbox: CodeSandbox, listener: Listener, code: str) -> None:
    result = await run(sandbox, code, port=listener.port)
    await _settle()
    assert not listener.connections, result


async def test_the_listener_does_count_a_real_connection(listener: Listener) -> None:
    """The control: the same listener sees a connection from the service's own process."""
    before = len(listener.connections)
    _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.close()
    await _settle(lambda: len(listener.connections) > before)
    assert len(listener.connections) == before + 1
    listener.connections.clear()


async def _settle(until: object = None) -> None:
    """Give the listener's accept a few turns of the loop (until `until()` holds, with a deadline)."""
    for _ in range(200):
        if callable(until) and until():
            return
        await asyncio.sleep(0.005)


# --- processes and signals ----------------------------------------------------------------------


async def test_fork_makes_no_process(sandbox: CodeSandbox) -> None:
    code = ESCAPE + "try:\n    pid = os.fork()\nexcept OSError as e:\n    pid = str(e)\nif pid == 0:\n    os._exit(0)\nresult = pid"
    result = await run(sandbox, code)
    assert result.ok and isinstance(result.result, str), result  # an int would be a child's pid


async def test_a_fork_bomb_makes_no_process(cold: CodeSandbox) -> None:
    code = ESCAPE + "n = 0\ntry:\n    while n < 10000:\n        if os.fork() == 0:\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nresult = n"
    result = await run(cold, code)
    assert result.ok and result.result == 0 and await none_left(COLD_UIDS), result


async def test_a_thread_cannot_start(sandbox: CodeSandbox) -> None:
    code = ESCAPE + ("ran = []\nt = imp('threading').Thread(target=lambda: ran.append(1))\n"
                     "try:\n    t.start()\n    t.join()\nexcept RuntimeError:\n    pass\nresult = ran")
    result = await run(sandbox, code)
    assert result.ok and result.result == [], result


async def test_another_process_cannot_be_signalled_or_limited(sandbox: CodeSandbox) -> None:
    victim = await asyncio.create_subprocess_exec(sys.executable, "-c", "import time; time.sleep(60)")
    try:
        limits_before = Path(f"/proc/{victim.pid}/limits").read_text()
        code = ESCAPE + ("errors = []\nfor call in (lambda: os.kill(inputs['pid'], 9), lambda: os.killpg(inputs['pid'], 9),\n"
                         "             lambda: imp('resource').prlimit(inputs['pid'], 7, (0, 0))):\n"
                         "    try:\n        call()\n    except Exception as e:\n        errors.append(type(e).__name__)\n"
                         "result = errors")
        result = await run(sandbox, code, pid=victim.pid)
        assert victim.returncode is None and Path(f"/proc/{victim.pid}/limits").read_text() == limits_before
        assert result.ok and len(result.result) == 3, result
    finally:
        victim.kill()
        await victim.wait()


async def test_the_service_receives_no_signal(sandbox: CodeSandbox) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: received.append(number))
    try:
        result = await run(sandbox, ESCAPE + "os.kill(inputs['pid'], 10)", pid=os.getpid())
        await _settle()
        assert not received and not result.ok, result
    finally:
        signal.signal(signal.SIGUSR1, previous)


async def test_it_cannot_become_root_again(sandbox: CodeSandbox) -> None:
    result = await run(sandbox, ESCAPE + "try:\n    os.setuid(0)\nexcept OSError:\n    pass\nresult = [os.getuid(), os.geteuid()]")
    assert result.ok and 0 not in result.result, result


# --- limits -------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", ["while True:\n    pass",
                                  "while True:\n    try:\n        while True: pass\n    except BaseException:\n        pass"],
                         ids=["endless loop", "endless loop that catches everything"])
async def test_an_endless_loop_is_killed_at_the_time_limit(cold: CodeSandbox, code: str) -> None:
    result = await run(cold, code, SHORT)
    assert result.limit == "time" and not result.ok and "time limit" in (result.error or "")
    assert await none_left(COLD_UIDS)


@pytest.mark.parametrize("code", ["result = len(bytearray(6 * 2**30))",
                                  "blocks = []\nwhile True:\n    blocks.append(bytearray(2**24))",
                                  ESCAPE + "r = imp('resource')\ntry:\n    r.setrlimit(r.RLIMIT_AS, (-1, -1))\nexcept Exception:\n    pass\n"
                                  "result = len(bytearray(6 * 2**30))"],
                         ids=["6 GB at once", "16 MB at a time", "after raising its own limit"])
async def test_memory_is_bounded(cold: CodeSandbox, code: str) -> None:
    result = await run(cold, code)
    assert result.limit == "memory" and result.result is None, result
    assert await none_left(COLD_UIDS)


async def test_a_6_gb_map_is_refused(sandbox: CodeSandbox) -> None:
    result = await run(sandbox, ESCAPE + "m = imp('mmap').mmap(-1, 6 * 2**30)\nm[-1] = 1\nresult = len(m)")
    assert not result.ok and result.result is None, result


@pytest.mark.parametrize("code", ["for _ in range(1000):\n    print('x' * 10**6)",
                                  "result = ['x' * 1000] * 10**6",
                                  ESCAPE + "os.write(3, (2**30).to_bytes(4, 'big'))\nfor _ in range(1000):\n    os.write(3, b'x' * 10**6)"],
                         ids=["1 GB printed", "1 GB result", "1 GB written to the answer pipe"])
async def test_output_is_bounded(cold: CodeSandbox, code: str) -> None:
    result = await run(cold, code)
    assert result.limit == "output" and result.result is None, result
    assert await none_left(COLD_UIDS)


async def test_a_forged_answer_is_not_taken_for_the_services(cold: CodeSandbox) -> None:
    code = ESCAPE + ("os.write(3, (5).to_bytes(4, 'big') + b'{oops')\nwhile True:\n    pass")
    result = await run(cold, code)
    assert result.error == "the code broke its worker's answer" and not result.ok
    assert await none_left(COLD_UIDS)


async def test_deep_recursion_is_a_clean_error(sandbox: CodeSandbox) -> None:
    result = await run(sandbox, "def down(n):\n    return down(n + 1)\n\ndown(0)")
    assert result.error == "RecursionError: maximum recursion depth exceeded (line 2)", result


async def test_recursion_past_the_c_stack_is_a_clean_error(cold: CodeSandbox) -> None:
    code = ESCAPE + "imp('sys').setrecursionlimit(10**7)\ndef down(n):\n    return down(n + 1)\ndown(0)"
    result = await run(cold, code)
    assert not result.ok and "worker.py" not in (result.error or "") and "/work" not in (result.error or ""), result
    assert await none_left(COLD_UIDS)


async def test_a_stop_kills_the_worker(cold: CodeSandbox) -> None:
    task = asyncio.create_task(run(cold, "while True:\n    pass", CodeLimits(timeout_seconds=60)))
    for _ in range(1000):
        if sandbox_processes(COLD_UIDS):
            break
        await asyncio.sleep(0.01)
    assert sandbox_processes(COLD_UIDS)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await none_left(COLD_UIDS)


# --- between runs, and what the node is told ----------------------------------------------------


async def test_a_run_sees_no_earlier_runs_scratch(sandbox: CodeSandbox) -> None:
    first = await run(sandbox, f"open('/scratch/left', 'w').write('{SECRET}')\nresult = 'written'")
    assert first.ok
    second = await run(sandbox, ESCAPE + "result = [os.listdir('/scratch'), os.path.exists('/scratch/left')]")
    assert second.ok and second.result == [[], False] and not leaked(second), second


@pytest.mark.parametrize("module", ["os", "socket", "subprocess", "ctypes"])
async def test_importing_a_way_out_is_a_clear_error(sandbox: CodeSandbox, module: str) -> None:
    result = await run(sandbox, f"x = 1\nimport {module}")
    assert result.error == (f"ImportError: import of '{module}' is not allowed in a code node "
                            "(only the pure standard library: see docs/sandbox.md) (line 2)")


async def test_an_error_names_the_users_line_and_nothing_of_the_service(sandbox: CodeSandbox) -> None:
    result = await run(sandbox, "total = sum(inputs['xs'])\nresult = total / inputs['d']", xs=[1, 2], d=0)
    assert result.error == "ZeroDivisionError: division by zero (line 2)"
    syntax = await run(sandbox, "result = (1,\n")
    assert syntax.error is not None and syntax.error.startswith("SyntaxError") and "line 1" in syntax.error


async def test_the_pure_standard_library_works(sandbox: CodeSandbox) -> None:
    code = ("import json, math, statistics, datetime, re, collections, hashlib, decimal\n"
            "result = {'mean': statistics.mean(inputs['xs']), 'day': datetime.date(2024, 2, 29).isoformat(),\n"
            "          'sha': hashlib.sha256(b'a').hexdigest()[:8], 'words': collections.Counter(re.findall('\\\\w+', 'a b a')),\n"
            "          'when': datetime.datetime.strptime('2024-01-02', '%Y-%m-%d').day, 'd': str(decimal.Decimal('0.1') * 3),\n"
            "          'n': nodes['a']['output'], 'idna': 'bücher.de'.encode('idna').decode()}")
    result = await sandbox.run_code(code, {"xs": [1, 2, 3]}, {"a": {"output": 7, "files": []}}, LIMITS)
    assert result.ok and result.result == {"mean": 2, "day": "2024-02-29", "sha": "ca978112", "words": {"a": 2, "b": 1},
                                           "when": 2, "d": "0.3", "n": 7,
                                           "idna": "xn--bcher-kva.de"}, result


async def test_where_isolation_cannot_be_had_code_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confinement, "unsupported_reason", lambda: "no namespaces here")
    pool = CodeSandbox(warm=0, uids=COLD_UIDS)
    await pool.start()
    assert not pool.available and pool.reason == "no namespaces here"
    with pytest.raises(SandboxUnavailableError, match="no namespaces here"):
        await run(pool, "result = 1")
    assert await none_left(COLD_UIDS)


async def test_a_flood_of_runs_holds_at_most_max_running_processes() -> None:
    uids = range(231_000, 231_050)
    pool = CodeSandbox(warm=0, max_running=2, uids=uids)
    await pool.start()
    require(pool)
    runs = asyncio.gather(*(run(pool, "while True:\n    pass", CodeLimits(timeout_seconds=0.5)) for _ in range(6)))
    most = 0
    while not runs.done():
        most = max(most, len(sandbox_processes(uids)))
        await asyncio.sleep(0.01)
    assert [r.limit for r in await runs] == ["time"] * 6 and 0 < most <= 2
    await pool.close()


async def test_the_seccomp_filter_refuses_the_calls_themselves(sandbox: CodeSandbox) -> None:
    """The namespaces, the chroot and the rlimits alone stop every case above; the filter is the layer
    behind them, so it is checked on its own: the calls fail with EPERM before reaching them."""
    code = ESCAPE + (
        "errno = []\nfor call in (lambda: imp('socket').socket(), lambda: os.fork(),\n"
        "             lambda: os.execv('/x', ['x']), lambda: os.kill(os.getpid(), 0)):\n"
        "    try:\n        call()\n        errno.append(0)\n    except OSError as e:\n        errno.append(e.errno)\n"
        "result = errno")
    result = await run(sandbox, code)
    assert result.ok and result.result == [1, 1, 1, 1], result
