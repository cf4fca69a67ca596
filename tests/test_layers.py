"""The service's wings import one way, no module imports itself back, and `tests/` mirrors the wings
(see docs/architecture.md).

`python -m tests.test_layers` prints the module count and the test-file count per wing and the
imports that cross from `app` into `agents`.
"""

from __future__ import annotations

import ast
import collections
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
HELDOUT = TESTS / "heldout"

# Each wing of `app`, with the wings below it that it may import. The kernel (clock, errors, fsm,
# config, logs, metrics) is below every wing; `main` and `__main__` wire everything.
KERNEL = {"clock", "errors", "fsm", "config", "logs", "metrics"}
ALLOWED = {
    "store": set(),
    "llm": set(),
    "sandbox": set(),
    "contract": {"store"},
    "rounds": {"store", "contract", "sandbox"},
    "services": {"store", "contract", "rounds", "sandbox"},
    "protocols": {"store", "contract", "rounds", "services", "sandbox"},
    "web": {"store", "contract", "rounds", "services", "sandbox"},
}
PACKAGES = ("app", "agents", "extractors")
# What the round engine (`app/rounds`) may import of `agents`: its one entry point and the types.
ROUNDS_MAY_IMPORT = ("agents.round", "agents.base", "agents.model", "agents.errors", "agents.flows")
# The one module outside `agents/offline` that may import the offline model: where it is registered.
OFFLINE_REGISTERED_IN = "app.main"
# `agents/` keeps at its top the interface `app` uses (model, requests, base, errors, registry, round, phrases);
# the rest sits in packages named for what they hold (planning, tasks, builtin, knowledge, tools, ...).
AGENTS_TOP_LEVEL_AT_MOST = 20
# What the agents themselves (built-in and external tools) and what they know may not import: the
# planning of a round, the registry, the round and the running of a task. An agent gets what it needs
# in its `TaskContext`, as a third-party agent does.
AGENTS_BELOW_PLANNING = ("agents.builtin", "agents.tools", "agents.knowledge")
ABOVE_THE_AGENTS = ("agents.planning", "agents.registry", "agents.round", "agents.tasks.run")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `path` imports at its top level or in functions (not under TYPE_CHECKING)."""
    out: set[str] = set()
    tree = ast.parse(path.read_text())
    checking = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in checking:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.add(full if full in modules else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] in PACKAGES)
    return {m for m in out if m in modules}


def wing(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "app":
        return parts[0]
    if len(parts) == 1:
        return "app"
    return "kernel" if parts[1] in KERNEL else parts[1]


def test_wings_import_only_downward() -> None:
    modules = _modules()
    upward = []
    for name, path in modules.items():
        src = wing(name)
        if src not in ALLOWED:
            continue
        for target in _imports(path, modules):
            dst = wing(target)
            if dst.startswith("app") or dst in ("kernel", "agents", "extractors", src):
                continue
            if dst not in ALLOWED[src]:
                upward.append(f"{name} -> {target}")
    assert not upward, "imports against the wings' order (docs/architecture.md):\n" + "\n".join(sorted(upward))


def test_the_kernel_and_the_lower_packages_import_no_wing() -> None:
    modules = _modules()
    bad = [f"{name} -> {target}" for name, path in modules.items()
           if wing(name) in ("kernel", "agents", "extractors")
           for target in _imports(path, modules)
           if wing(target) not in ("kernel", "agents", "extractors") or
           (wing(name) == "extractors" and wing(target) == "agents") or
           (wing(name) != "kernel" and wing(target) == "kernel")]
    assert not bad, "\n".join(sorted(bad))


def test_the_store_imports_only_types_of_agents() -> None:
    """`app/store` stores and finds: what it imports of `agents` are types (the passages, the port it
    implements, the embedder it embeds through), never the ranking or the reading of language
    (`agents.knowledge.indexed` ranks, behind `agents.knowledge.retrieval.PassageIndex`), nor the agents'
    threads and processes: its vectors' forms and their scan are its own (`app.store.nearness`), in its own
    threads, and the local models' worker processes are the embedder's (`agents.knowledge.embeddings.InWorkers`)."""
    modules = _modules()
    bad = []
    for name, path in modules.items():
        if not name.startswith("app.store"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "agents":
                module = importlib.import_module(node.module)
                bad += [f"{name} -> {node.module}.{a.name}" for a in node.names
                        if not isinstance(getattr(module, a.name), type)]
            elif isinstance(node, ast.Import):
                bad += [f"{name} -> {a.name}" for a in node.names if a.name.split(".")[0] == "agents"]
    assert not bad, "app/store imports types of agents only:\n" + "\n".join(sorted(bad))


def test_the_round_engine_imports_one_agents_entry_point() -> None:
    modules = _modules()
    bad = [f"{name} -> {target}" for name, path in modules.items() if name.startswith("app.rounds.")
           for target in _imports(path, modules)
           if wing(target) == "agents" and not target.startswith(ROUNDS_MAY_IMPORT)]
    assert not bad, "app/rounds drives agents through agents.round only:\n" + "\n".join(sorted(bad))


def test_the_offline_model_is_a_leaf() -> None:
    modules = _modules()
    bad = [f"{name} -> {target}" for name, path in modules.items()
           if not name.startswith("agents.offline") and name != OFFLINE_REGISTERED_IN
           for target in _imports(path, modules) if target.startswith("agents.offline")]
    assert not bad, f"only {OFFLINE_REGISTERED_IN} names the offline model:\n" + "\n".join(sorted(bad))


def _agents_top_level() -> list[str]:
    return sorted(p.stem for p in (ROOT / "agents").glob("*.py") if p.name != "__init__.py")


def test_agents_top_level_holds_the_interface_only() -> None:
    top = _agents_top_level()
    assert len(top) <= AGENTS_TOP_LEVEL_AT_MOST, (
        f"{len(top)} modules directly in agents/ (at most {AGENTS_TOP_LEVEL_AT_MOST}); move one into the "
        "package named for what it holds (docs/architecture.md): " + ", ".join(top))


def test_agents_import_no_planning() -> None:
    modules = _modules()
    bad = [f"{name} -> {target}" for name, path in modules.items() if name.startswith(AGENTS_BELOW_PLANNING)
           for target in _imports(path, modules) if target.startswith(ABOVE_THE_AGENTS)]
    assert not bad, "built-in agents, tools and knowledge import no planning:\n" + "\n".join(sorted(bad))


def test_language_is_read_in_one_package_behind_its_interface() -> None:
    """`agents/language` imports no other `agents` module (only `extractors`, below every agent), and
    the rest of the tree imports its interface, `agents.language`, not its modules."""
    modules = _modules()
    inside = [f"{name} -> {target}" for name, path in modules.items() if name.startswith("agents.language")
              for target in _imports(path, modules)
              if wing(target) == "agents" and not target.startswith("agents.language")]
    assert not inside, "agents/language imports only itself and extractors:\n" + "\n".join(sorted(inside))
    around = [f"{name} -> {target}" for name, path in modules.items() if not name.startswith("agents.language")
              for target in _imports(path, modules) if target.startswith("agents.language.")]
    assert not around, "import agents.language, not its modules:\n" + "\n".join(sorted(around))


def test_flows_are_one_pure_interface() -> None:
    """`agents/flows` (a flow's definition, templates, expressions, validation and the engine) imports no
    other project module, and the rest of the tree imports its interface, `agents.flows`, not its modules."""
    modules = _modules()
    bad = [f"{name} -> {target}" for name, path in modules.items() if name.startswith("agents.flows")
           for target in _imports(path, modules) if not target.startswith("agents.flows")]
    assert not bad, "agents/flows imports only itself:\n" + "\n".join(sorted(bad))
    around = [f"{name} -> {target}" for name, path in modules.items() if not name.startswith(("agents.flows", "tests"))
              for target in _imports(path, modules) if target.startswith("agents.flows.")]
    assert not around, "import agents.flows, not its modules:\n" + "\n".join(sorted(around))


def test_no_module_imports_itself_back() -> None:
    modules = _modules()
    graph = {name: _imports(path, modules) for name, path in modules.items()}
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_module_names_a_held_out_document() -> None:
    """The held-out set (tests/heldout/) is measured on, never tuned on: no module of `agents/` or `app/`
    names one of its documents, by file name or stem (`invoice-x.pdf`, `invoice-x`), in code, comment
    or docstring."""
    names = {n for p in HELDOUT.iterdir() if p.is_file() and p.suffix != ".py" for n in (p.name, p.stem)}
    assert names, f"no held-out documents in {HELDOUT}"
    found = [f"{path.relative_to(ROOT)}: {name}" for path in sorted([*(ROOT / "agents").rglob("*.py"),
                                                                    *(ROOT / "app").rglob("*.py")])
             for text in [path.read_text().casefold()] for name in sorted(names) if name.casefold() in text]
    assert not found, "modules naming a held-out document (tune on tests/tuning/, not on it):\n" + "\n".join(found)


def _test_dirs() -> list[Path]:
    """The directories under tests/ that hold test modules (data and helper directories hold none)."""
    return sorted({path.parent for path in TESTS.rglob("test_*.py")} - {TESTS})


def _mirrors(test_dir: Path) -> bool:
    """Whether tests/<wing>[/<sub>...] names a wing of `app` (or `agents`, `extractors`) and, below it,
    a package or module that is there."""
    top, *rest = test_dir.relative_to(TESTS).parts
    if top == "kernel":  # the kernel is app's top-level modules, so tests/kernel/<module> at most
        return not rest or (len(rest) == 1 and rest[0] in KERNEL)
    if top in PACKAGES[1:]:
        base = ROOT / top
    elif top in ALLOWED:
        base = ROOT / "app" / top
    else:
        return False
    target = base.joinpath(*rest)
    return target.is_dir() or target.with_suffix(".py").is_file()


def test_every_test_directory_mirrors_a_wing() -> None:
    strays = [str(d.relative_to(ROOT)) for d in _test_dirs() if not _mirrors(d)]
    assert not strays, ("test directories that mirror no wing of app (nor agents/, extractors/); move their "
                        "tests to the wing they exercise (docs/architecture.md):\n" + "\n".join(strays))


def test_every_wing_has_its_test_directory() -> None:
    missing = [w for w in ["kernel", *ALLOWED, *PACKAGES[1:]] if not any(TESTS.joinpath(w).glob("test_*.py"))]
    assert not missing, "wings without tests/<wing>/: " + ", ".join(missing)


# What builds a run's Runner: the round's (`agents.round.Runner`), the flow engine's, or a helper that made a
# fresh one for each call (`runner_of`, gone: the round's Runner is built once, in `app.main`).
RUNNER_BUILDERS = {"Runner", "FlowRunner", "runner_of"}


MODULE_LINES_AT_MOST = 400  # issue 43: a module a newcomer reads in one sitting


def test_no_module_is_over_400_lines() -> None:
    long = [f"{name}: {n} lines" for name, path in sorted(_modules().items())
            if (n := len(path.read_text().splitlines())) > MODULE_LINES_AT_MOST]
    assert not long, f"split these modules (at most {MODULE_LINES_AT_MOST} lines):\n" + "\n".join(long)


def runner_sites(modules: dict[str, Path]) -> list[str]:
    """The modules of `app` that build a Runner (a call of one of RUNNER_BUILDERS)."""
    found = []
    for name, path in sorted(modules.items()):
        if not name.startswith("app"):
            continue
        calls = [n.func for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]
        if any((f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
               in RUNNER_BUILDERS for f in calls):
            found.append(name)
    return found


def test_one_place_builds_the_runner() -> None:
    """Issue 44: the round's Runner is built once, in `app.main`; a flow runs through it (`Runner.run_flow`;
    its sub-flows within that run, `agents.flows.subflows`), and a plan's tasks run on the same engine
    (`agents.planning.as_flow`)."""
    assert runner_sites(_modules()) == ["app.main"]


def report() -> None:
    modules = _modules()
    per_wing = collections.Counter(wing(m) for m in modules)
    tests = collections.Counter(path.relative_to(TESTS).parts[0] for path in TESTS.rglob("test_*.py"))
    print(f"{'wing':<12}{'modules':>8}{'test files':>12}")
    for name in ["kernel", *ALLOWED, *PACKAGES[1:]]:  # from the bottom up
        print(f"{name:<12}{per_wing[name]:>8}{tests[name]:>12}")
    app = sum(1 for m in modules if m.startswith("app."))
    print(f"{'app total':<12}{app:>8}{sum(tests[w] for w in ['kernel', *ALLOWED]):>12}"
          f"   (main, __main__: {per_wing['main'] + per_wing['__main__']} modules;"
          f" tests/ top level: {sum(1 for _ in TESTS.glob('test_*.py'))} test files)")
    statements, names = 0, set()
    for name, path in modules.items():
        if not name.startswith("app"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agents"):
                statements += 1
                names.update(f"{node.module}.{a.name}" for a in node.names)
    packages = sorted(p.parent.name for p in (ROOT / "agents").glob("*/__init__.py"))
    print(f"agents/ top level: {len(_agents_top_level())} modules; packages: {', '.join(packages)}")
    print(f"app -> agents: {statements} import statements, {len(names)} names")
    rounds = collections.Counter()
    for name, path in modules.items():
        if name.startswith("app.rounds."):
            rounds.update(t for t in _imports(path, modules) if wing(t) == "agents")
    print("app/rounds -> agents modules:", ", ".join(sorted(rounds)))
    sites = runner_sites(modules)
    print(f"places that build a Runner: {len(sites)} ({', '.join(sites)})")
    by_module = collections.Counter(n.rsplit(".", 1)[0] for n in names)
    for module, count in sorted(by_module.items()):
        print(f"  {module}: {count}")


if __name__ == "__main__":
    report()
