"""The held-out set (tests/heldout/cases.py) through a real Foreman server, beside a baseline, judged alike.

    .venv/bin/python bench/heldout.py [--tree DIR] [--base-url URL] [--baseline] [--set SET]
                                      [--only ID,...] [--out FILE] [--fixes-off NAME,...] [--each-fix-off]
                                      [--cache DIR]

Sets: `heldout` (the default, tests/heldout/: measure on it, never tune on it), `tuning` (tests/tuning/:
its own cases and the first held-out set, moved there by issue 43), `tuning-real-model` and
`tuning-first-heldout` (one list of it each), `tuning-plan-fixes` (the requests that motivated the plan
fixes, for measuring them with a real model).

Foreman side: starts `python -m app` from DIR (default: this tree; give another checkout, e.g. a
`git worktree` of main, for the "before" figures) on a fresh SQLite database, uploads each case's
documents, posts its earlier prompts and then its prompt as rounds of one conversation, waits for
each round, and judges what the last round delivered (its assistant messages and the text of the
documents it produced) with `judge` from the set. With --base-url the server talks to that
OpenAI-compatible endpoint (e.g. llama-cpp-python serving Qwen2.5-Coder-0.5B), else the offline model.

--baseline instead makes one plain chat call per round to --base-url: the documents' text (as this
tree's extractors read them) and the request, earlier rounds as earlier messages; no files can come
of it, so a case that asks for a file is at best partly right there.

--fixes-off runs the server with those fixes of a model's plan not made (PLAN_FIXES_OFF,
`agents/planning/fixes.py`); --each-fix-off runs the set once with every fix and once with each one
off, and prints what each earns: right / partly / wrong with all on against with it off, the cases
whose verdict it changes and how often it changed a plan (the server's "plan repaired (name)" lines;
a fix that changed none is not run again: off, its rounds are the same).
Both only on a tuning set: the held-out set is measured on, never tuned on. With --cache DIR (and
--base-url) the model's answers are recorded in DIR and a call seen before is answered from there
(bench/model_cache.py): each run after the first sees the same model, and costs only the calls that differ.

Prints one line per case (verdict, seconds, failed checks), the totals right / partly / wrong, and
the same per language, per kind of request (`Case.kind`, where the set gives one) and per first
word of the case ids.
The answer's language is that of its own prose: quoted source lines are left out (`own_language`).
Until 2026-11-26 the quotes were counted, so a German answer over an English document with a
longer English quote under it was judged English; --out records both verdicts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agents.language import detect_language, load_detector  # noqa: E402
from agents.planning.fixes import FIX_NAMES  # noqa: E402
from extractors import extract  # noqa: E402
from tests.heldout import cases as heldout  # noqa: E402
from tests.judging import Case, judge  # noqa: E402
from tests.tuning import cases as tuning  # noqa: E402
from tests.tuning import plan_fixes  # noqa: E402

SETS: dict[str, list[Case]] = {"heldout": heldout.CASES, "tuning": tuning.CASES,
                               "tuning-real-model": tuning.REAL_MODEL, "tuning-first-heldout": tuning.FIRST_HELDOUT,
                               "tuning-plan-fixes": plan_fixes.PLAN_FIXES}
FOLDERS = (heldout, tuning)

ROUND_LIMIT = 900.0
MANAGER_NAMES = ("manager", "project_manager", "projectManager", "project manager")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def own_language(text: str) -> str:
    """The language of the answer's own prose: the lines it quotes from a source ("> ...") and the
    source lines under them ("— report.txt [1]") are in the document's language, not the answer's."""
    own = "\n".join(line for line in text.splitlines()
                    if not line.lstrip().startswith((">", "—", "**Sources**", "**Quellen**")))
    return detect_language(own) if own.strip() else ""


def path(name: str) -> Path:
    """A case's document, from whichever set's folder holds it."""
    return next((p for p in (s.path(name) for s in FOLDERS) if p.exists()), heldout.path(name))


def text_of(name: str, data: bytes) -> str:
    found = extract(data, name)
    return "\n".join(i.data for i in found.items if i.is_text and isinstance(i.data, str))


class Server:
    def __init__(self, tree: Path, base_url: str, fixes_off: str = "") -> None:
        self.port = _free_port()
        self.data = tempfile.mkdtemp(prefix="heldout-")
        env = {**os.environ, "PORT": str(self.port), "DATA_DIR": self.data, "HOST": "127.0.0.1",
               "API_KEYS": "", "MAX_ROUND_SECONDS": str(int(ROUND_LIMIT)), "PLAN_FIXES_OFF": fixes_off}
        env.pop("DATABASE_URL", None)
        if base_url:
            env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="none", LLM_MODEL="qwen",
                       LLM_CONTEXT_TOKENS="4096", LLM_TIMEOUT_SECONDS="300")
        self.log = open(Path(self.data) / "server.log", "w")
        self.process = subprocess.Popen([sys.executable, "-m", "app"], cwd=tree, env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)
        self.workflow: int | None = None  # the last case's conversation
        for _ in range(600):
            try:
                if self.client.get("/ready").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not get ready; see {self.log.name}")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def round(self, workflow: int | None, prompt: str, file_ids: list[int]) -> tuple[int, dict]:
        url = "/api/workflows/start" + (f"?id={workflow}" if workflow else "")
        started = self.client.post(url, json={"prompt": prompt, "listFileId": file_ids})
        started.raise_for_status()
        wid = started.json()["id"]
        deadline = time.monotonic() + ROUND_LIMIT + 60
        while time.monotonic() < deadline:
            status = self.client.get(f"/api/workflows/{wid}/status").json()
            if status["status"] not in ("running", "waiting"):
                break
            time.sleep(0.5)
        return wid, self.client.get(f"/api/workflows/{wid}").json()

    def run(self, case: Case) -> tuple[str, str, list[str], str, str]:
        files = [("files", (name, path(name).read_bytes())) for name in case.docs]
        ids = [f["id"] for f in self.client.post("/api/files", files=files).json()] if files else []
        workflow = None
        for prompt in case.before:
            workflow, _ = self.round(workflow, prompt, ids)
            ids = []  # the documents stay in the conversation
        workflow, whole = self.round(workflow, case.prompt, ids)
        self.workflow = workflow
        messages = whole["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        answer = [m for m in messages[last_user + 1:] if m["role"] == "assistant"]
        delivered, produced = [m["content"] or "" for m in answer], []
        for m in answer:
            for doc in m.get("documents") or []:
                data = self.client.get(f"/api/files/{doc['fileId']}/content").content
                produced.append(doc.get("ext") or doc["name"].rsplit(".", 1)[-1])
                delivered.append(text_of(f"{doc['name']}.{doc.get('ext', '')}".rstrip("."), data))
        steps = [m for m in answer if m["status"] == "step" and (m.get("agentName") or "") not in MANAGER_NAMES]
        main = "\n".join(m["content"] or "" for m in (steps or answer[:1]))
        reply = next((m["content"] or "" for m in answer if (m.get("agentName") or "") in MANAGER_NAMES), "")
        return "\n".join(delivered), main, produced, whole["status"], reply


def baseline(base_url: str, case: Case, client: httpx.Client) -> tuple[str, str, list[str], str, str]:
    docs = "\n\n".join(f"--- {name} ---\n{text_of(name, path(name).read_bytes())[:6000]}" for name in case.docs)
    system = "You are a helpful assistant. Answer the user's request; use the documents when it is about them."
    messages = [{"role": "system", "content": system}]
    reply = ""
    for n, prompt in enumerate([*case.before, case.prompt]):
        content = (f"Documents:\n{docs}\n\nRequest: {prompt}" if n == 0 and docs else prompt)
        messages.append({"role": "user", "content": content})
        answer = client.post(f"{base_url}/chat/completions", json={
            "model": "qwen", "messages": messages, "temperature": 0, "max_tokens": 700}).json()
        reply = answer["choices"][0]["message"]["content"] or ""
        messages.append({"role": "assistant", "content": reply})
    return reply, reply, [], "completed", reply


def _groups(case: Case) -> list[str]:
    """The groups a case is counted in: its language, its kind, its id's first word (in the held-out set
    the kind of document: inv-, con-, deck-, rep-, scan-) and the follow-ups."""
    return ([f"lang {case.lang or '-'}", f"ids {case.id.split('-')[0]}-"] + ([f"kind {case.kind}"] if case.kind else [])
            + (["follow-ups"] if case.before else []))


def fixes_fired(server: Server, workflow: int | None = None) -> dict[str, int]:
    """How often each fix changed a plan in this server's rounds (in one workflow's, when given), from its log."""
    lines = Path(server.log.name).read_text(errors="replace").splitlines()
    if workflow is not None:
        lines = [line for line in lines if re.search(rf"\bworkflowId={workflow}\b", line)]
    said = re.findall(r"plan repaired \((\w+)\)", "\n".join(lines))
    return {name: said.count(name) for name in dict.fromkeys(said)}


def each_fix_off(cases: list[Case], tree: Path, base_url: str) -> int:
    """The set with every fix, then with each fix off: what each earns."""
    def run(off: str) -> tuple[dict[str, str], dict[str, int]]:
        server = Server(tree, base_url, off)
        verdicts: dict[str, str] = {}
        try:
            for case in cases:
                try:
                    delivered, main_text, files, _, reply = server.run(case)
                    verdicts[case.id], _ = judge(case, delivered, main_text, files, own_language(main_text),
                                                 own_language(reply))
                except Exception:  # noqa: BLE001 - a case that breaks is wrong
                    verdicts[case.id] = "wrong"
        finally:
            server.close()
        return verdicts, fixes_fired(server)

    def counts(verdicts: dict[str, str]) -> str:
        return " / ".join(str(list(verdicts.values()).count(v)) for v in ("right", "partly", "wrong"))

    score = {"right": 2, "partly": 1, "wrong": 0}
    started = time.perf_counter()
    base, fired = run("")
    print(f"{'all fixes':16s} {counts(base):12s} (right / partly / wrong of {len(cases)}, "
          f"{time.perf_counter() - started:.0f} s)", flush=True)
    print(f"{'fix off':16s} {'verdicts':12s} {'earns':>5s} {'fired':>5s}  cases it changes (with it -> without)")
    for name in FIX_NAMES:
        if not fired.get(name):  # it changed no plan: off, every round is the same (not run again)
            print(f"{name:16s} {counts(base):12s} {0:5d} {0:5d}  (changed no plan with all on)", flush=True)
            continue
        verdicts, _ = run(name)
        earns = sum(score[base[c]] - score[verdicts[c]] for c in base)
        changed = [f"{c} {base[c]}->{verdicts[c]}" for c in base if base[c] != verdicts[c]]
        print(f"{name:16s} {counts(verdicts):12s} {earns:5d} {fired.get(name, 0):5d}  {', '.join(changed)}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(ROOT), help="the Foreman checkout to run (default: this one)")
    parser.add_argument("--base-url", default="", help="an OpenAI-compatible endpoint (…/v1); default: offline")
    parser.add_argument("--baseline", action="store_true", help="one plain chat call per round to --base-url")
    parser.add_argument("--set", default="heldout", choices=sorted(SETS),
                        help="the held-out set (measure on it) or a tuning set (tests/tuning)")
    parser.add_argument("--only", default="", help="comma-separated case ids")
    parser.add_argument("--out", default="", help="also write the results as JSON lines to FILE")
    parser.add_argument("--fixes-off", default="", help="PLAN_FIXES_OFF for the server (a tuning set only)")
    parser.add_argument("--each-fix-off", action="store_true",
                        help="the set with all fixes, then with each off: what each earns (a tuning set only)")
    parser.add_argument("--cache", default="",
                        help="answer a model call seen before from DIR (bench/model_cache.py in front of --base-url)")
    args = parser.parse_args()
    if args.cache and args.base_url:
        with cached(args.base_url, Path(args.cache)) as url:
            args.base_url = url
            return run(args, parser)
    return run(args, parser)


@contextlib.contextmanager
def cached(upstream: str, directory: Path) -> Iterator[str]:
    """bench/model_cache.py in front of `upstream` for the time of the run: its URL."""
    port = _free_port()
    proxy = subprocess.Popen([sys.executable, str(ROOT / "bench" / "model_cache.py"), "--upstream", upstream,
                              "--dir", str(directory), "--port", str(port)])
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(url + "/models", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url
    finally:
        proxy.terminate()
        proxy.wait(30)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cases = [c for c in SETS[args.set] if not args.only or c.id in args.only.split(",")]
    if (args.fixes_off or args.each_fix_off) and not args.set.startswith("tuning"):
        parser.error("--fixes-off and --each-fix-off measure on a tuning set (--set tuning...), never the held-out set")
    load_detector()
    if args.each_fix_off:
        return each_fix_off(cases, Path(args.tree), args.base_url)
    out = open(args.out, "w") if args.out else None
    server = None if args.baseline else Server(Path(args.tree), args.base_url, args.fixes_off)
    client = httpx.Client(timeout=ROUND_LIMIT)
    totals = {"right": 0, "partly": 0, "wrong": 0}
    counted = dict(totals)  # with quoted lines counted in the answer's language
    groups: dict[str, dict[str, int]] = {}  # "lang de", "kind superlative", "follow-ups": verdict counts
    try:
        for case in cases:
            started = time.perf_counter()
            try:
                delivered, main_text, files, status, reply = (baseline(args.base_url, case, client) if args.baseline
                                                              else server.run(case))  # type: ignore[union-attr]
                language, reply_language = own_language(main_text), own_language(reply)
                verdict, failed = judge(case, delivered, main_text, files, language, reply_language)
                # As judged before the quotes were set apart (the figures of earlier sessions).
                quoted, _ = judge(case, delivered, main_text, files,
                                  detect_language(main_text) if main_text.strip() else "", reply_language)
            except Exception as exc:  # a side that breaks on a case is wrong on it
                verdict, failed, status = "wrong", [f"error: {exc!r}"[:200]], "error"
                quoted = verdict
            seconds = time.perf_counter() - started
            totals[verdict] += 1
            counted[quoted] += 1
            for group in _groups(case):
                groups.setdefault(group, dict.fromkeys(totals, 0))[verdict] += 1
            fired = fixes_fired(server, server.workflow) if server and server.workflow is not None else {}
            if server:
                server.workflow = None
            print(f"{case.id:28s} {verdict:6s} {seconds:6.1f}s {status:9s} {'; '.join(failed)}"
                  + (f"  [fixed: {', '.join(fired)}]" if fired else ""), flush=True)
            if out:
                out.write(json.dumps({"id": case.id, "verdict": verdict, "failed": failed, "seconds": seconds,
                                      "status": status, "verdict_quotes_counted": quoted, "fixes": fired,
                                      "answer": main_text, "reply": reply}, ensure_ascii=False) + "\n")
                out.flush()
    finally:
        if server:
            server.close()
    n = len(cases)
    print(f"right {totals['right']}/{n}, partly {totals['partly']}/{n}, wrong {totals['wrong']}/{n}")
    print(f"(quoted lines counted in the answer's language: right {counted['right']}, partly {counted['partly']}, "
          f"wrong {counted['wrong']})")
    for group, count in sorted(groups.items()):
        print(f"  {group:24s} right {count['right']:2d}, partly {count['partly']:2d}, wrong {count['wrong']:2d}"
              f" of {sum(count.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
