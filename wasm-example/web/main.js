// The qnmc browser page: choose a model, run NUTS in the WebAssembly module
// (qnmc.wasm, next to this file) in chunks between frames, and plot the
// draws live: a scatter of θ₁ and θ₂ (a canvas for the points under an SVG
// with the frame, axes and the running-mean cross) and the running means
// against the draws (SVG). The page runs its model (the JS one unless the
// URL says otherwise) as soon as the module has loaded; URL parameters
// preset the form (the headless test: test/check-browser.sh):
// model=js|banana|gaussian, dim, warmup, draws, seed, delta, chunk, and
// run=0 to wait for the Run button.

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
const LINE_COLOURS = ['#1f77b4', '#ff7f0e'];     // running means of θ₁, θ₂
// One chunk of draws per timer tick, about one per display frame (a timer,
// not requestAnimationFrame: headless Chromium's virtual time advances timers,
// and a hidden tab keeps sampling).
const FRAME_MS = 15;
// The plot areas inside their 480-pixel-wide figures; the margins hold the
// tick labels and the axis names.
const SCATTER = { width: 480, height: 480 };
const PLOT = { left: 58, top: 16, width: 406, height: 410 };
const MEANS = { width: 480, height: 210 };
const MEANS_PLOT = { left: 58, top: 26, width: 406, height: 134 };
// The scatter's range: the kept draws' extent widened by PAD_LIVE of its
// span on each side while the run goes on (widened again, and the points
// redrawn, when a draw falls outside), and by PAD_FINAL once it is done.
const PAD_LIVE = 0.15;
const PAD_FINAL = 0.05;

const $ = (id) => document.getElementById(id);
const form = {
  model: $('model'), dim: $('dim'), code: $('code'), warmup: $('warmup'),
  draws: $('draws-n'), seed: $('seed'), delta: $('delta'), chunk: $('chunk'),
};
const scatter = setupCanvas($('scatter'), SCATTER.width, SCATTER.height);
const scatterSvg = $('scatter-axes');
const meansSvg = $('means');
let q = null;
let job = null;

// The page starts a run as soon as the module has loaded, unless `run=0`.
function applyUrl() {
  const p = new URLSearchParams(location.search);
  form.code.value = DEFAULT_JS_MODEL;
  if (p.has('model') && MODEL[p.get('model')] !== undefined) form.model.value = p.get('model');
  if (form.model.value === 'js') form.dim.value = 2; // the default JS model's
  form.delta.value = DEFAULT_DELTA[form.model.value];
  for (const k of ['dim', 'warmup', 'seed', 'delta', 'chunk']) if (p.has(k)) form[k].value = p.get(k);
  if (p.has('draws')) form.draws.value = p.get('draws');
  syncForm();
  return p.get('run') !== '0';
}

function syncForm() {
  const model = form.model.value;
  // the chosen model also as the `selected` attribute (seen in the DOM)
  for (const option of form.model.options) option.defaultSelected = option.value === model;
  $('jsmodel').style.display = model === 'js' ? '' : 'none';
  if (model === 'banana') form.dim.value = 2;
  form.dim.disabled = model === 'banana';
}

form.model.addEventListener('change', () => {
  form.delta.value = DEFAULT_DELTA[form.model.value];
  syncForm();
});

// ---- drawing --------------------------------------------------------------

// A canvas of w × h CSS pixels backed by w·dpr × h·dpr device pixels.
function setupCanvas(canvas, w, h) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  const context = canvas.getContext('2d');
  context.setTransform(dpr, 0, 0, dpr, 0, 0);
  return context;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

function svgEl(parent, tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  parent.appendChild(node);
  return node;
}

const px = (v) => String(Math.round(v * 10) / 10);

// Round tick values in [lo, hi] (steps 1, 2 or 5 × 10ᵏ, the largest step
// that still gives at least target − 1 of them) and their labels, with as
// many decimals as the step needs and a real minus sign.
function niceTicks(lo, hi, target = 5) {
  const count = (step) => Math.floor(hi / step + 1e-9) - Math.ceil(lo / step - 1e-9) + 1;
  const mag = 10 ** Math.floor(Math.log10((hi - lo) / target));
  const steps = [mag / 10, mag, mag * 10].flatMap((e) => [1, 2, 5].map((m) => m * e));
  const step = steps.filter((st) => count(st) >= target - 1).at(-1) ?? steps[0];
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const ticks = [];
  for (let i = Math.ceil(lo / step - 1e-9); i <= Math.floor(hi / step + 1e-9); i++) {
    const value = i === 0 ? 0 : i * step;
    ticks.push({ value, label: value.toFixed(decimals).replace('-', '\u2212') });
  }
  return ticks;
}

