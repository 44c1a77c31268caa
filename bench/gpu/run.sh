#!/usr/bin/env bash
# The GPU bench of issue 15, on a machine with an NVIDIA GPU and Python with PyTorch (CUDA) but no
# Node and no network, from the repository's root, with .gpu-kit/ (bench/gpu/pack.mjs) beside it:
#   bash bench/gpu/run.sh [all|tests|matmul|gemm|train-before|train|train-variants|profile|attention|memory] [--rehearse]
# - tests:  the engine's tests on webgpu against the PyTorch fixtures (bench/gpu/tests.mjs), log kept;
# - matmul: bench/matmul.mjs, webgpu against PyTorch CUDA, fp32 and TF32, up to 4096²;
# - gemm:   bench/gpu/gemm.mjs, our own GEMM (issue 30 item 2) under several tiles against tfjs's
#   matMul at 4096² and base-25k's step shapes, in one process (gemm.log): the tile sweep;
# - train:  bench/train-throughput.mjs, webgpu against PyTorch CUDA on issue, base and base at ~25k
#   tokens a batch; train-before: the same with the engine before its webgpu kernels; train-variants
#   (not in `all`: two more training benches) the same with the per-parameter Adam
#   (ATTENTION_DEBUGGER_ADAM=per-parameter, against the flat default) and with our own GEMM
#   (ATTENTION_DEBUGGER_GEMM=own, against tfjs's), to choose those defaults on a GPU;
# - profile: bench/gpu/profile.mjs, one step of each config under tf.profile: kernel time by name and
#   shape, the step's wall time against its kernel time, the GPU buffers' peak (profile.log);
# - attention: bench/gpu/attention.mjs, the attention kernels alone at base-25k's shapes, the row
#   kernels against the tiled ones (issue 30 item 1) in one process (attention.log);
# - memory (not in `all`): issue 28 on the GPU, nvidia-smi's memory.used sampled beside each part
#   (memory-*-smi.csv): bench/gpu-memory.mjs on base and big at 400 × 64 (the allocation wrapper's
#   peak against the estimate); `train --config big` refused up front against --gpu-memory 16 GiB; then
#   big at its default batch with --accumulate 2 for 20 steps (memory-*.log).
# --rehearse runs the same on a machine without a GPU (Mesa lavapipe, PyTorch on the CPU) with small
# sizes, to check the kit and the scripts; its figures are labelled a rehearsal. Logs and results go to
# $OUT when set (the device tool's folder), else bench/results/gpu/ (bench/results/gpu-rehearsal/).
set -euo pipefail
what=${1:-all}
rehearse=${2:-}
out=${OUT:-bench/results/gpu${rehearse:+-rehearsal}}
mkdir -p "$out"

# 1. Node, Dawn, the bundles: unpacked over the tree (Python's tarfile: the image may lack xz).
python3 -c 'import tarfile; tarfile.open(".gpu-kit/kit.tar.xz").extractall(".")'
export PATH="$PWD/.gpu-kit/bin:$PATH"
export BENCH_PYTHON=${BENCH_PYTHON:-$(command -v python3)}

# 2. Vulkan: the loader if the image lacks it, and NVIDIA's driver manifest where the device README says.
if ! ldconfig -p | grep -q 'libvulkan\.so\.1'; then
  for f in .gpu-kit/debs/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
# OpenBLAS for the native addon (the tests compare webgpu with wasm's native kernels), unpacked apart.
for f in .gpu-kit/debs/libopenblas0-pthread_*.deb .gpu-kit/debs/libgfortran5_*.deb; do dpkg -x "$f" .gpu-kit/root; done
lib="$PWD/.gpu-kit/root/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$lib/openblas-pthread:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; fi

{
  echo "# $(date -u +%FT%TZ) bench/gpu/run.sh $what $rehearse at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "node $(node --version) at $(command -v node)"
  echo "before (train-before): the engine at $(cat out/bench/engine-before.commit)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  node bench/gpu/adapter.mjs
} 2>&1 | tee "$out/adapter.txt"

if [ -n "$rehearse" ]; then
  device=cpu sizes=256,512 configs=tiny
  matmul_flags=(--rehearse --rounds 2 --reps 2 --warmup 1)
  train_flags=(--rehearse --rounds 2 --steps 2 --warmup 1 --probe 1 --batch 8 --len 16)
  profile_flags=(--configs tiny --batch 8 --len 16)
  attention_flags=(--batch 4 --len 16 --dmodel 64 --heads 2 --reps 2)
  gemm_flags=(--rehearse)
  memory_cases=tiny memory_config=tiny memory_steps=3 memory_budget=0.001
