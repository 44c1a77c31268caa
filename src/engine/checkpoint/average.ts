/** Checkpoint averaging (§6.1: "averaging the last 5 checkpoints" for base models, 20 for big). */
import { checkFinite } from './index';
import { readSafetensors, type NamedTensor } from './safetensors';

/** Element-wise mean of checkpoints with the same tensor names and shapes, each finite (a NaN would spread). */
export function averageCheckpoints(paths: string[]): Map<string, NamedTensor> {
  const read = (path: string) => {
    const { tensors } = readSafetensors(path);
    checkFinite(tensors, path);
    return tensors;
  };
  const first = read(paths[0]!);
  const sum = new Map([...first].map(([name, t]) => [name, { shape: t.shape, data: Float64Array.from(t.data) }]));
  for (const path of paths.slice(1)) {
    const tensors = read(path);
    for (const [name, acc] of sum) {
      const t = tensors.get(name);
      if (!t || t.shape.join(',') !== acc.shape.join(','))
        throw new Error(
          `${path}: tensor "${name}" ${t ? `has shape [${t.shape}], ${paths[0]} has [${acc.shape}]` : 'is missing'}`,
        );
      for (let i = 0; i < t.data.length; i++) acc.data[i] += t.data[i];
    }
  }
  return new Map(
    [...sum].map(([name, acc]) => [
      name,
      { shape: acc.shape, data: Float32Array.from(acc.data, (x) => x / paths.length) },
    ]),
  );
}
