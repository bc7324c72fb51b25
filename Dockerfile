# The image the container and scale-out pages run (docs/how-to/container.md,
# docs/how-to/scale-out.md). Build it from the repository root:
#
#     docker build -t boi:latest .
#
# Its install step is the documented one, scripts/install.sh (what `make install` runs): the CPU
# build of torch (a CUDA image: start FROM one whose python already has torch; the script keeps
# it), DeepSpeed built against it, and boi editable with the pins in constraints.txt.
FROM python:3.11-slim

# A C++ compiler and ninja: DeepSpeed compiles its CPU communication op on a first sharded run
# (docs/how-to/finetune-at-scale.md); git: `boi --version` and every run's manifest name the commit.
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential ninja-build git \
    && rm -rf /var/lib/apt/lists/*

COPY . /opt/boi
WORKDIR /opt/boi
RUN scripts/install.sh /opt/boi/.venv

# The sandbox needs no privilege here: it reaches its `unprivileged` tier in Docker's default
# profile (docs/how-to/container.md). Runs are written under /work (mount a volume there).
ENV PATH=/opt/boi/.venv/bin:$PATH
WORKDIR /work
CMD ["boi", "--help"]
