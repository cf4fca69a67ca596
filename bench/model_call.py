"""CPU per model call: the OpenAI client against the stub over real HTTP, this tree against another.

    python bench/model_call.py [--calls 400] [--concurrency 20] [--checkout OTHER_TREE]

Each side runs in its own process (`python bench/model_call.py --side TREE`): it makes `--calls`
streamed completions, `--concurrency` at a time, with a 3 KB prompt, against one stub process
(bench/model_stub.py, instant answers), and reports the process's CPU time per call. The sides
alternate three times (A B A B A B); the medians and their ratio are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "Check the following figures for consistency and say what you find. " * 45


@contextmanager
def stub(delay: float = 0.0) -> Iterator[int]:
    """bench/model_stub.py in its own process; its port."""
    process = subprocess.Popen([sys.executable, str(ROOT / "bench" / "model_stub.py"), "--delay", str(delay)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        process.terminate()
        process.wait(10)


async def calls(port: int, count: int, concurrency: int) -> float:
    from app.llm.client import OpenAIModel
    try:
        from agents.model import ModelRequest
    except ImportError:  # a tree from before the model interface moved to agents/
        from app.model import ModelRequest  # type: ignore[no-redef]

    request = ModelRequest(purpose="task", messages=[{"role": "system", "content": "You are the analyst agent."},
                                                     {"role": "user", "content": PROMPT}], agent="analyst")
    async with OpenAIModel(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", model="stub") as model:
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate:
                assert (await model.complete(request)).text == "Checked."

        await asyncio.gather(*(one() for _ in range(concurrency)))  # warm: connections, imports
        started = time.process_time()
        await asyncio.gather(*(one() for _ in range(count)))
        return (time.process_time() - started) / count


def side(tree: Path, port: int, count: int, concurrency: int) -> float:
    """CPU ms per call of the client in `tree`, measured in a fresh process."""
    out = subprocess.run([sys.executable, __file__, "--side", str(tree), "--port", str(port), "--calls", str(count),
                          "--concurrency", str(concurrency)], cwd=tree, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--checkout", type=Path, default=None, help="another tree to compare with this one")
    parser.add_argument("--side", type=Path, default=None)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.side is not None:
        sys.path.insert(0, str(args.side))
        print(asyncio.run(calls(args.port, args.calls, args.concurrency)) * 1000)
        return
    trees = [ROOT] + ([args.checkout.resolve()] if args.checkout else [])
    results: dict[Path, list[float]] = {tree: [] for tree in trees}
    with stub() as port:
        for _ in range(3):
            for tree in trees:
                results[tree].append(side(tree, port, args.calls, args.concurrency))
    for tree, values in results.items():
        print(f"{tree}: CPU per model call {sorted(values)[1]:.2f} ms (runs: {', '.join(f'{v:.2f}' for v in values)})")
    if args.checkout:
        this, other = (sorted(results[t])[1] for t in trees)
        print(f"ratio this/other: {this / other:.2f}")


if __name__ == "__main__":
    main()
