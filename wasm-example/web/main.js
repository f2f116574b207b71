// The qnmc browser page: choose a model, run NUTS in the WebAssembly module
// (qnmc.wasm, next to this file) in chunks between frames, and plot the
// draws live. URL parameters preset the form and `run=1` starts at once
// (the headless test: test/check-browser.sh): model=js|banana|gaussian,
// dim, warmup, draws, seed, delta, chunk.

import { load, MODEL } from './qnmc.js';

// The default JS model, a normal–gamma distribution (the conjugate prior of a
// normal model's mean μ and precision τ): τ ~ Gamma(3, 1), μ | τ ~ N(1, 1/τ),
// sampled as θ = (μ, log τ). Exactly: E μ = 1, sd μ = √(1/(a − 1)) = 0.7071;
// E log τ = ψ(3) = 0.9228, sd log τ = √ψ′(3) = 0.6284 (a = 3; checked by
// test/check_page.py).
const DEFAULT_JS_MODEL = `// θ = (μ, φ = log τ): τ ~ Gamma(a = 3, 1) (so φ has density e^{aφ − e^φ}),
// μ | τ ~ N(1, 1/τ).
const a = 3, mu = theta[0], phi = theta[1];
const tau = Math.exp(phi), d = mu - 1;
grad[0] = -tau * d;
grad[1] = a + 0.5 - tau * (1 + 0.5 * d * d);
return (a + 0.5) * phi - tau * (1 + 0.5 * d * d);`;

const DEFAULT_DELTA = { js: 0.8, banana: 0.95, gaussian: 0.8 };
const DRAW_COLOUR = 'rgba(31, 119, 180, 0.45)'; // the test looks for this blue
const MEAN_COLOUR = '#d62728';                   // the running-mean cross (red)
// One chunk of draws per timer tick, about one per display frame (a timer,
// not requestAnimationFrame: headless Chromium's virtual time advances timers,
// and a hidden tab keeps sampling).
const FRAME_MS = 15;
const PLOT = { left: 48, top: 12, width: 420, height: 420 }; // inside the 480² canvas

const $ = (id) => document.getElementById(id);
const form = {
  model: $('model'), dim: $('dim'), code: $('code'), warmup: $('warmup'),
  draws: $('draws-n'), seed: $('seed'), delta: $('delta'), chunk: $('chunk'),
};
const scatter = $('scatter').getContext('2d');
const overlay = $('overlay').getContext('2d');
const trace = $('trace').getContext('2d');
let q = null;
let job = null;

function applyUrl() {
  const p = new URLSearchParams(location.search);
  form.code.value = DEFAULT_JS_MODEL;
  if (p.has('model')) form.model.value = p.get('model');
  if (form.model.value === 'js') form.dim.value = 2; // the default JS model's
  form.delta.value = DEFAULT_DELTA[form.model.value];
  for (const k of ['dim', 'warmup', 'seed', 'delta', 'chunk']) if (p.has(k)) form[k].value = p.get(k);
  if (p.has('draws')) form.draws.value = p.get('draws');
  syncForm();
  return p.get('run') === '1';
}

function syncForm() {
  const model = form.model.value;
  $('jsmodel').style.display = model === 'js' ? '' : 'none';
  if (model === 'banana') form.dim.value = 2;
  form.dim.disabled = model === 'banana';
}

form.model.addEventListener('change', () => {
  form.delta.value = DEFAULT_DELTA[form.model.value];
  syncForm();
});

// ---- drawing --------------------------------------------------------------

function clearPlots() {
  for (const c of [scatter, overlay, trace]) c.clearRect(0, 0, c.canvas.width, c.canvas.height);
  scatter.fillStyle = '#fff';
  scatter.fillRect(0, 0, 480, 480);
  scatter.strokeStyle = '#000';
  scatter.lineWidth = 1;
  scatter.strokeRect(PLOT.left - 0.5, PLOT.top - 0.5, PLOT.width + 1, PLOT.height + 1);
}

function niceTicks(lo, hi) {
  const span = hi - lo, raw = span / 5, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-12; t += step) ticks.push(+t.toFixed(10));
  return ticks;
}

