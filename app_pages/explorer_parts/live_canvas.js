// One row of the live Explorer drawn on three canvases: the trace of K (every chain), the posterior of K (pooled
// after burn-in) and the clusters now (points, or at 1-D the density over a rug of the points). Streamlit calls
// the default export with each frame of pcrp/app/live_frames.py; the row's state lives on its element, a frame
// only adds to it. While the row's chains run, a frame's new K values are played back over the frame's playback
// time (the time to the server's next frame), the trace and the posterior of K redrawn at every step of the page's
// live clock (live_clock.js, every STEP_MS), with the status line (live_status.js); paused or stopped, they show at
// once. A panel's canvas is painted again only when its picture changes (to half a pixel): at 100,000 sweeps across a
// few hundred pixels a step of the playback mostly moves nothing, and painting costs the browser's CPU, which it
// shares with the chains on a small server.
// Text drawn on a canvas is inert.
const FONT = "sans-serif";
const INK = "#222222", GRID = "#e8e8e8", BAND = "rgba(128,128,128,0.3)", BURN = "rgba(154,154,154,0.18)";
const BURN_BAR = "#9a9a9a";

function decode(text, Type) {
  const raw = atob(text || "");
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return new Type(bytes.buffer, 0, bytes.length / Type.BYTES_PER_ELEMENT);
}

function newState(frame) {
  const L = frame.layout;
  const n = L.total_sweeps;
  return {
    feed: frame.feed, seq: -1, layout: L, kMax: frame.k_max, kHist: frame.k_hist, marker: null, view: null,
    k: Array.from({length: L.n_chains}, () => new Uint16Array(n)), len: new Array(L.n_chains).fill(0),
    after: [], burn: [], nAfter: 0, nBurn: 0,
    x: decode(L.x, Float32Array), y: L.y ? decode(L.y, Float32Array) : null,
    colours: new Uint8Array(L.n_points), clustersVersion: 0, bins: [],
    shown: new Array(L.n_chains).fill(0), play: null,
  };
}

// A frame's K values, colours and view on top of the state (the frame is a delta from its frame "base", which the
// state holds or has passed: values it already has are skipped); false when the state is too old for it. The K
// values are held, not yet shown: see reveal.
function apply(S, f) {
  if (f.feed !== S.feed || f.base > S.seq) return false;
  for (let c = 0; c < f.k.length; c++) {
    const values = decode(f.k[c], Uint16Array);
    const skip = S.len[c] - f.k_from[c];
    if (skip < 0) return false;
    const start = S.len[c];
    for (let i = skip; i < values.length && start + i - skip < S.k[c].length; i++) S.k[c][start + i - skip] = values[i];
    S.len[c] = Math.min(start + Math.max(0, values.length - skip), S.k[c].length);
  }
  if (f.colours || f.view) S.clustersVersion++;
  if (f.colours) {
    if (f.colours.all !== undefined) S.colours = decode(f.colours.all, Uint8Array).slice();
    else {
      const index = decode(f.colours.index, Uint16Array), value = decode(f.colours.value, Uint8Array);
      for (let i = 0; i < index.length; i++) S.colours[index[i]] = value[i];
    }
  }
  if (f.view) {
    S.view = {grid: decode(f.view.grid, Float32Array), density: decode(f.view.density, Float32Array),
              components: f.view.components.map(c => decode(c, Float32Array)),
              colours: f.view.component_colours};
  }
  S.kMax = f.k_max; S.kHist = f.k_hist || f.k_max; S.marker = f.marker; S.seq = f.seq;
  return true;
}

// Show chain c's K values up to position ``upto`` (the trace draws them, the posterior of K counts them).
function revealTo(S, c, upto) {
  const burnIn = S.layout.burn_in, K = S.k[c];
  for (let at = S.shown[c]; at < upto; at++) {
    const v = K[at], into = at < burnIn ? S.burn : S.after;
    into[v] = (into[v] || 0) + 1;
    if (at < burnIn) S.nBurn++; else S.nAfter++;
  }
  S.shown[c] = Math.max(S.shown[c], upto);
}

