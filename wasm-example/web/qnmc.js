// qnmc.js: a hand-written loader for the qnmc WebAssembly module's browser
// API (wasm-example/src/web.rs, built with `--features web`). No
// wasm-bindgen, no npm packages: an ES module for the browser and node.
//
//   import { load, MODEL } from './qnmc.js';
//   const q = await load('qnmc.wasm');           // a URL, or the bytes
//   q.setJsModel((theta, grad) => { ...; return logp; });
//   q.init({ model: MODEL.js, dim: 2, seed: 1, warmup: 1000, initial: [0, 0] });
//   for (...) { const s = q.step(); const x = q.position(); }
//
// One chain at a time lives in a static buffer inside the module. The JS
// model gets two Float64Array views of the module's memory: `theta` (read)
// and `grad` (zeroed; write ∇ log p there), and returns log p(θ) up to a
// constant. An exception thrown by the model ends the trajectory as a
// divergence (the model returns NaN to the sampler) and is rethrown by
// `step`.

export const MODEL = Object.freeze({ js: 0, banana: 1, gaussian: 2 });

export const STATUS = Object.freeze({
  0: 'ok', 1: 'invalid setting', 2: 'non-finite log density or gradient at the initial point',
  3: 'non-finite gradient', 4: 'non-finite proposal', 8: 'invalid dimension for this model',
  9: 'unknown model', 10: 'no chain: call init first', 11: 'other error',
  12: 'this module has no JS model (built without --features web)',
  13: 'busy: the JS model must not call back into the sampler',
});

export class QnmcError extends Error {
  constructor(status, what) {
    super(`${what}: ${STATUS[status] ?? 'status ' + status} (${status})`);
    this.status = status;
  }
}

// Byte offsets of `WebStats` (src/web.rs), checked against web_stats_size().
const STATS_SIZE = 72;

export class Qnmc {
  constructor(instance, hooks) {
    this.exports = instance.exports;
    this.memory = instance.exports.memory;
    this.hooks = hooks;
    if (this.exports.web_stats_size() !== STATS_SIZE) {
      throw new Error('qnmc.js does not match the module (WebStats size)');
    }
    this.maxDimension = this.exports.web_max_dimension();
    this.stateSize = this.exports.web_state_size();
    this.lbfgsMemory = this.exports.web_lbfgs_memory();
    this.maxTreeDepth = this.exports.web_max_tree_depth();
    this.hasJsModel = this.exports.web_has_js_model() === 1;
    this.dim = 0;
  }

  // The JS model: (theta: Float64Array, grad: Float64Array) => log p.
  setJsModel(fn) { this.hooks.model = fn; }

  f64(pointer, length) { return new Float64Array(this.memory.buffer, pointer, length); }

  init({ model, dim, seed = 1, warmup = 1000, delta = 0.8, initial = null }) {
    if (!(dim >= 1 && dim <= this.maxDimension)) throw new QnmcError(8, 'init');
    const io = this.f64(this.exports.web_io_ptr(), this.maxDimension);
    io.fill(0);
    if (initial) io.set(initial.slice(0, dim));
    const status = this.exports.web_init(model, dim, BigInt(seed), warmup, delta);
    this.rethrow();
    if (status !== 0) throw new QnmcError(status, 'init');
    this.dim = dim;
  }

  // One draw; returns its statistics (the position: `position()`).
  step() {
    const status = this.exports.web_step();
    this.rethrow();
    if (status !== 0) throw new QnmcError(status, 'step');
    return this.stats();
  }

  // A copy of the current position (after `step`: the draw).
  position() { return this.f64(this.exports.web_io_ptr(), this.dim).slice(); }

  isWarmingUp() { return this.exports.web_is_warming_up() === 1; }

  stats() {
    const v = new DataView(this.memory.buffer, this.exports.web_stats_ptr(), STATS_SIZE);
    return {
      stepSize: v.getFloat64(0, true), acceptance: v.getFloat64(8, true),
      energy: v.getFloat64(16, true), energyError: v.getFloat64(24, true),
      logDensity: v.getFloat64(32, true), treeDepth: v.getUint32(40, true),
      leapfrogSteps: v.getUint32(44, true), gradientEvaluations: v.getUint32(48, true),
      divergent: v.getUint32(52, true) === 1, reachedMaxDepth: v.getUint32(56, true) === 1,
      moved: v.getUint32(60, true) === 1, warmup: v.getUint32(64, true) === 1,
      kept: v.getUint32(68, true),
    };
  }

  // Exact means and sds of a Rust model (NaN for the JS model).
  modelMoments(model, dim) {
    const mean = [], sd = [];
    for (let i = 0; i < dim; i++) {
      mean.push(this.exports.web_model_mean(model, dim, i));
      sd.push(this.exports.web_model_sd(model, dim, i));
    }
    return { mean, sd };
  }

  rethrow() {
    const error = this.hooks.error;
    if (error) { this.hooks.error = null; throw error; }
  }
}

// Instantiates the module from a URL (fetch) or from its bytes.
export async function load(source) {
  const bytes = typeof source === 'string'
    ? await (await fetch(source)).arrayBuffer() : source;
  const hooks = { model: null, error: null, memory: null };
  const env = {
    // The module's import: byte offsets of θ and ∇ (dim f64 each).
    log_density(thetaPtr, gradPtr, dim) {
      try {
        if (!hooks.model) throw new Error('no JS model: call setJsModel first');
        const buffer = hooks.memory.buffer;
        const logp = hooks.model(new Float64Array(buffer, thetaPtr, dim),
          new Float64Array(buffer, gradPtr, dim));
        return +logp;
      } catch (error) {
        if (!hooks.error) hooks.error = error;
        return NaN;
      }
    },
  };
  const { instance } = await WebAssembly.instantiate(bytes, { env });
  hooks.memory = instance.exports.memory;
  return new Qnmc(instance, hooks);
}