// The frame, ticks, tick labels and axis names of a plot area `area` whose
// corners are the values `range` ({xmin, xmax, ymin, ymax}), as SVG.
function drawAxes(svg, area, range, names) {
  const g = svgEl(svg, 'g', { class: 'axes' });
  const xAt = (v) => area.left + (v - range.xmin) / (range.xmax - range.xmin) * area.width;
  const yAt = (v) => area.top + (range.ymax - v) / (range.ymax - range.ymin) * area.height;
  const bottom = area.top + area.height;
  const xAxis = svgEl(g, 'g', { class: 'x-axis' });
  for (const t of niceTicks(range.xmin, range.xmax)) {
    const x = Math.round(xAt(t.value)) + 0.5;
    svgEl(xAxis, 'line', { x1: px(x), y1: px(bottom), x2: px(x), y2: px(bottom + 5), stroke: '#000' });
    svgEl(xAxis, 'text', { x: px(x), y: px(bottom + 17), 'text-anchor': 'middle' }, t.label);
  }
  const yAxis = svgEl(g, 'g', { class: 'y-axis' });
  for (const t of niceTicks(range.ymin, range.ymax, area.height < 200 ? 4 : 5)) {
    const y = Math.round(yAt(t.value)) + 0.5;
    svgEl(yAxis, 'line', { x1: px(area.left - 5), y1: px(y), x2: px(area.left), y2: px(y), stroke: '#000' });
    svgEl(yAxis, 'text', { x: px(area.left - 7), y: px(y), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, t.label);
  }
  svgEl(g, 'text', { class: 'x-label', x: px(area.left + area.width / 2), y: px(bottom + 36), 'text-anchor': 'middle' }, names[0]);
  svgEl(g, 'text', {
    class: 'y-label', x: 0, y: 0, 'text-anchor': 'middle',
    transform: `translate(14 ${px(area.top + area.height / 2)}) rotate(-90)`,
  }, names[1]);
  drawFrame(svg, area);
  return { xAt, yAt };
}

function drawFrame(svg, area) {
  svgEl(svg, 'rect', {
    class: 'frame', x: area.left - 0.5, y: area.top - 0.5, width: area.width + 1, height: area.height + 1,
    fill: 'none', stroke: '#000', 'stroke-width': 1, 'shape-rendering': 'crispEdges',
  });
}

function clearScatter(note) {
  scatter.clearRect(0, 0, SCATTER.width, SCATTER.height);
  scatterSvg.replaceChildren();
  drawFrame(scatterSvg, PLOT);
  if (note) {
    svgEl(scatterSvg, 'text', {
      class: 'note', x: PLOT.left + PLOT.width / 2, y: PLOT.top + PLOT.height / 2, 'text-anchor': 'middle',
    }, note);
  }
}

function clearMeans(note) {
  meansSvg.replaceChildren();
  svgEl(meansSvg, 'text', { class: 'title', x: MEANS_PLOT.left, y: 14 }, 'running means of θ₁ and θ₂');
  drawFrame(meansSvg, MEANS_PLOT);
  if (note) {
    svgEl(meansSvg, 'text', {
      class: 'note', x: MEANS_PLOT.left + MEANS_PLOT.width / 2, y: MEANS_PLOT.top + MEANS_PLOT.height / 2,
      'text-anchor': 'middle',
    }, note);
  }
}

function toPx(range, x, y) {
  return [PLOT.left + (x - range.xmin) / (range.xmax - range.xmin) * PLOT.width,
    PLOT.top + (range.ymax - y) / (range.ymax - range.ymin) * PLOT.height];
}

// [lo − pad·span, hi + pad·span] of the values (a unit span if they are all equal).
function padded(values, pad) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
  const span = hi - lo || 1;
  return [lo - pad * span, hi + pad * span];
}