// Advance the playback to now; true while some held values are still to show.
function reveal(S) {
  const P = S.play;
  const progress = P ? Math.min(1, (performance.now() - P.t0) / P.ms) : 1;
  let behind = false;
  for (let c = 0; c < S.len.length; c++) {
    const from = P ? Math.min(P.from[c], S.len[c]) : S.len[c];
    revealTo(S, c, Math.floor(from + (S.len[c] - from) * progress));
    behind = behind || S.shown[c] < S.len[c];
  }
  return behind;
}

function ticks(lo, hi, count, integer) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  let step = Math.pow(10, Math.floor(Math.log10(span / count)));
  for (const m of [1, 2, 5, 10]) if (span / (step * m) <= count) { step *= m; break; }
  if (integer) step = Math.max(1, Math.round(step));
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}

function fmt(v) {
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en") : String(+v.toFixed(2));
}

// A plot area of w x h CSS px: the mapping of data to pixels. o: x/y domains, titles, whether the x axis is labelled
// (xAxis: its tick labels and title, only the bottom row; xLabels: its tick labels only), the font size, integer
// ticks.
function area(w, h, o) {
  const fs = o.font;
  // (on the right: room for half the last x label, "100,000" at the largest sweeps, digits about 0.55 em wide)
  const lastLabel = o.xAxis || o.xLabels ? 0.55 * fs * fmt(o.x[1]).length / 2 + 2 : 0;
  const left = Math.round(fs * 3.6), right = Math.round(Math.max(fs * 1.6, lastLabel)), top = Math.round(fs * 0.6);
  // (without x labels: room for the lower half of the lowest y label)
  const bottom = o.xAxis ? Math.round(fs * 2.9) : o.xLabels ? Math.round(fs * 1.6) : Math.round(fs * 0.6);
  const pw = Math.max(10, w - left - right), ph = Math.max(10, h - top - bottom);
  const X = v => left + (v - o.x[0]) / (o.x[1] - o.x[0]) * pw;
  const Y = v => top + ph - (v - o.y[0]) / (o.y[1] - o.y[0]) * ph;
  return {X, Y, left, top, pw, ph};
}

// Text on a canvas, drawn and recorded: each painted canvas keeps [text, font px, left, top, right, bottom] of what it
// drew (CSS px; canvas.dataset.texts, read by the tests: every label's size, and that none runs off the canvas).
function label(ctx, text, x, y, fs) {
  ctx.fillText(text, x, y);
  const w = ctx.measureText(text).width;
  const x0 = ctx.textAlign === "right" ? x - w : ctx.textAlign === "center" ? x - w / 2 : x;
  const y0 = ctx.textBaseline === "middle" ? y - fs / 2 : ctx.textBaseline === "top" ? y : y - fs;
  (ctx.canvas.pcrpTexts || (ctx.canvas.pcrpTexts = [])).push([text, fs, x0, y0, x0 + w, y0 + fs]);
}

// A title that fits ``room`` px at the font set: ``text``, else ``short`` (when given; else the title before its
// bracket: "PC2" of "PC2 (10% of variance)"), else cut to fit with an ellipsis (a chart of five rows on a projector is
// low: its y titles get the room of its plot, no more).
function fitted(ctx, text, room, short) {
  if (ctx.measureText(text).width <= room) return text;
  short = short || (text.includes(" (") ? text.slice(0, text.indexOf(" (")) : null);
  if (short && ctx.measureText(short).width <= room) return short;
  let cut = text;
  while (cut.length > 1 && ctx.measureText(cut + "…").width > room) cut = cut.slice(0, -1);
  return cut + "…";
}

