#!/usr/bin/env bash
# System packages the tests need, from Debian's archive (idempotent; runs as root on CI).
#  - python3-torch, python3-venv, python3-wheel: the Python tests of python/ (the RunWriter for PyTorch
#    trainers: torchrun runs, an offline pip install); the same PyTorch regenerates golden fixtures and
#    is the benchmarks' peer
#  - python3-matplotlib (WANT_TORCH=1): the drawing benchmark's peer
#  - mesa-vulkan-drivers 25.x from bookworm-backports: lavapipe, so the webgpu backend runs without a GPU
#    (bookworm's own Mesa 22.3 lacks what Dawn needs: its lavapipe has no shaderUniform*ArrayDynamicIndexing)
#  - libopenblas0-pthread: the BLAS the engine's matMul calls on wasm (native/blas.c), and PyTorch's
#  - libc-l10n: glibc's translation catalogs; its German one (/usr/share/locale/de/LC_MESSAGES/libc.mo,
#    about 1,100 English-German pairs) lets test/data/gettext.test.ts read real catalogs. Slim images
#    drop /usr/share/locale through a dpkg path-exclude: a fragment read after theirs re-includes de/
#  - libblas3, liblapack3: downloaded only (see below), for the benchmarks' unfair-BLAS test
set -euo pipefail
want_torch=${WANT_TORCH:-0}
[ "$(id -u)" = 0 ] || { echo "setup-system: not root, skipping apt steps" >&2; exit 0; }
command -v apt-get >/dev/null || { echo "setup-system: no apt-get, skipping" >&2; exit 0; }

src=/etc/apt/sources.list.d/debian.sources
bp=/etc/apt/sources.list.d/bookworm-backports.sources
if [ ! -f "$bp" ] && [ -f "$src" ]; then
  # Copy the machine's own bookworm entry with the suite renamed (keeps its mirror and keyring).
  awk 'BEGIN{RS="";ORS="\n\n"} /Suites:[^\n]*bookworm( |$|\n)/ && !/security/' "$src" \
    | sed -E 's/^Suites:.*/Suites: bookworm-backports/' > "$bp"
fi

# German catalogs past a slim image's path-exclude (dpkg reads /etc/dpkg/dpkg.cfg.d/ in name order).
de_mo=/usr/share/locale/de/LC_MESSAGES/libc.mo
keep_de=/etc/dpkg/dpkg.cfg.d/zz-attention-debugger-locale-de
if [ ! -f "$keep_de" ] && grep -qs 'path-exclude.*/usr/share/locale' /etc/dpkg/dpkg.cfg.d/*; then
  echo 'path-include=/usr/share/locale/de/*' > "$keep_de"
fi

need=()
dpkg -s mesa-vulkan-drivers 2>/dev/null | grep -q '^Version: 25' || need+=(mesa-vulkan-drivers)
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || need+=(libopenblas0-pthread)
[ -f "$de_mo" ] || need+=(libc-l10n) # installed but stripped by a path-exclude: reinstalled below
for p in python3-torch python3-venv python3-wheel; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ "$want_torch" = 1 ]; then
  dpkg -s python3-matplotlib >/dev/null 2>&1 || need+=(python3-matplotlib)
fi
export DEBIAN_FRONTEND=noninteractive
# Debian's reference BLAS, downloaded into apt's cache but never installed (OpenBLAS stays the
# system's BLAS): test/bench/unfair-blas.test.ts unpacks it and points the PyTorch peer at it, to
# check that the benchmarks refuse a comparison against an unoptimised BLAS.
cache=/var/cache/apt/archives
if ! ls "$cache"/libblas3_*.deb "$cache"/liblapack3_*.deb >/dev/null 2>&1; then
  { apt-get update -qq && apt-get install -y -qq --download-only --no-install-recommends libblas3 liblapack3 >/dev/null; } ||
    echo "setup-system: could not download libblas3 and liblapack3 (the unfair-BLAS test needs them)" >&2
fi
[ ${#need[@]} -eq 0 ] && exit 0
apt-get update -qq
for p in "${need[@]}"; do
  if [ "$p" = mesa-vulkan-drivers ]; then
    apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers >/dev/null
  elif [ "$p" = libc-l10n ]; then
    apt-get install -y -qq --no-install-recommends --reinstall libc-l10n >/dev/null
  else
    apt-get install -y -qq --no-install-recommends "$p" >/dev/null
  fi
done
[ -f "$de_mo" ] || { echo "setup-system: libc-l10n installed no $de_mo (a dpkg path-exclude?)" >&2; exit 1; }