function rangeOf(xs, ys, pad) {
  const [xmin, xmax] = padded(xs, pad), [ymin, ymax] = padded(ys, pad);
  return { xmin, xmax, ymin, ymax };
}

function inside(range, xs, ys, from) {
  for (let i = from; i < xs.length; i++) {
    if (!(xs[i] >= range.xmin && xs[i] <= range.xmax && ys[i] >= range.ymin && ys[i] <= range.ymax)) return false;
  }
  return true;
}

// The points from index `from` on, for the range `range`.
function plotPoints(range, xs, ys, from) {
  scatter.fillStyle = DRAW_COLOUR;
  for (let i = from; i < xs.length; i++) {
    const [x, y] = toPx(range, xs[i], ys[i]);
    scatter.fillRect(Math.round(x) - 1, Math.round(y) - 1, 3, 3);
  }
}

// The scatter anew for j.range: axes, an empty cross, every point.
function redrawScatter(j) {
  scatter.clearRect(0, 0, SCATTER.width, SCATTER.height);
  scatterSvg.replaceChildren();
  drawAxes(scatterSvg, PLOT, j.range, j.names);
  j.cross = svgEl(scatterSvg, 'g', { class: 'mean-cross', fill: MEAN_COLOUR, 'shape-rendering': 'crispEdges' });
  plotPoints(j.range, j.xs, j.ys, 0);
}

function drawMean(j, mx, my) {
  const [x, y] = toPx(j.range, mx, my).map(Math.round);
  j.cross.replaceChildren();
  svgEl(j.cross, 'rect', { x: x - 8, y: y - 1, width: 17, height: 3 });
  svgEl(j.cross, 'rect', { x: x - 1, y: y - 8, width: 3, height: 17 });
}