else
  # 3 rounds of 3 steps a config: the whole of `train` must end inside one 10-minute device call.
  device=cuda sizes=1024,2048,4096 configs=issue,base,base-25k matmul_flags=() train_flags=(--rounds 3 --steps 3)
  profile_flags=(--configs "$configs")
  attention_flags=()
  gemm_flags=()
  memory_cases=base-400x64,big-400x64 memory_config=big memory_steps=20 memory_budget=16
fi

status=0
if [ "$what" = all ] || [ "$what" = tests ]; then
  # Each test file runs webgpu (and wasm, cpu); webgpu must load, never skip.
  mapfile -t tests < <(node -e 'import("./bench/gpu/tests.mjs").then((m) => m.GPU_TESTS.forEach((t) => console.log("out/test/" + t.replace(/\.ts$/, ".js"))))')
  ATTENTION_DEBUGGER_REQUIRE_WEBGPU=1 node --test --test-reporter=spec "${tests[@]}" 2>&1 | tee "$out/tests-webgpu.log" || status=1
fi
if [ "$what" = all ] || [ "$what" = matmul ]; then
  node bench/matmul.mjs --backend webgpu --device "$device" --sizes "$sizes" "${matmul_flags[@]}" 2>&1 |
    tee "$out/matmul.log" || status=1
fi
if [ "$what" = all ] || [ "$what" = gemm ]; then
  node bench/gpu/gemm.mjs "${gemm_flags[@]}" 2>&1 | tee "$out/gemm.log" || status=1
fi
if [ "$what" = all ] || [ "$what" = train-before ]; then
  if [ ! -f out/bench/engine-before.js ]; then
    echo "train-before: skipped, the kit has no before engine: $(cat out/bench/engine-before.commit)" | tee "$out/train-before.log"
  else
    # The engine before its webgpu kernels (pack.mjs --before), the same bench: issue 15's "before".
    BENCH_ENGINE_BUNDLE=out/bench/engine-before.js node bench/train-throughput.mjs --backend webgpu --device "$device" \
      --configs "$configs" --name "train-throughput-gpu-before${rehearse:+-rehearsal}" "${train_flags[@]}" 2>&1 | tee "$out/train-before.log" || status=1
  fi
fi
if [ "$what" = all ] || [ "$what" = train ]; then
  node bench/train-throughput.mjs --backend webgpu --device "$device" --configs "$configs" "${train_flags[@]}" 2>&1 |
    tee "$out/train-throughput.log" || status=1
fi
if [ "$what" = train-variants ]; then
  for variant in ADAM=per-parameter GEMM=own; do
    name="train-throughput-gpu-$(echo "$variant" | tr 'A-Z=' 'a-z-')${rehearse:+-rehearsal}"
    env "ATTENTION_DEBUGGER_$variant" node bench/train-throughput.mjs --backend webgpu --device "$device" \
      --configs "$configs" --name "$name" "${train_flags[@]}" 2>&1 | tee "$out/$name.log" || status=1
  done
fi
if [ "$what" = all ] || [ "$what" = attention ]; then
  node bench/gpu/attention.mjs "${attention_flags[@]}" 2>&1 | tee "$out/attention.log" || status=1
fi
if [ "$what" = all ] || [ "$what" = profile ]; then
  node bench/gpu/profile.mjs "${profile_flags[@]}" 2>&1 | tee "$out/profile.log" || status=1
fi
if [ "$what" = memory ]; then
  runs=$(mktemp -d)
  # Runs "$@" with its output in memory-$name.log and nvidia-smi's samples in memory-$name-smi.csv.
  sampled() {
    local name=$1 smi=
    shift
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader,nounits -lms 200 >"$out/memory-$name-smi.csv" &
      smi=$!
    fi
    { rc=0; "$@" || rc=$?; echo "exit code $rc"; } 2>&1 | tee "$out/memory-$name.log" # set -e: no exit
    if [ -n "$smi" ]; then
      kill "$smi"
      echo "nvidia-smi: memory.used at most $(cut -d, -f2 "$out/memory-$name-smi.csv" | sort -n | tail -1) MiB" |
        tee -a "$out/memory-$name.log"
    fi
  }
  train() { node dist/cli.js train --backend webgpu --task copy --config "$memory_config" "$@"; }
  sampled peaks node bench/gpu-memory.mjs --cases "$memory_cases" --no-pool
  sampled refused train --out "$runs/refused" --gpu-memory "$memory_budget"
  sampled accumulate train --out "$runs/accumulate" --steps "$memory_steps" --accumulate 2
  # the refusal is train's exit code 1 (a usage error would be 2); the accumulated run ends with 0
  grep -q '^exit code 1' "$out/memory-refused.log" || status=1
  grep -q '^exit code 0' "$out/memory-accumulate.log" || status=1
fi
cp bench/results/*-gpu*.json bench/results/gpu-profile.json "$out/" 2>/dev/null || true
exit $status
