// The esbuild options every Node bundle of the engine uses (dist/, tests, benchmarks). tfjs is
// bundled from its ESM entry (`module`): its CommonJS node bundle registers no gradients, and its
// ESM files use extensionless imports that Node cannot load. One bundled copy per process also
// means one tfjs engine. Only packages that must load at run time from disk stay external:
// `webgpu` (dawn.node), tfjs-node (optional, the user's), vscode.
export const external = [
  'webgpu',
  '@tensorflow/tfjs-backend-wasm/package.json',
  '@tensorflow/tfjs-node',
  '@tensorflow/tfjs-node-gpu',
  'vscode',
];

export const nodeBundle = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  mainFields: ['module', 'main'],
  external,
  logLevel: 'warning',
};
