// Times ONNX Runtime (the npm package onnxruntime-node, CPU) on one model, for bench/bench.py.
// usage: node ort_run.js MODEL.onnx INPUTS.json THREADS RUNS WARMUP OUT.bin
// INPUTS.json: [{"name", "dtype" ("float32" | "int64" | ...), "shape", "file"}], each file the
// tensor's raw little-endian bytes. Writes the first output's raw bytes to OUT.bin and prints
// one JSON line: {"median_ms", "min_ms", "runs", "version"}.
'use strict';
const fs = require('fs');
const path = require('path');

const ortDir = process.env.ODLAC_ORT_DIR || path.join(require('os').homedir(), '.cache', 'odlac', 'ort');
const ort = require(path.join(ortDir, 'node_modules', 'onnxruntime-node'));

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};

async function main() {
  const [model, inputsJson, threads, runs, warmup, outPath] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const feeds = {};
  for (const t of JSON.parse(fs.readFileSync(inputsJson, 'utf8'))) {
    const bytes = fs.readFileSync(t.file);
    const Arr = ARRAYS[t.dtype];
    if (!Arr) throw new Error(`input ${t.name}: dtype ${t.dtype} not handled`);
    const data = new Arr(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    feeds[t.name] = new ort.Tensor(t.dtype, data, t.shape);
  }
  let result;
  for (let i = 0; i < Number(warmup); ++i) result = await session.run(feeds);
  const ms = [];
  for (let i = 0; i < Number(runs); ++i) {
    const t0 = process.hrtime.bigint();
    result = await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const n = ms.length;
  const median = n % 2 ? ms[(n - 1) / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  const first = result[session.outputNames[0]];
  fs.writeFileSync(outPath, Buffer.from(first.data.buffer, first.data.byteOffset, first.data.byteLength));
  const pkg = JSON.parse(fs.readFileSync(path.join(ortDir, 'node_modules', 'onnxruntime-node', 'package.json'), 'utf8'));
  console.log(JSON.stringify({ median_ms: median, min_ms: ms[0], runs: n, version: pkg.version }));
}

main().catch((e) => {
  console.error(`ort_run.js: ${e.message}`);
  process.exit(1);
});