function drawAxes(range, names) {
  scatter.fillStyle = '#000';
  scatter.font = '11px sans-serif';
  scatter.textAlign = 'center';
  for (const t of niceTicks(range.xmin, range.xmax)) {
    const x = toPx(range, t, range.ymin)[0];
    scatter.fillRect(Math.round(x), PLOT.top + PLOT.height, 1, 5);
    scatter.fillText(String(t), x, PLOT.top + PLOT.height + 17);
  }
  scatter.textAlign = 'right';
  for (const t of niceTicks(range.ymin, range.ymax)) {
    const y = toPx(range, range.xmin, t)[1];
    scatter.fillRect(PLOT.left - 5, Math.round(y), 5, 1);
    scatter.fillText(String(t), PLOT.left - 7, y + 4);
  }
  scatter.textAlign = 'center';
  scatter.fillText(names[0], PLOT.left + PLOT.width / 2, 476);
  scatter.save();
  scatter.translate(12, PLOT.top + PLOT.height / 2);
  scatter.rotate(-Math.PI / 2);
  scatter.fillText(names[1], 0, 0);
  scatter.restore();
}

function toPx(range, x, y) {
  return [PLOT.left + (x - range.xmin) / (range.xmax - range.xmin) * PLOT.width,
    PLOT.top + (range.ymax - y) / (range.ymax - range.ymin) * PLOT.height];
}

function plotPoints(range, xs, ys, from) {
  scatter.save();
  scatter.beginPath();
  scatter.rect(PLOT.left, PLOT.top, PLOT.width, PLOT.height);
  scatter.clip();
  scatter.fillStyle = DRAW_COLOUR;
  for (let i = from; i < xs.length; i++) {
    const [px, py] = toPx(range, xs[i], ys[i]);
    scatter.fillRect(Math.round(px) - 1, Math.round(py) - 1, 3, 3);
  }
  scatter.restore();
}

function drawMean(range, mx, my) {
  overlay.clearRect(0, 0, 480, 480);
  const [px, py] = toPx(range, mx, my);
  overlay.fillStyle = MEAN_COLOUR;
  overlay.fillRect(Math.round(px) - 8, Math.round(py) - 1, 17, 3);
  overlay.fillRect(Math.round(px) - 1, Math.round(py) - 8, 3, 17);
}

function drawTrace(history, total) {
  const w = trace.canvas.width, h = trace.canvas.height, pad = 30;
  trace.clearRect(0, 0, w, h);
  trace.strokeStyle = '#000';
  trace.strokeRect(pad + 0.5, 5.5, w - pad - 6, h - 26);
  trace.fillStyle = '#000';
  trace.font = '11px sans-serif';
  trace.fillText('running means (x, y) against draws', pad + 6, 18);
  if (history.length < 2) return;
  for (const [k, colour] of [[1, '#1f77b4'], [2, '#ff7f0e']]) {
    const values = history.map((r) => r[k]);
    const lo = Math.min(...values), hi = Math.max(...values), span = hi - lo || 1;
    trace.strokeStyle = colour;
    trace.beginPath();
    history.forEach((r, i) => {
      const x = pad + (r[0] / total) * (w - pad - 6);
      const y = 5 + (h - 26) * (1 - (r[k] - lo) / span) * 0.9 + 0.05 * (h - 26);
      if (i === 0) trace.moveTo(x, y); else trace.lineTo(x, y);
    });
    trace.stroke();
    trace.fillStyle = colour;
    trace.fillText(`${k === 1 ? 'x' : 'y'}: ${values.at(-1).toFixed(3)}`, pad + 6 + (k - 1) * 90, h - 6);
  }
}

// ---- statistics -------------------------------------------------------------

