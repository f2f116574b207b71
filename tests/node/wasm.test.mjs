// node --test tests/node/
//
// Loads the qnmc WebAssembly module (built by
// `cargo build -p qnmc-wasm-example --target wasm32-unknown-unknown --release`)
// and checks every export against the host's numbers in expected.json, which
// `cargo test -p qnmc-tests --test reference_chains embedded::` verifies (and
// rewrites with QNMC_BLESS=1). The comparisons are exact: the same seed must give
// the same bits in WebAssembly as on x86-64.
//
// The .wasm is found through $QNMC_WASM, else under $CARGO_TARGET_DIR, else
// under the workspace's target/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const expected = JSON.parse(readFileSync(join(here, 'expected.json'), 'utf8'));

function wasmPath() {
  if (process.env.QNMC_WASM) return process.env.QNMC_WASM;
  const target = process.env.CARGO_TARGET_DIR || join(root, 'target');
  return join(target, 'wasm32-unknown-unknown', 'release', 'qnmc_wasm_example.wasm');
}

const path = wasmPath();
assert.ok(existsSync(path), `no wasm module at ${path}: build it first`);
const { instance } = await WebAssembly.instantiate(readFileSync(path), {});
const q = instance.exports;

function f64Bits(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  return view.getBigUint64(0).toString(16).padStart(16, '0');
}

const hex = (v) => BigInt.asUintN(64, v).toString(16).padStart(16, '0');

test('the module imports nothing and exports the samplers', () => {
  assert.equal(WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(path))).length, 0);
  for (const name of ['run_chain', 'run_chain_f32', 'bit_identity_f64_qnhmc',
    'bit_identity_f64_hamcmc', 'bit_identity_f32_qnhmc', 'bit_identity_f32_hamcmc',
    'bit_identity_f64_nuts_diag', 'bit_identity_f64_nuts_lbfgs',
    'bit_identity_f32_nuts_diag', 'bit_identity_f32_nuts_lbfgs', 'nuts_sizes_f64']) {
    assert.equal(typeof q[name], 'function', name);
  }
});

test('f64 bit-identity chains match the host bit for bit', () => {
  const seed = BigInt(expected.seed);
  assert.equal(hex(q.bit_identity_f64_qnhmc(seed, expected.steps)), expected.bit_identity_f64[0]);
  assert.equal(hex(q.bit_identity_f64_hamcmc(seed, expected.steps)), expected.bit_identity_f64[1]);
});

test('f32 bit-identity chains match the host bit for bit', () => {
  const seed = BigInt(expected.seed);
  assert.equal(hex(q.bit_identity_f32_qnhmc(seed, expected.steps)), expected.bit_identity_f32[0]);
  assert.equal(hex(q.bit_identity_f32_hamcmc(seed, expected.steps)), expected.bit_identity_f32[1]);
});

test('NUTS bit-identity chains (warm-up included) match the host bit for bit', () => {
  const seed = BigInt(expected.seed);
  assert.deepEqual(expected.samplers, ['qnhmc', 'hamcmc', 'nuts-diag', 'nuts-lbfgs']);
  assert.equal(hex(q.bit_identity_f64_nuts_diag(seed, expected.steps)), expected.bit_identity_f64[2]);
  assert.equal(hex(q.bit_identity_f64_nuts_lbfgs(seed, expected.steps)), expected.bit_identity_f64[3]);
  assert.equal(hex(q.bit_identity_f32_nuts_diag(seed, expected.steps)), expected.bit_identity_f32[2]);
  assert.equal(hex(q.bit_identity_f32_nuts_lbfgs(seed, expected.steps)), expected.bit_identity_f32[3]);
});

test('run_chain returns the host statistic exactly', () => {
  for (const c of expected.chain_mean) {
    const v = q.run_chain(BigInt(c.seed), c.steps);
    assert.equal(f64Bits(v), c.f64_bits, `seed ${c.seed}`);
    assert.equal(v, c.f64);
    const v32 = q.run_chain_f32(BigInt(c.seed), c.steps);
    assert.equal(f64Bits(v32), c.f32_bits, `f32 seed ${c.seed}`);
  }
});

test('negative control: another seed or length gives other numbers', () => {
  const seed = BigInt(expected.seed);
  assert.notEqual(hex(q.bit_identity_f64_qnhmc(seed + 1n, expected.steps)), expected.bit_identity_f64[0]);
  assert.notEqual(hex(q.bit_identity_f64_hamcmc(seed, expected.steps + 1)), expected.bit_identity_f64[1]);
  assert.notEqual(hex(q.bit_identity_f64_nuts_diag(seed + 1n, expected.steps)), expected.bit_identity_f64[2]);
  assert.notEqual(hex(q.bit_identity_f32_nuts_lbfgs(seed, expected.steps - 1)), expected.bit_identity_f32[3]);
  const c = expected.chain_mean[0];
  assert.notEqual(f64Bits(q.run_chain(BigInt(c.seed) + 1n, c.steps)), c.f64_bits);
});