// The area's grid, ticks and titles drawn in ctx (m: its area()).
function axes(ctx, m, o) {
  const {X, Y, left, top, pw, ph} = m, fs = o.font;
  ctx.font = `${fs}px ${FONT}`;
  ctx.fillStyle = INK; ctx.strokeStyle = GRID; ctx.lineWidth = 1;
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (const v of ticks(o.y[0], o.y[1], Math.max(2, Math.floor(ph / (fs * 2))), o.yInteger)) {
    const py = Math.round(Y(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(left, py); ctx.lineTo(left + pw, py); ctx.stroke();
    label(ctx, fmt(v), left - 4, py, fs);
  }
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  const labelled = o.xAxis || o.xLabels;
  if (o.xTicks) {  // every value gets a tick mark below the axis, the labelled ones a grid line and their label
    ctx.strokeStyle = INK;
    for (const v of o.xTicks.marks) {
      const px = Math.round(X(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(px, top + ph); ctx.lineTo(px, top + ph + 3); ctx.stroke();
    }
    ctx.strokeStyle = GRID;
  }
  for (const v of o.xTicks ? o.xTicks.labels : ticks(o.x[0], o.x[1], Math.max(2, Math.floor(pw / (fs * 5))), o.xInteger)) {
    const px = Math.round(X(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(px, top); ctx.lineTo(px, top + ph); ctx.stroke();
    if (labelled) label(ctx, fmt(v), px, top + ph + 3, fs);
  }
  if (o.xAxis && o.xTitle) label(ctx, fitted(ctx, o.xTitle, pw), left + pw / 2, top + ph + fs + 6, fs);
  if (o.yTitle) {  // turned a quarter: its width runs along the plot's height, centred on it
    const title = fitted(ctx, o.yTitle, ph, o.yShort), w = ctx.measureText(title).width;
    const cx = fs * 0.1, cy = top + ph / 2;
    ctx.save(); ctx.translate(cx, cy); ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "top"; ctx.fillText(title, 0, 0); ctx.restore();
    (ctx.canvas.pcrpTexts || (ctx.canvas.pcrpTexts = [])).push([title, fs, cx, cy - w / 2, cx + fs, cy + w / 2]);
  }
}

// Clear the canvas and draw an area with its axes: returns the area.
function frame2d(ctx, w, h, o) {
  const m = area(w, h, o);
  ctx.clearRect(0, 0, w, h);
  axes(ctx, m, o);
  return m;
}

// Chain c's trace in bins of ``per`` sweeps (about 2 px each): per bin of the sweeps shown, [first sweep, last sweep
// + 1, sum, least, largest K]. Complete bins are kept in the state (redone when the bin width changes); only the
// last, partial bin is counted again, so a step of the playback costs its new sweeps, not the whole trace.
function traceBins(S, c, per) {
  let B = S.bins[c];
  if (!B || B.per !== per) B = S.bins[c] = {per, complete: []};
  const n = S.shown[c], K = S.k[c], out = B.complete.slice();
  for (let b = B.complete.length; b * per < n; b++) {
    const i0 = Math.floor(b * per), end = Math.floor((b + 1) * per), i1 = Math.min(n, end);
    if (i1 <= i0) continue;
    let sum = 0, lo = Infinity, hi = -Infinity;
    for (let i = i0; i < i1; i++) { const v = K[i]; sum += v; if (v < lo) lo = v; if (v > hi) hi = v; }
    const bin = [i0, i1, sum, lo, hi];
    if (i1 === end && b === B.complete.length) B.complete.push(bin);
    out.push(bin);
  }
  return out;
}

// Whether ``canvas`` must be painted for ``key`` (what its picture depends on); records the key and counts the paint
// (data-paints, read by the tests).
function changed(canvas, key) {
  if (canvas.pcrpKey === key) return false;
  canvas.pcrpKey = key;
  canvas.dataset.paints = String((+canvas.dataset.paints || 0) + 1);
  canvas.pcrpTexts = [];  // (what this paint draws: see label)
  return true;
}

function drawTrace(canvas, ctx, w, h, S, o) {
  const L = S.layout, T = L.total_sweeps;
  const ao = {...o, x: [0, T], y: [0, S.kMax + 0.5], yTitle: "clusters K", yShort: "K", xTitle: "sweep",
              yInteger: true, xInteger: true};
  const m = area(w, h, ao), per = Math.max(1, T / Math.max(1, Math.floor(m.pw / 2)));
  const lines = S.k.map((_, c) => traceBins(S, c, per).map(([i0, i1, sum, lo, hi]) =>
    [m.X((i0 + i1 + 1) / 2), m.Y(sum / (i1 - i0)), m.Y(lo), m.Y(hi)]));
  // the picture: each chain's bins to half a pixel (complete bins never change), the burn-in, the marker
  const key = [S.kMax, S.marker, L.burn_in, per].concat(lines.map(bins => bins.length ? [bins.length].concat(
    bins[bins.length - 1].map(v => Math.round(2 * v))).join(":") : "")).join("|");
  if (!changed(canvas, key)) return;
  ctx.clearRect(0, 0, w, h);
  axes(ctx, m, ao);
  if (L.burn_in > 0) { ctx.fillStyle = BURN; ctx.fillRect(m.X(0), m.top, m.X(L.burn_in) - m.X(0), m.ph); }
  for (let c = lines.length - 1; c >= 0; c--) {
    const bins = lines[c];
    if (!bins.length) continue;
    if (c === 0) {
      ctx.fillStyle = BAND; ctx.beginPath();
      bins.forEach(([x, , , hi], i) => (i ? ctx.lineTo(x, hi) : ctx.moveTo(x, hi)));
      for (let i = bins.length - 1; i >= 0; i--) ctx.lineTo(bins[i][0], bins[i][2]);
      ctx.closePath(); ctx.fill();
    }
    ctx.strokeStyle = L.colour; ctx.lineWidth = 2; ctx.globalAlpha = c ? 0.75 : 1;
    ctx.setLineDash(c ? [4, 3] : []);
    ctx.beginPath();
    bins.forEach(([x, mean], i) => (i ? ctx.lineTo(x, mean) : ctx.moveTo(x, mean)));
    if (bins.length === 1) ctx.lineTo(bins[0][0] + 1, bins[0][1]);
    ctx.stroke();
    ctx.setLineDash([]); ctx.globalAlpha = 1;
  }
  if (S.marker) {
    ctx.strokeStyle = INK; ctx.lineWidth = 2; ctx.setLineDash([4, 3]); ctx.beginPath();
    ctx.moveTo(m.X(S.marker), m.top); ctx.lineTo(m.X(S.marker), m.top + m.ph); ctx.stroke(); ctx.setLineDash([]);
  }
}

// The K values of the posterior of K's x axis [1, kMax]: a tick mark at every K, and labels at K = 1, 1 + step, ...
// with the least step of 1, 2, 4, 8, ... at which the widest label fits between its neighbours (what Vega-Lite's
// "parity" label overlap keeps of the ended run's chart, live_charts.k_histogram_chart).
function kTicks(ctx, m, kMax, fs) {
  ctx.font = `${fs}px ${FONT}`;
  const perK = m.pw / Math.max(1, kMax), need = ctx.measureText(String(kMax)).width + 0.4 * fs;
  let step = 1;
  while (step * perK < need && step < kMax) step *= 2;
  const marks = [], labels = [];
  for (let k = 1; k <= kMax; k++) { marks.push(k); if ((k - 1) % step === 0) labels.push(k); }
  return {marks, labels};
}

// Every row's posterior of K labels its K values (a class reads K = 2 from K = 3 in each row); only the bottom row,
// whose x axes carry the titles, names the axis.
function drawHistogram(canvas, ctx, w, h, S, o) {
  const top = S.kHist;
  const ao = {...o, x: [0.5, top + 0.5], y: [0, 1], yTitle: "share", xTitle: "clusters K", xInteger: true,
              xLabels: true};
  const m = area(w, h, ao);
  ao.xTicks = kTicks(ctx, m, top, o.font);
  const burnOnly = S.nAfter === 0, counts = burnOnly ? S.burn : S.after, total = burnOnly ? S.nBurn : S.nAfter;
  const tops = [];  // each bar's top, to half a pixel: the picture
  for (let k = 0; k <= top; k++) tops.push(total && counts[k] ? Math.round(2 * m.Y(counts[k] / total)) : "");
  if (!changed(canvas, [top, burnOnly, tops.join(",")].join("|"))) return;
  ctx.clearRect(0, 0, w, h);
  axes(ctx, m, ao);
  // where the K labels are (CSS px: [K, x] and the top of their line), read by the tests
  canvas.dataset.kLabels = JSON.stringify(ao.xTicks.labels.map(k => [k, Math.round(m.X(k))]));
  canvas.dataset.labelTop = String(Math.round(m.top + m.ph + 3));
  ctx.fillStyle = burnOnly ? BURN_BAR : S.layout.colour;
  const bw = 0.8 * (m.X(1) - m.X(0));
  tops.forEach((top, k) => { if (top !== "") ctx.fillRect(m.X(k) - bw / 2, top / 2, bw, m.Y(0) - top / 2); });
}

function colourOf(S, byte) {
  return byte === 0 ? S.layout.tiny_colour : S.layout.palette[byte - 1];
}

function drawClusters(canvas, ctx, w, h, S, o) {
  const L = S.layout;
  if (!changed(canvas, String(S.clustersVersion))) return;
  const big = o.font > 12 ? 3 : 2;
  if (S.y) {
    const m = frame2d(ctx, w, h, {...o, x: L.x_domain, y: L.y_domain, xTitle: L.titles[0], yTitle: L.titles[1]});
    ctx.globalAlpha = 0.85;
    for (let b = 1; b <= L.palette.length; b++) {  // one fill per colour: a path of all its points
      ctx.fillStyle = L.palette[b - 1]; ctx.beginPath();
      for (let i = 0; i < S.x.length; i++) {
        if (S.colours[i] !== b) continue;
        const px = m.X(S.x[i]), py = m.Y(S.y[i]);
        ctx.moveTo(px + big, py); ctx.arc(px, py, big, 0, 2 * Math.PI);
      }
      ctx.fill();
    }
    ctx.globalAlpha = 1; ctx.fillStyle = L.tiny_colour; ctx.strokeStyle = INK; ctx.lineWidth = 1;
    ctx.beginPath();
    for (let i = 0; i < S.x.length; i++) {  // tiny clusters: larger, outlined, on top
      if (S.colours[i] !== 0) continue;
      const px = m.X(S.x[i]), py = m.Y(S.y[i]);
      ctx.moveTo(px + 1.6 * big, py); ctx.arc(px, py, 1.6 * big, 0, 2 * Math.PI);
    }
    ctx.fill(); ctx.stroke();
    return;
  }
  const V = S.view;
  let top = 1e-9;
  if (V) for (const v of V.density) top = Math.max(top, v);
  const m = frame2d(ctx, w, h, {...o, x: L.x_domain, y: [0, top * 1.08], xTitle: L.titles[0], yTitle: "density"});
  if (V) {
    ctx.lineWidth = 1.5; ctx.setLineDash([5, 3]);
    V.components.forEach((comp, j) => {
      ctx.strokeStyle = colourOf(S, V.colours[j]); ctx.beginPath();
      comp.forEach((v, i) => (i ? ctx.lineTo(m.X(V.grid[i]), m.Y(v)) : ctx.moveTo(m.X(V.grid[i]), m.Y(v))));
      ctx.stroke();
    });
    ctx.setLineDash([]); ctx.strokeStyle = INK; ctx.lineWidth = 2.5; ctx.beginPath();
    V.density.forEach((v, i) => (i ? ctx.lineTo(m.X(V.grid[i]), m.Y(v)) : ctx.moveTo(m.X(V.grid[i]), m.Y(v))));
    ctx.stroke();
  }
  const base = m.top + m.ph;
  ctx.lineWidth = 1; ctx.globalAlpha = 0.5;
  for (let b = 1; b <= L.palette.length; b++) {  // the rug
    ctx.strokeStyle = L.palette[b - 1]; ctx.beginPath();
    for (let i = 0; i < S.x.length; i++) {
      if (S.colours[i] !== b) continue;
      const px = Math.round(m.X(S.x[i])) + 0.5;
      ctx.moveTo(px, base); ctx.lineTo(px, base - 10);
    }
    ctx.stroke();
  }
  ctx.globalAlpha = 1; ctx.lineWidth = 2.5; ctx.strokeStyle = L.tiny_colour; ctx.beginPath();
  for (let i = 0; i < S.x.length; i++) {  // tiny clusters' points: tall dark ticks
    if (S.colours[i] !== 0) continue;
    const px = m.X(S.x[i]);
    ctx.moveTo(px, base); ctx.lineTo(px, base - 26);
  }
  ctx.stroke();
}

const PANELS = [drawTrace, drawHistogram, drawClusters];

// One step of the playback: reveal the values due by now and paint the panels whose picture changed (all of them
// when a canvas was resized or the row restyled). True while the playback has more to show.
function draw(root) {
  const S = root.pcrpState;
  if (!S) return false;
  const behind = reveal(S);
  const dpr = window.devicePixelRatio || 1;
  const options = JSON.stringify(root.pcrpOptions);
  const restyled = root.pcrpDrawnOptions !== options;
  root.pcrpDrawnOptions = options;
  root.querySelectorAll("canvas").forEach((canvas, p) => {
    const w = canvas.clientWidth, h = canvas.clientHeight;
    if (!w || !h) return;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr) || restyled
        || canvas.pcrpState !== S) {
      canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);  // (clears it)
      canvas.pcrpKey = null; canvas.pcrpState = S;
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    PANELS[p](canvas, ctx, w, h, S, root.pcrpOptions);
    if (canvas.pcrpTexts) canvas.dataset.texts = JSON.stringify(canvas.pcrpTexts.map(
      ([t, fs, x0, y0, x1, y1]) => [t, fs, +x0.toFixed(1), +y0.toFixed(1), +x1.toFixed(1), +y1.toFixed(1)]));
  });
  root.dataset.frames = String((+root.dataset.frames || 0) + 1);
  root.dataset.seq = String(S.seq);
  return behind;
}

// The column headers above the top row's canvases, below its heading (page text: bold words, then the rest), redone
// only when they change.
function showHeaders(parentElement, root, data) {
  let box = parentElement.querySelector(".pcrp-live-headers");
  const text = JSON.stringify([data.headers, data.large_headers, data.columns]);
  if (!data.headers) { if (box) box.remove(); return; }
  if (box && box.dataset.text === text) return;
  if (!box) {
    box = document.createElement("div");
    parentElement.insertBefore(box, root);
  }
  box.className = "pcrp-live-headers" + (data.large_headers ? " large" : "");
  box.dataset.text = text;
  box.style.gridTemplateColumns = data.columns.map(c => `${c}fr`).join(" ");
  box.replaceChildren(...data.headers.map(([bold, rest]) => {
    const cell = document.createElement("div"), b = document.createElement("b");
    b.textContent = bold;
    cell.append(b, rest);
    return cell;
  }));
}

// The row's heading (page text: the prior in the row's colour, its clusters now, notes, K, NMI, R-hat), from runs
// [text, bold, CSS colour] (live_view.heading_runs), set as text; redone only when it changes. Above the canvases, or
// (compact: five rows on a projector) in the row's first cell, beside them.
function showHeading(parentElement, root, runs, large, compact) {
  let cell = root.querySelector(".pcrp-heading-cell");
  if (compact && !cell) {
    cell = document.createElement("div");
    cell.className = "pcrp-heading-cell";
    root.insertBefore(cell, root.firstChild);
  } else if (!compact && cell) { cell.remove(); cell = null; }
  const host = compact ? cell : parentElement;
  let box = host.querySelector(".pcrp-row-heading");
  const stray = parentElement.querySelectorAll(".pcrp-row-heading");
  stray.forEach(b => { if (b !== box) b.remove(); });  // (one heading: the other place's goes)
  if (!runs) { if (box) box.remove(); return; }
  const text = JSON.stringify([runs, large]);
  if (box && box.dataset.text === text) return;
  if (!box) {
    box = document.createElement("p");
    host.insertBefore(box, host.firstChild);
  }
  box.className = "pcrp-row-heading" + (large ? " large" : "");
  box.dataset.text = text;
  box.replaceChildren(...runs.map(([words, bold, colour]) => {
    const span = document.createElement(bold ? "strong" : "span");
    span.textContent = words;
    if (colour) span.style.color = colour;
    return span;
  }));
}

// Draw at the clock's next step, and at every step after while the playback has more to show.
function schedule(root) {
  root.pcrpStep = root.pcrpStep || (() => draw(root));
  everyStep(root.pcrpStep);
}

export default function (component) {
  const {parentElement, setTriggerValue} = component;
  const data = Array.isArray(component.data) ? component.data[0] : component.data;  // (a list of one: live_canvas.py)
  let root = parentElement.querySelector(".pcrp-live-row");
  if (!root) {
    root = document.createElement("div");
    root.className = "pcrp-live-row";
    for (const part of ["trace", "khist", "clusters"]) {
      const cell = document.createElement("div");  // sized by the grid; its canvas fills it (no feedback of size)
      const canvas = document.createElement("canvas");
      canvas.className = part;
      canvas.setAttribute("role", "img");
      cell.appendChild(canvas);
      root.appendChild(cell);
    }
    parentElement.appendChild(root);
    new ResizeObserver(() => schedule(root)).observe(root);
  }
  if (!data || !data.frame) return;
  const compact = !!data.compact;  // five rows on a projector: heading | trace | clusters, no posterior of K
  showHeading(parentElement, root, data.heading, data.large_headers, compact);
  showHeaders(parentElement, root, data);
  const f = data.frame;
  root.classList.toggle("compact", compact);
  root.querySelector("canvas.khist").parentElement.style.display = compact ? "none" : "";
  root.style.height = `${data.height}px`;
  root.style.gridTemplateColumns = data.columns.map(c => `${c}fr`).join(" ");
  root.pcrpOptions = {font: data.font, xAxis: data.x_axis};
  root.querySelectorAll("canvas").forEach((c, p) => c.setAttribute("aria-label", data.labels[p]));
  let S = root.pcrpState;
  if (S && S.feed === f.feed && f.seq <= S.seq) return;  // seen already
  if (f.base < 0 && (!S || S.feed !== f.feed)) S = root.pcrpState = newState(f);
  const fresh = S && S.seq < 0;
  if (!S || !apply(S, f)) {
    root.pcrpState = null;  // too far behind (or a new page): ask the server for a complete frame, once per feed
    if (root.pcrpAsked !== f.feed) { root.pcrpAsked = f.feed; setTriggerValue("resync", f.feed); }
    return;
  }
  // a new state shows what it has at once; later frames play from what is shown now
  S.play = fresh || !data.running ? null
    : {from: S.shown.slice(), t0: performance.now(), ms: Math.max(1, data.playback_ms)};
  schedule(root);
}