// The running means of the two plotted coordinates against the number of
// kept draws, on one y axis (with the exact means, dashed, where known).
function drawMeansPanel(j) {
  const { history, draws, exactMeans } = j;
  meansSvg.replaceChildren();
  if (history.length < 1) { clearMeans('no draws yet'); return; }
  const values = history.flatMap((r) => [r[1], r[2]]).concat(exactMeans.filter(Number.isFinite));
  const [ymin, ymax] = padded(values, 0.08);
  const range = { xmin: 0, xmax: draws, ymin, ymax };
  svgEl(meansSvg, 'text', { class: 'title', x: MEANS_PLOT.left, y: 14 }, 'running means of θ₁ and θ₂');
  const { xAt, yAt } = drawAxes(meansSvg, MEANS_PLOT, range, ['draws kept', 'running mean']);
  const lines = svgEl(meansSvg, 'g', { class: 'lines', fill: 'none', 'stroke-width': 1.5 });
  for (const k of [0, 1]) {
    const colour = LINE_COLOURS[k];
    if (Number.isFinite(exactMeans[k])) {
      const y = px(yAt(exactMeans[k]));
      svgEl(lines, 'line', {
        class: 'exact-mean', x1: MEANS_PLOT.left, y1: y, x2: MEANS_PLOT.left + MEANS_PLOT.width, y2: y,
        stroke: colour, 'stroke-dasharray': '4 3', 'stroke-width': 1,
      });
    }
    const points = history.map((r) => `${px(xAt(r[0]))},${px(yAt(r[k + 1]))}`).join(' ');
    svgEl(lines, 'polyline', { class: 'mean-line', 'data-coordinate': j.names[k], points, stroke: colour });
    const last = history.at(-1)[k + 1];
    svgEl(meansSvg, 'text', {
      class: 'legend', x: MEANS_PLOT.left + MEANS_PLOT.width - 150 + k * 80, y: 14, fill: colour,
      style: `fill: ${colour}`,
    }, `${j.names[k]}: ${last.toFixed(3)}`);
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
  clearScatter('warm-up…');
  clearMeans('warm-up…');
  $('result').textContent = '';
  $('draws').textContent = '';
  const second = dim > 1 ? 1 : 0;
  const exact = q.modelMoments(model, dim);
  job = {
    modelName, settings, draws, chunk, stopped: false, started: performance.now(),
    sum: new Float64Array(dim), sumSq: new Float64Array(dim), kept: 0, divergent: 0,
    leapfrog: 0, xs: [], ys: [], all: Array.from({ length: dim }, () => []),
    second, names: dim > 1 ? ['θ₁', 'θ₂'] : ['θ₁', 'θ₁'], exactMeans: [exact.mean[0], exact.mean[second]],
    plotted: 0, range: null, cross: null, history: [],
  };
  $('run').disabled = true;
  $('stop').disabled = false;
  setTimeout(() => tick(job), FRAME_MS);
}

function tick(j) {
  if (j.stopped) return;
  const { dim } = j.settings;
  const { second } = j;
  try {
    for (let n = 0; n < j.chunk && j.kept < j.draws; n++) {
      const s = q.step();
      const p = q.position();
      if (s.warmup) continue;
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
  const warming = q.isWarmingUp();
  if (j.kept > 0) {
    // every point inside the axes: new axes (and all points again) when a
    // draw falls outside the current range
    if (!j.range || !inside(j.range, j.xs, j.ys, j.plotted)) {
      j.range = rangeOf(j.xs, j.ys, PAD_LIVE);
      redrawScatter(j);
    } else {
      plotPoints(j.range, j.xs, j.ys, j.plotted);
    }
    j.plotted = j.xs.length;
    const mx = j.sum[0] / j.kept, my = j.sum[second] / j.kept;
    drawMean(j, mx, my);
    j.history.push([j.kept, mx, my]);
    drawMeansPanel(j);
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
  if (j.kept > 0) {
    // the final axes: the draws' extent and PAD_FINAL of it on each side
    j.range = rangeOf(j.xs, j.ys, PAD_FINAL);
    redrawScatter(j);
    drawMean(j, j.sum[0] / j.kept, j.sum[j.second] / j.kept);
    if (j.history.at(-1)?.[0] !== j.kept) j.history.push([j.kept, j.sum[0] / j.kept, j.sum[j.second] / j.kept]);
    drawMeansPanel(j);
  }
  const result = {
    status: error ? 'error' : 'done', error, model: j.modelName, dim, seed: j.settings.seed,
    warmup: j.settings.warmup, delta: j.settings.delta, kept: j.kept, divergent: j.divergent,
    leapfrog_per_draw: j.leapfrog / Math.max(1, j.kept), step_size: q.stats().stepSize,
    means, sds, mcse: mcses, exact: q.modelMoments(model, dim), seconds,
    plot: { ...PLOT, canvas: $('scatter').getBoundingClientRect().toJSON(), ...j.range,
      x: 0, y: j.second },
    means_plot: { ...MEANS_PLOT, svg: meansSvg.getBoundingClientRect().toJSON() },
  };
  $('result').textContent = JSON.stringify(result);
  // The plotted coordinates of every kept draw, for the test's own MCSE.
  $('draws').textContent = j.xs.map((x, i) => `${x.toPrecision(7)} ${j.ys[i].toPrecision(7)}`).join('\n');
  $('status').textContent = error
    ? `error: ${error}`
    : `done: ${j.kept} draws in ${seconds.toFixed(2)} s, ${j.divergent} divergent, ` +
      `${result.leapfrog_per_draw.toFixed(1)} leapfrog steps per draw`;
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
  clearScatter('loading the module…');
  clearMeans('');
  try {
    q = await load('qnmc.wasm');
  } catch (error) {
    $('status').textContent = `could not load qnmc.wasm (${error}); build it with web/build.sh and serve this folder over HTTP`;
    return;
  }
  $('info').textContent = `module: one chain in ${q.stateSize} B of static memory, ` +
    `dimension ≤ ${q.maxDimension}, L-BFGS memory ${q.lbfgsMemory}, tree depth ≤ ${q.maxTreeDepth}` +
    (q.hasJsModel ? '' : ' (no JS model in this build)');
  $('status').textContent = autorun ? 'starting…' : 'ready: press Run';
  clearScatter(autorun ? '' : 'press Run to sample');
  clearMeans('');
  if (autorun) {
    try { start(); } catch (error) {
      $('status').textContent = `error: ${error}`;
      $('result').textContent = JSON.stringify({ status: 'error', error: String(error) });
    }
  }
})();