// Batch-means Monte-Carlo standard error (⌊√N⌋ batches).
function mcse(values) {
  const n = values.length, b = Math.max(2, Math.floor(Math.sqrt(n))), len = Math.floor(n / b);
  if (len < 1) return NaN;
  const means = [];
  for (let j = 0; j < b; j++) {
    let s = 0;
    for (let i = j * len; i < (j + 1) * len; i++) s += values[i];
    means.push(s / len);
  }
  const m = means.reduce((a, c) => a + c) / b;
  return Math.sqrt(means.reduce((a, c) => a + (c - m) ** 2, 0) / (b - 1) / b);
}

// ---- the run ---------------------------------------------------------------

function compileJsModel() {
  const body = form.code.value;
  // eslint-disable-next-line no-new-func
  return new Function('theta', 'grad', body);
}

function start() {
  if (job) job.stopped = true;
  const modelName = form.model.value;
  const model = MODEL[modelName];
  const dim = modelName === 'banana' ? 2 : Math.max(1, Math.min(q.maxDimension, +form.dim.value | 0));
  const settings = {
    model, dim, seed: +form.seed.value, warmup: Math.max(0, +form.warmup.value | 0),
    delta: +form.delta.value,
  };
  const draws = Math.max(1, +form.draws.value | 0);
  const chunk = Math.max(1, +form.chunk.value | 0);
  if (modelName === 'js') q.setJsModel(compileJsModel());
  q.init(settings);
  clearPlots();
  $('result').textContent = '';
  $('draws').textContent = '';
  job = {
    modelName, settings, draws, chunk, stopped: false, started: performance.now(),
    sum: new Float64Array(dim), sumSq: new Float64Array(dim), kept: 0, divergent: 0,
    leapfrog: 0, warm: [[], []], xs: [], ys: [], all: Array.from({ length: dim }, () => []),
    plotted: 0, range: null, history: [], warmIndex: 0,
  };
  $('run').disabled = true;
  $('stop').disabled = false;
  setTimeout(() => tick(job), FRAME_MS);
}

// The plot's range: the draws' extent (the warm-up's second half, or the
// first kept draws), widened by 30 % on each side.
function rangeFrom(xs, ys) {
  const extent = (v) => {
    const lo = Math.min(...v), hi = Math.max(...v), pad = 0.3 * (hi - lo || 1);
    return [lo - pad, hi + pad];
  };
  const [xmin, xmax] = extent(xs), [ymin, ymax] = extent(ys);
  return { xmin, xmax, ymin, ymax };
}

function tick(j) {
  if (j.stopped) return;
  const { dim, warmup } = j.settings;
  const second = dim > 1 ? 1 : 0;
  try {
    for (let n = 0; n < j.chunk && j.kept < j.draws; n++) {
      const s = q.step();
      const p = q.position();
      if (s.warmup) {
        // the warm-up's second half sets the plot's range
        j.warmIndex++;
        if (j.warmIndex > warmup / 2) { j.warm[0].push(p[0]); j.warm[1].push(p[second]); }
        continue;
      }
      j.kept++;
      j.divergent += s.divergent;
      j.leapfrog += s.leapfrogSteps;
      for (let i = 0; i < dim; i++) {
        j.sum[i] += p[i];
        j.sumSq[i] += p[i] * p[i];
        j.all[i].push(p[i]);
      }
      j.xs.push(p[0]);
      j.ys.push(p[second]);
    }
  } catch (error) {
    finish(j, String(error));
    return;
  }
  if (!j.range) {
    if (j.warm[0].length >= 50) j.range = rangeFrom(j.warm[0], j.warm[1]);
    else if (j.xs.length >= Math.min(200, j.draws)) j.range = rangeFrom(j.xs, j.ys);
    if (j.range) drawAxes(j.range, dim > 1 ? ['θ₁', 'θ₂'] : ['θ₁', 'θ₁']);
  }
  const warming = q.isWarmingUp();
  if (j.range && j.kept > 0) {
    plotPoints(j.range, j.xs, j.ys, j.plotted);
    j.plotted = j.xs.length;
    const mx = j.sum[0] / j.kept, my = j.sum[second] / j.kept;
    drawMean(j.range, mx, my);
    j.history.push([j.kept, mx, my]);
    drawTrace(j.history, j.draws);
  }
  $('status').textContent = warming
    ? `warm-up… step size ${q.stats().stepSize.toFixed(3)}`
    : `sampling: ${j.kept} of ${j.draws} draws`;
  updateTable(j);
  if (j.kept >= j.draws) finish(j, null);
  else setTimeout(() => tick(j), FRAME_MS);
}

