/**
 * The console's dashboard, served at `/console/dashboard.js` (docs/console.md): three charts
 * drawn as inline SVG by this script alone (no library, nothing from elsewhere, within the
 * page's Content-Security-Policy): the ingest rate, the head and the safe head with the held
 * hole as a band where it is, and each consumer's lag, over the samples the server keeps
 * (`GET /api/dashboard`, polled every second while the view is open). Each line carries its
 * values in `data-values` (and the samples' times in `data-times`), each hole band its positions in `data-from`/`data-to`, so a test (or a
 * curious reader) can check what is drawn against the data.
 */
export const DASHBOARD_SCRIPT = String.raw`(() => {
  'use strict';
  const SVG = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const W = 960, H = 190, L = 70, R = 150, T = 12, B = 24;
  const COLOURS = ['#2456c7', '#1a7f37', '#b05a00', '#7b3fb3', '#00838f', '#c2185b', '#6d4c41', '#5b6474'];
  const HOLE = '#d93025';
  const state = { samples: [], since: null, timer: null, windowMs: 600000, sampleMs: 1000, ordering: '?' };

  const token = () => ($('token').value || '').trim();
  async function api(path) {
    const response = await fetch(path, { headers: { authorization: 'Bearer ' + token() } });
    const text = await response.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch { body = text; }
    if (!response.ok) throw new Error(response.status + ': ' + ((body && body.message) || response.statusText));
    return body;
  }
  function node(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = String(text);
    return n;
  }
  const fmt = (v) => (Math.abs(v) >= 10000 ? Math.round(v).toLocaleString('en') : String(Math.round(v * 10) / 10));

  /**
   * Draws one chart into the <svg id=…>: each series a polyline over time (x: the samples'
   * times, y: from the lowest to the highest value shown), three labelled y ticks, a legend.
   * extra(svg, x, y) draws more (the hole bands).
   */
  function draw(id, series, floorZero, extra) {
    const svg = $(id);
    svg.replaceChildren();
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    const all = series.flatMap((s) => s.points);
    const times = state.samples.map((s) => s.at);
    const t0 = times.length ? times[0] : Date.now();
    const t1 = Math.max(times.length ? times[times.length - 1] : t0, t0 + state.sampleMs);
    let lo = all.length ? Math.min(...all.map((p) => p[1])) : 0;
    let hi = all.length ? Math.max(...all.map((p) => p[1])) : 1;
    if (floorZero) lo = 0;
    if (hi - lo < 1) hi = lo + 1;
    const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
    const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
    svg.appendChild(node('rect', { x: L, y: T, width: W - L - R, height: H - T - B, fill: '#fbfcfd', stroke: '#e3e6ea' }));
    for (const v of [lo, (lo + hi) / 2, hi]) {
      svg.appendChild(node('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#e3e6ea' }));
      svg.appendChild(node('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5b6474' }, fmt(v)));
    }
    const span = Math.round((t1 - t0) / 1000);
    svg.appendChild(node('text', { x: L, y: H - 6, 'font-size': 11, fill: '#5b6474' }, '-' + span + ' s'));
    svg.appendChild(node('text', { x: W - R, y: H - 6, 'text-anchor': 'end', 'font-size': 11, fill: '#5b6474' }, 'now'));
    if (extra) extra(svg, x, y);
    series.forEach((s, i) => {
      const line = node('polyline', {
        points: s.points.map((p) => x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1)).join(' '),
        fill: 'none', stroke: s.colour, 'stroke-width': 2, 'stroke-linejoin': 'round',
        'data-series': s.name, 'data-values': s.points.map((p) => p[1]).join(','),
        'data-times': s.points.map((p) => p[0]).join(','),
      });
      if (s.dash) line.setAttribute('stroke-dasharray', '6 4');
      svg.appendChild(line);
      const last = s.points[s.points.length - 1];
      const legend = node('text', { x: W - R + 10, y: T + 14 + i * 16, 'font-size': 12, fill: s.colour, 'data-legend': s.name },
        s.name + (last ? ': ' + fmt(last[1]) : ''));
      svg.appendChild(legend);
    });
    if (all.length === 0) svg.appendChild(node('text', { x: (W - R + L) / 2, y: H / 2, 'text-anchor': 'middle', fill: '#5b6474' }, 'no data yet'));
  }

  /** The held hole as bands: one per run of samples holding the same hole, from its first position to its last. */
  function holeBands(svg, x, y) {
    let run = null;
    const runs = [];
    for (const s of state.samples) {
      if (s.hole && run && run.from === s.hole.from) { run.end = s.at; run.to = Math.max(run.to, s.hole.to); run.heldMs = s.hole.heldMs; }
      else if (s.hole) { run = { from: s.hole.from, to: s.hole.to, start: s.at, end: s.at, heldMs: s.hole.heldMs }; runs.push(run); }
      else run = null;
    }
    for (const r of runs) {
      // Centred on the hole's positions, at least 6 px tall however many positions the axis spans.
      const middle = (y(r.to + 0.5) + y(r.from - 0.5)) / 2;
      const height = Math.max(6, y(r.from - 0.5) - y(r.to + 0.5));
      const top = middle - height / 2;
      const band = node('rect', {
        x: x(r.start) - 2,
        width: Math.max(4, x(r.end) - x(r.start) + 4),
        y: top,
        height,
        fill: HOLE,
        'fill-opacity': 0.35,
        stroke: HOLE,
        class: 'hole-band',
        'data-from': r.from,
        'data-to': r.to,
        'data-held-ms': r.heldMs,
      });
      band.appendChild(node('title', {}, 'hole at ' + r.from + (r.to !== r.from ? '..' + r.to : '') + ', held ' + Math.round(r.heldMs / 100) / 10 + ' s'));
      svg.appendChild(band);
      svg.appendChild(node('text', { x: x(r.start), y: Math.max(T + 10, top - 4), 'font-size': 11, fill: HOLE },
        'hole ' + r.from + (r.to !== r.from ? '..' + r.to : '')));
    }
  }

  function render() {
    const samples = state.samples;
    const last = samples[samples.length - 1];
    draw('chart-rate', [{ name: 'msg/s', colour: COLOURS[0],
      points: samples.filter((s) => s.rate !== null).map((s) => [s.at, s.rate]) }], true);
    draw('chart-head', [
      { name: 'head', colour: COLOURS[0], points: samples.map((s) => [s.at, s.head]) },
      { name: 'safe head', colour: COLOURS[1], dash: true, points: samples.map((s) => [s.at, s.safeHead]) },
    ], false, holeBands);
    const names = [...new Set(samples.flatMap((s) => s.consumers.map((c) => c.name)))].sort();
    draw('chart-lag', names.map((name, i) => ({
      name, colour: COLOURS[i % COLOURS.length],
      points: samples.flatMap((s) => s.consumers.filter((c) => c.name === name).map((c) => [s.at, c.lag])),
    })), true);
    const hole = last && last.hole;
    $('dashboard-figures').textContent = last
      ? 'head ' + last.head + ' · safe head ' + last.safeHead + ' · ' + (last.rate === null ? '?' : fmt(last.rate)) + ' msg/s · ' +
        (hole ? 'hole held at ' + hole.from + (hole.to !== hole.from ? '..' + hole.to : '') + ' for ' + Math.round(hole.heldMs / 100) / 10 + ' s' : 'no hole held') +
        ' · ' + state.ordering + ' ordering · ' + samples.length + ' samples'
      : 'no samples yet';
  }

  async function poll() {
    try {
      const body = await api('/api/dashboard' + (state.since === null ? '' : '?since=' + state.since));
      Object.assign(state, { windowMs: body.windowMs, sampleMs: body.sampleMs, ordering: body.ordering });
      if (body.samples.length) {
        state.samples.push(...body.samples);
        state.since = body.samples[body.samples.length - 1].at;
        const oldest = state.since - state.windowMs;
        state.samples = state.samples.filter((s) => s.at >= oldest);
      }
      render();
      $('dashboard-status').textContent = 'updated ' + new Date().toLocaleTimeString();
      $('dashboard-status').className = 'status';
    } catch (error) {
      $('dashboard-status').textContent = String(error.message || error);
      $('dashboard-status').className = 'status error';
    }
  }

  function route() {
    const open = location.hash.split('/')[0] === '#dashboard';
    clearInterval(state.timer);
    state.timer = null;
    if (!open) return;
    poll();
    state.timer = setInterval(poll, 1000);
  }
  window.addEventListener('hashchange', route);
  $('save-token').addEventListener('click', route);
  route();
})();
`;
