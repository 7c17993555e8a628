import { STORAGE_FIGURES_SCRIPT } from './storage-figures.script.js';

/**
 * The console's storage view, served at `/console/storage.js` (docs/console.md): the log's
 * segments (`GET /api/admin/segments`, admin scope; docs/storage.md) with their range, tier,
 * estimated rows, size (exact bytes on hover) and table, the segment size, and the totals per
 * tier. Read when the view opens, when a token is given and on **Refresh**. A token without
 * the admin scope (403 `missing_scope`) is told so in the view. Every value is put on the page
 * as text. The figures (sizes, totals) are storage-figures.script.ts, unit-tested.
 */
export const STORAGE_SCRIPT = String.raw`(() => {
  'use strict';
  ${STORAGE_FIGURES_SCRIPT}
  const $ = (id) => document.getElementById(id);
  const token = () => ($('token').value || '').trim();
  const count = (n) => Number(n).toLocaleString('en');
  const isOpen = () => location.hash.split('/')[0] === '#storage';
  // Each read is numbered: an answer to an older one (the token changed meanwhile) is dropped.
  let reads = 0;

  function setStatus(text, error) {
    $('storage-status').textContent = text;
    $('storage-status').className = 'status' + (error ? ' error' : '');
  }
  function cell(text, cls, title) {
    const td = document.createElement('td');
    td.textContent = text == null ? '' : String(text);
    if (cls) td.className = cls;
    if (title) td.title = title;
    return td;
  }
  function tr(cells, data) {
    const row = document.createElement('tr');
    row.append(...cells);
    for (const [k, v] of Object.entries(data || {})) row.dataset[k] = String(v);
    return row;
  }
  const sizeCell = (bytes) => cell(humanBytes(bytes), 'num', count(bytes) + ' bytes');
  const rowsCell = (rows) => rows === null
    ? cell('not analysed yet', 'empty', 'PostgreSQL has no estimate until it analyses the segment (autovacuum, or ANALYZE)')
    : cell(count(rows), 'num');
  function totalRowsText(t) {
    if (t.unanalysed === t.segments) return 'not analysed yet';
    return count(t.estimatedRows) + (t.unanalysed ? ' (' + t.unanalysed + ' segment' + (t.unanalysed === 1 ? '' : 's') + ' not analysed)' : '');
  }

  function render(body) {
    $('storage-size').textContent = count(body.segmentSize) + ' indices per segment (ORDINAL_SEGMENT_SIZE)';
    const totals = $('storage-totals');
    totals.replaceChildren();
    for (const t of tierTotals(body.segments)) {
      totals.appendChild(tr([cell(t.tier, 'tier-' + t.tier), cell(t.segments, 'num'), cell(totalRowsText(t), 'num'), sizeCell(t.bytes)], { tier: t.tier, bytes: t.bytes }));
    }
    const rows = $('storage-rows');
    rows.replaceChildren();
    for (const s of body.segments) {
      rows.appendChild(tr([
        cell(s.firstIndex, 'num'), cell(s.lastIndex, 'num'), cell(s.tier, 'tier-' + s.tier), rowsCell(s.estimatedRows),
        sizeCell(s.bytes), cell(s.table, 'json'), cell(s.createdAt),
      ], { first: s.firstIndex, last: s.lastIndex, table: s.table, bytes: s.bytes }));
    }
    if (body.segments.length === 0) rows.appendChild(tr([cell('no segments yet', 'empty')]));
    $('storage-detail').hidden = false;
    setStatus(body.segments.length + ' segment' + (body.segments.length === 1 ? '' : 's') + ', read ' + new Date().toLocaleTimeString());
  }

  async function load() {
    const read = ++reads;
    setStatus('loading...');
    try {
      const response = await fetch('/api/admin/segments', { headers: { authorization: 'Bearer ' + token() } });
      const text = await response.text();
      let body = null;
      try { body = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
      if (read !== reads) return;
      if (response.ok) return render(body);
      $('storage-detail').hidden = true;
      const message = response.status + ': ' + ((body && body.message) || response.statusText);
      if (response.status === 403 && body && body.code === 'missing_scope') {
        setStatus('The storage view needs a token with the admin scope; this one does not have it (' + message + '). The other views need only read.', true);
      } else setStatus(message, true);
    } catch (error) {
      if (read === reads) setStatus(String(error.message || error), true);
    }
  }

  function route() {
    if (isOpen()) load();
  }
  window.addEventListener('hashchange', route);
  $('save-token').addEventListener('click', route);
  $('storage-refresh').addEventListener('click', load);
  route();
})();
`;