function updateTable(j) {
  const { dim, model } = j.settings;
  const exact = q.modelMoments(model, dim);
  const rows = ['<tr><th>θ</th><th>mean</th><th>sd</th><th>MCSE</th><th>exact mean</th><th>exact sd</th></tr>'];
  for (let i = 0; i < Math.min(dim, 8); i++) {
    const m = j.sum[i] / j.kept, sd = Math.sqrt(Math.max(0, j.sumSq[i] / j.kept - m * m));
    const f = (v) => (Number.isFinite(v) ? v.toFixed(3) : '–');
    rows.push(`<tr><td>${i + 1}</td><td>${f(m)}</td><td>${f(sd)}</td><td>${f(j.kept >= 4 ? mcse(j.all[i]) : NaN)}</td>` +
      `<td>${f(exact.mean[i])}</td><td>${f(exact.sd[i])}</td></tr>`);
  }
  $('table').innerHTML = rows.join('');
}

function finish(j, error) {
  const { dim, model } = j.settings;
  const seconds = (performance.now() - j.started) / 1000;
  const means = [], sds = [], mcses = [];
  for (let i = 0; i < dim; i++) {
    const m = j.sum[i] / j.kept;
    means.push(m);
    sds.push(Math.sqrt(Math.max(0, j.sumSq[i] / j.kept - m * m)));
    mcses.push(mcse(j.all[i]));
  }
  const result = {
    status: error ? 'error' : 'done', error, model: j.modelName, dim, seed: j.settings.seed,
    warmup: j.settings.warmup, delta: j.settings.delta, kept: j.kept, divergent: j.divergent,
    leapfrog_per_draw: j.leapfrog / Math.max(1, j.kept), step_size: q.stats().stepSize,
    means, sds, mcse: mcses, exact: q.modelMoments(model, dim), seconds,
    plot: { ...PLOT, canvas: $('scatter').getBoundingClientRect().toJSON(), ...j.range,
      x: 0, y: dim > 1 ? 1 : 0 },
  };
  $('result').textContent = JSON.stringify(result);
  // The plotted coordinates of every kept draw, for the test's own MCSE.
  $('draws').textContent = j.xs.map((x, i) => `${x.toPrecision(7)} ${j.ys[i].toPrecision(7)}`).join('\n');
  $('status').textContent = error
    ? `error: ${error}`
    : `done: ${j.kept} draws in ${seconds.toFixed(2)} s, ${j.divergent} divergent, ` +
      `${result.leapfrog_per_draw.toFixed(1)} leapfrog steps per draw`;
  document.title = `qnmc: ${result.status}`;
  $('run').disabled = false;
  $('stop').disabled = true;
  j.stopped = true;
}

$('run').addEventListener('click', () => {
  try { start(); } catch (error) { $('status').textContent = `error: ${error}`; }
});
$('stop').addEventListener('click', () => { if (job) finish(job, 'stopped'); });

(async () => {
  const autorun = applyUrl();
  try {
    q = await load('qnmc.wasm');
  } catch (error) {
    $('status').textContent = `could not load qnmc.wasm (${error}); build it with web/build.sh and serve this folder over HTTP`;
    return;
  }
  $('info').textContent = `module: one chain in ${q.stateSize} B of static memory, ` +
    `dimension ≤ ${q.maxDimension}, L-BFGS memory ${q.lbfgsMemory}, tree depth ≤ ${q.maxTreeDepth}` +
    (q.hasJsModel ? '' : ' (no JS model in this build)');
  $('status').textContent = 'ready';
  clearPlots();
  if (autorun) {
    try { start(); } catch (error) {
      $('status').textContent = `error: ${error}`;
      $('result').textContent = JSON.stringify({ status: 'error', error: String(error) });
    }
  }
})();
