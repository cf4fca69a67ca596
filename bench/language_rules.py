"""Lines of hand-written language rules: the word lists and word regexes that read natural language,
and the functions that consult them (issue 32: "report before and after; the goal is half or less").

    .venv/bin/python bench/language_rules.py [--files]

The method, applied to every `.py` file under `agents/` and to `extractors/language.py` (the one
extractor that reads words), by the syntax tree, so it can be run on any commit:

1. A *vocabulary* is a module-level assignment (or a class-level one) whose value holds natural-
   language words as rules, that is at least three *word rules* among its string constants, or one
   regex of words (below). A string constant is a word rule when it is
   - a regex of words: it holds `\\b`, `(?:` or `|` and two different runs of three letters or
     more (`r"\\b(?:most|highest)\\b"`), or
   - a word-list entry: one to three words of letters (`"english"`, `"how many"`), or
   - a word list written as one string and split (`\"\"\"the a an ...\"\"\".split()`): each word
     counts.
   Docstrings and named groups' names are not counted. An assignment whose string constants are mostly not word rules (`PHRASES`: sentences the
   offline model writes; a JSON Schema, whose keywords, like the agents' names and the file
   formats, are the program's words, see `_PROGRAM`) is not a rule and is not counted. Its lines
   (`end_lineno - lineno + 1`) count.
   An assignment built from a vocabulary (`STOPWORDS = frozenset().union(*WORDS.values())`) is one
   too, also across modules.
2. A *reader* is a function or method whose body names a vocabulary of its own module (or one it
   imports by name), or holds a word regex itself; its lines count once, a nested one within its
   outer function's. A function that returns a vocabulary or a collection built from one (an
   *accessor*: `common_words()` returning `frozenset().union(*WORDS.values()) - _CONTENT`) counts
   as one for its callers, in its module and where it is imported by name.

Prints the lines per file and the total; `--files` also names every vocabulary and reader.
`--root DIR` counts another checkout.

Measured (issue 32): main at 3b3cceb 922 lines in 13 files; after `agents/language` (one stemmer
and stop-word source, the offline model's output words in `agents.phrases`) 854 in 14 files; after
the word detector's vocabulary, the abbreviation lists and the light stem (sentencex, py3langid among
the named languages, the `stopwords` package; branch langlib) 720 in 13 files.
Most of what is left is the offline planner's intents and references (`agents/language/intents`,
`references`), the answer kinds and superlatives, and the word detector (`extractors/language`).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_REGEX = re.compile(r"\\b|\(\?:|\|")
_GROUP = re.compile(r"\(\?P<\w+>")  # a named group's name is no word of the text
_LETTERS3 = re.compile(r"[^\W\d_]{3,}")
_ENTRY = re.compile(r"^[^\W\d_]+(?:['’ -][^\W\d_]+){0,2}$")
# The program's own words, not natural language: JSON Schema keywords, the built-in agents' names,
# the purposes of model calls and the file formats.
_PROGRAM = frozenset("""type object string array integer number boolean null properties items required enum
    description additionalProperties minItems maxItems minLength maxLength pattern const
    analyst data_extractor summarizer translator writer plan task final repair review
    docx md txt markdown text csv tsv xlsx xls xlsm ods odt pdf json html pptx""".split())


def files(root: Path) -> list[Path]:
    found = sorted(p for p in (root / "agents").rglob("*.py") if "__pycache__" not in p.parts)
    extra = root / "extractors" / "language.py"
    return found + ([extra] if extra.exists() else [])


def _strings(node: ast.AST) -> list[tuple[str, bool]]:
    """The string constants under node, each with whether it is split into words (`"..".split()`)."""
    out: list[tuple[str, bool]] = []
    split: set[int] = set()
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "split"
                and not sub.args and isinstance(sub.func.value, ast.Constant)):
            split.add(id(sub.func.value))
    docstrings = {id(sub.value) for sub in ast.walk(node) if isinstance(sub, ast.Expr)}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in docstrings:
            out.append((sub.value, id(sub) in split))
    return out


def _is_regex(text: str) -> bool:
    words = _LETTERS3.findall(_GROUP.sub(" ", text.replace("\\d", " ")))
    return bool(_REGEX.search(text)) and len(set(words)) >= 2


def _rules(node: ast.AST) -> tuple[int, int, bool]:
    """(word rules, other string constants, holds a word regex) under node."""
    rules = other = 0
    regex = False
    for text, split in _strings(node):
        if text in _PROGRAM:
            other += 1
        elif split:
            rules += sum(1 for w in text.split() if _LETTERS3.search(w))
        elif _is_regex(text):
            rules, regex = rules + 1, True
        elif _ENTRY.match(text.strip()) and _LETTERS3.search(text):
            rules += 1
        else:
            other += 1
    return rules, other, regex


def _is_vocabulary(value: ast.AST) -> bool:
    rules, other, regex = _rules(value)
    return (regex or rules >= 3) and rules >= other


def _collection(expr: ast.AST, known: set[str]) -> bool:
    """Whether the expression is a vocabulary or a collection built from one (not a decision read from
    one, like `_X.search(text)`)."""
    mentions = bool({n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} & known)
    if isinstance(expr, ast.Name):
        return expr.id in known
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitOr, ast.Sub, ast.BitAnd)):
        return mentions
    if isinstance(expr, ast.Call):
        builder = ((isinstance(expr.func, ast.Name) and expr.func.id in {"frozenset", "set", "list", "tuple", "dict"})
                   or (isinstance(expr.func, ast.Attribute) and expr.func.attr in {"union", "intersection", "difference"}))
        return builder and mentions
    return False


def _accessors(tree: ast.Module, known: set[str]) -> set[str]:
    """The module's functions that return a vocabulary or a collection built from one
    (`common_words()` returning `frozenset().union(*WORDS.values()) - _CONTENT`): a caller reads
    the vocabulary through them."""
    found: set[str] = set()
    while True:
        more = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name not in found
                and any(isinstance(r, ast.Return) and r.value is not None and _collection(r.value, known | found)
                        for r in ast.walk(node))}
        if not more:
            return found
        found |= more


@dataclass
class Counted:
    path: Path
    vocabularies: list[tuple[str, int]] = field(default_factory=list)
    readers: list[tuple[str, int]] = field(default_factory=list)

    @property
    def lines(self) -> int:
        return sum(n for _, n in self.vocabularies) + sum(n for _, n in self.readers)


def _span(node: ast.AST) -> int:
    end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    return int(end) - int(node.lineno) + 1  # type: ignore[attr-defined]


def _targets(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    return []


def _module_vocabularies(tree: ast.Module, imported: set[str] = frozenset()) -> dict[str, int]:  # type: ignore[assignment]
    found: dict[str, int] = {}
    bodies: list[list[ast.stmt]] = [tree.body] + [c.body for c in tree.body if isinstance(c, ast.ClassDef)]
    for body in bodies:
        for node in body:
            names = _targets(node)
            value = getattr(node, "value", None)
            derived = value is not None and {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & (
                set(found) | imported)
            if names and value is not None and (derived or _is_vocabulary(value)):
                for name in names:
                    found[name] = _span(node)
    return found


def count(path: Path, imported: dict[str, set[str]]) -> Counted:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    counted = Counted(path)
    own = _module_vocabularies(tree, imported.get(str(path), set()))
    counted.vocabularies = sorted(own.items())
    known = set(own) | imported.get(str(path), set())
    known |= _accessors(tree, known)

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                _, _, regex = _rules(node)
                if names & known or regex:
                    counted.readers.append((prefix + node.name, _span(node)))

    visit(tree.body, "")
    return counted


def _imports(root: Path, paths: list[Path], vocabularies: dict[str, set[str]]) -> dict[str, set[str]]:
    """Per file, the vocabularies it imports by name from another counted module."""
    by_module = {".".join(p.relative_to(root).with_suffix("").parts): str(p) for p in paths}
    out: dict[str, set[str]] = {}
    for p in paths:
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in by_module:
                theirs = vocabularies.get(by_module[node.module], set())
                out.setdefault(str(p), set()).update(
                    a.asname or a.name for a in node.names if a.name in theirs)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--files", action="store_true", help="name every vocabulary and reader counted")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to count (default: this one)")
    args = parser.parse_args(argv)
    paths = files(args.root)
    trees = {str(p): ast.parse(p.read_text(encoding="utf-8")) for p in paths}
    imported: dict[str, set[str]] = {}
    for _ in range(3):  # a vocabulary built from an imported one is one too ("STOPWORDS = ... WORDS ...")
        vocabularies = {}
        for name, tree in trees.items():
            own = set(_module_vocabularies(tree, imported.get(name, set())))
            vocabularies[name] = own | _accessors(tree, own | imported.get(name, set()))
        imported = _imports(args.root, paths, vocabularies)
    results = [count(p, imported) for p in paths]
    total = 0
    for r in results:
        if not r.lines:
            continue
        total += r.lines
        print(f"{r.lines:5d}  {r.path.relative_to(args.root)}")
        if args.files:
            for name, n in r.vocabularies:
                print(f"         {n:4d}  vocabulary {name}")
            for name, n in r.readers:
                print(f"         {n:4d}  reader     {name}")
    print(f"{total:5d}  total lines of hand-written language rules ({len(paths)} files scanned)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
