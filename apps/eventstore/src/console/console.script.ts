import { SSE_READER_SCRIPT } from './sse-reader.script.js';

/**
 * The console's script, served at `/console/console.js`: hash-routed views (live tail,
 * message detail, stream browser, projections and interfaces; the dashboard and the storage
 * view have scripts of their own) over the JSON API, with the token from the header field or
 * the address's `#token=` fragment (kept in sessionStorage). Plain browser JavaScript, no build.
 * Written with String.raw so the backslashes below reach the browser as written. The stream's
 * parser is the one both consoles share (sse-reader.script.ts).
 */
export const CONSOLE_SCRIPT = String.raw`(() => {
  'use strict';
  ${SSE_READER_SCRIPT}
  const $ = (id) => document.getElementById(id);
  const MAX_ROWS = 500;
  const state = { view: null, tail: { abort: null, wanted: false, retry: null, lastIndex: 0 }, refresh: null, streamsNext: null };

  // A token given in the fragment (the link the server prints: /console#token=…) is kept in
  // the tab's sessionStorage and taken out of the address bar and the history at once; the
  // browser never sends a fragment to the server.
  const given = /^#token=([^&]*)$/.exec(location.hash);
  if (given) {
    sessionStorage.setItem('ordinal-token', decodeURIComponent(given[1]).trim());
    history.replaceState(null, '', location.pathname + location.search + '#tail');
  }
  $('token').value = sessionStorage.getItem('ordinal-token') || '';
  const token = () => $('token').value.trim();

  /**
   * The request's headers: the token, and Ordinal-Tenant when it reads a tenant's stream
   * (docs/tenants.md; the server answers 403 tenant_forbidden to a token without the tenants scope).
   */
  function headers(tenant) {
    const h = { authorization: 'Bearer ' + token() };
    if (tenant) h['ordinal-tenant'] = tenant;
    return h;
  }
  async function api(path, tenant) {
    const response = await fetch(path, { headers: headers(tenant) });
    const text = await response.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch { body = text; }
    if (!response.ok) throw new Error(response.status + ': ' + ((body && body.message) || response.statusText));
    return body;
  }

  /** A JSON read that answers its status instead of throwing (the stream page reads 404 and 410 as states). */
  async function apiRaw(path, tenant) {
    const response = await fetch(path, { headers: headers(tenant) });
    const text = await response.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch { body = text; }
    return { status: response.status, ok: response.ok, body };
  }

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function link(text, hash) {
    const a = el('a', text);
    a.href = hash;
    return a;
  }
  function row(cells) {
    const tr = document.createElement('tr');
    for (const c of cells) {
      const td = document.createElement('td');
      if (c instanceof Node) td.appendChild(c);
      else if (c && typeof c === 'object' && 'text' in c) { td.textContent = c.text == null ? '' : String(c.text); if (c.cls) td.className = c.cls; }
      else td.textContent = c == null ? '' : String(c);
      tr.appendChild(td);
    }
    return tr;
  }
  function setStatus(id, text, error) {
    $(id).textContent = text;
    $(id).className = 'status' + (error ? ' error' : '');
  }
  const json = (value) => JSON.stringify(value, null, 2);
  // A stream's page: #stream/order-1 for a stream of no tenant, #stream/order-1?tenant=acme for
  // tenant acme's order-1 (docs/tenants.md: two streams). The id is encoded, so a '?' in the
  // fragment is always the query's.
  const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_.]{0,62}$/;
  const streamHash = (streamId, tenant) => '#stream/' + encodeURIComponent(streamId) + (tenant ? '?tenant=' + encodeURIComponent(tenant) : '');
  const streamText = (m, between) => m.streamId + between + m.streamVersion + (m.tenant ? ' (tenant ' + m.tenant + ')' : '');

  // Summary line: head, safe head, ordering
  async function summary() {
    try {
      const [head, projections] = await Promise.all([api('/api/events/head'), api('/api/projections')]);
      $('head').textContent = String(head.head);
      $('safe-head').textContent = String(projections.watermark.position);
      $('ordering').textContent = projections.watermark.ordering;
      setStatus('summary-status', 'up to date ' + new Date().toLocaleTimeString());
      $('summary-status').className = '';
      return projections;
    } catch (error) {
      $('summary-status').textContent = String(error.message || error);
      $('summary-status').className = 'error';
      return null;
    }
  }

  // Live tail
  function showMessage(message, late) {
    const user = $('tail-user').value.trim();
    if (user && message.userId !== user) return;
    const tr = row([
      link(String(message.id), '#message/' + message.id),
      late ? message.messageType + ' (late)' : message.messageType,
      message.userId,
      message.streamId ? link(streamText(message, '@'), streamHash(message.streamId, message.tenant)) : '',
      message.createdAt,
      { text: JSON.stringify(message.body), cls: 'json' },
    ]);
    tr.dataset.index = String(message.id);
    tr.dataset.type = message.messageType;
    tr.className = 'fresh';
    const body = $('tail-rows');
    body.insertBefore(tr, body.firstChild);
    setTimeout(() => tr.classList.remove('fresh'), 1500);
    while (body.childElementCount > MAX_ROWS) body.removeChild(body.lastChild);
  }
  // A hidden or erased message's position (docs/lifecycle.md): its kept fields and why.
  function showTombstone(t) {
    if ($('tail-user').value.trim()) return;
    const tr = row([
      link(String(t.id), '#message/' + t.id),
      t.messageType + ' (tombstone: ' + t.tombstone.reason + ')',
      '',
      t.streamId ? link(streamText(t, '@'), streamHash(t.streamId, t.tenant)) : '',
      t.createdAt,
      { text: '', cls: 'json' },
    ]);
    tr.dataset.index = String(t.id);
    tr.dataset.type = t.messageType;
    tr.dataset.tombstone = t.tombstone.reason;
    const body = $('tail-rows');
    body.insertBefore(tr, body.firstChild);
    while (body.childElementCount > MAX_ROWS) body.removeChild(body.lastChild);
  }
  function onEvent({ event, data }) {
    const t = state.tail;
    if (event === 'tombstone') { t.lastIndex = data.tombstone.id; showTombstone(data.tombstone); return; }
    if (event === 'connected') setStatus('tail-status', 'connected from ' + data.startIndex + ', server at ' + data.headIndex);
    else if (event === 'message') { t.lastIndex = data.message.id; showMessage(data.message, false); }
    else if (event === 'late-message') showMessage(data.message, true);
    else if (event === 'heartbeat') setStatus('tail-status', 'connected, server at ' + data.headIndex + ', last shown ' + (t.lastIndex || 'none'));
    else if (event === 'stream-ended') { t.wanted = false; setStatus('tail-status', 'stream ended at ' + data.endIndex); }
  }
  async function tailStart() {
    const t = state.tail;
    if (t.lastIndex > 0) return t.lastIndex + 1;
    const typed = $('tail-from').value.trim();
    if (typed !== '') return Math.max(1, Number(typed));
    const head = await api('/api/events/head');
    return Math.max(1, head.head - 49);
  }
  async function tailRun() {
    const t = state.tail;
    const abort = new AbortController();
    t.abort = abort;
    try {
      const params = new URLSearchParams({ startIndex: String(await tailStart()) });
      const types = $('tail-types').value.replace(/\s+/g, '');
      if (types) params.set('types', types);
      setStatus('tail-status', 'connecting...');
      const response = await fetch('/api/events/stream?' + params, { headers: { authorization: 'Bearer ' + token(), accept: 'text/event-stream' }, signal: abort.signal });
      if (!response.ok) {
        t.wanted = response.status >= 500;
        let message = response.statusText;
        try { message = (await response.json()).message; } catch { /* not JSON */ }
        throw new Error(response.status + ': ' + message);
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const events = sseReader(onEvent);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        events.push(decoder.decode(value, { stream: true }));
      }
      if (t.wanted) setStatus('tail-status', 'connection closed by the server; reconnecting...');
    } catch (error) {
      if (abort.signal.aborted) return;
      setStatus('tail-status', String(error.message || error), true);
      if (/^40[13]/.test(String(error.message))) t.wanted = false;
    }
    if (t.wanted && t.abort === abort) t.retry = setTimeout(tailRun, 2000);
    else if (!t.wanted) tailButtons(false);
  }
  function tailButtons(running) {
    $('tail-connect').disabled = running;
    $('tail-disconnect').disabled = !running;
  }
  function tailStop() {
    const t = state.tail;
    t.wanted = false;
    clearTimeout(t.retry);
    if (t.abort) t.abort.abort();
    t.abort = null;
  }
  function tailConnect() {
    tailStop();
    state.tail.lastIndex = 0;
    $('tail-rows').replaceChildren();
    state.tail.wanted = true;
    tailButtons(true);
    tailRun();
  }

  // Message detail
  async function showMessageDetail(index) {
    $('message-index').value = index;
    $('message-detail').hidden = true;
    if (!index) return setStatus('message-status', 'Type an index, or click one in the live tail');
    setStatus('message-status', 'loading...');
    try {
      const m = await api('/api/events/' + encodeURIComponent(index));
      const facts = $('message-facts');
      facts.replaceChildren();
      const fact = (name, value) => { facts.appendChild(el('dt', name)); const dd = el('dd'); if (value instanceof Node) dd.appendChild(value); else dd.textContent = value == null ? '-' : String(value); facts.appendChild(dd); };
      fact('Index', m.id);
      fact('Type', m.messageType);
      fact('User', m.userId);
      // A tenant's message (docs/tenants.md): its stream id and key are that tenant's names, and
      // its stream link opens the tenant's stream.
      fact('Stream', m.streamId ? link(m.streamId + ' @ version ' + m.streamVersion, streamHash(m.streamId, m.tenant)) : null);
      if (m.tenant) fact('Tenant', m.tenant);
      fact('Created', m.createdAt);
      fact('Content hash', m.contentHash);
      fact('Schema version', m.schemaVersion == null ? 1 : m.schemaVersion);
      fact('Idempotency key', m.idempotencyKey);
      fact('Correlation', m.correlationId);
      fact('Caused by', m.causationId && /^[0-9]+$/.test(m.causationId) ? link('message ' + m.causationId, '#message/' + m.causationId) : m.causationId);
      fact('Trace parent', m.traceparent);
      $('message-body').textContent = json(m.body);
      $('message-metadata').textContent = m.metadata == null ? 'none' : json(m.metadata);
      $('message-detail').hidden = false;
      setStatus('message-status', '');
      await showChain(m);
    } catch (error) {
      setStatus('message-status', String(error.message || error), true);
    }
  }

  // The correlation's messages in index order, each under the message that caused it.
  async function showChain(m) {
    const body = $('message-chain');
    body.replaceChildren();
    $('chain-note').textContent = '';
    if (!m.correlationId) { $('chain-note').textContent = '(stored before correlation ids)'; return; }
    const page = await api('/api/events?limit=1000&correlationId=' + encodeURIComponent(m.correlationId));
    const depth = new Map();
    for (const c of page.messages) {
      const parent = c.causationId && /^[0-9]+$/.test(c.causationId) ? Number(c.causationId) : null;
      depth.set(c.id, parent !== null && depth.has(parent) ? depth.get(parent) + 1 : 0);
      const indent = '\u00a0\u00a0'.repeat(depth.get(c.id)) + (depth.get(c.id) > 0 ? '\u21b3 ' : '');
      const tr = row([
        link(indent + c.id, '#message/' + c.id),
        { text: c.messageType },
        parent !== null ? link(String(parent), '#message/' + parent) : el('span', c.causationId || '-'),
        c.streamId ? link(streamText(c, ' @ '), streamHash(c.streamId, c.tenant)) : el('span', '-'),
        { text: c.createdAt },
      ]);
      tr.dataset.index = String(c.id);
      if (c.id === m.id) tr.classList.add('current');
      body.appendChild(tr);
    }
    $('chain-note').textContent = '(correlation ' + m.correlationId + ': ' + page.count + ' message' + (page.count === 1 ? '' : 's') + (page.count === 1000 ? ', the first 1000' : '') + ')';
  }

  // Stream browser: a list of streams (GET /api/streams, a page at a time), or one stream
  async function listStreams(more) {
    const prefix = $('stream-prefix').value.trim();
    const rows = $('stream-list');
    if (!more) { rows.replaceChildren(); state.streamsNext = null; }
    setStatus('stream-list-status', 'loading...');
    try {
      const params = new URLSearchParams({ limit: '100' });
      if (prefix) params.set('prefix', prefix);
      if (more && state.streamsNext) params.set('after', state.streamsNext);
      const page = await api('/api/streams?' + params);
      // A principal of no tenant lists every tenant's streams too, each with its tenant.
      for (const s of page.streams) rows.appendChild(row([link(s.streamId + (s.tenant ? ' (tenant ' + s.tenant + ')' : ''), streamHash(s.streamId, s.tenant)), { text: s.version, cls: 'num' }, s.updatedAt]));
      if (!more && page.streams.length === 0) rows.appendChild(row([{ text: prefix ? 'no stream starts with ' + prefix : 'no streams yet', cls: 'empty' }]));
      state.streamsNext = page.next || null;
      $('stream-more').hidden = !state.streamsNext;
      setStatus('stream-list-status', rows.querySelectorAll('a').length + ' stream(s)' + (state.streamsNext ? ', more after ' + state.streamsNext : ''));
    } catch (error) {
      setStatus('stream-list-status', String(error.message || error), true);
    }
  }

  /** One stream's page; tenant: the tenant whose stream it is, sent as Ordinal-Tenant on every read. */
  async function showStream(id, tenant) {
    $('stream-id').value = id;
    $('stream-tenant-input').value = tenant || '';
    $('stream-detail').hidden = true;
    $('stream-list-box').hidden = Boolean(id);
    if (!id) {
      setStatus('stream-status', 'Pick a stream below, type its id (category-id), or click one in a message');
      return listStreams(false);
    }
    setStatus('stream-status', 'loading...');
    try {
      if (tenant && !TENANT_ID.test(tenant)) throw new Error("'" + tenant + "' is not a tenant id (1-63 letters, digits, '_' or '.', starting with a letter or digit)");
      const path = '/api/streams/' + encodeURIComponent(id);
      // Its state (docs/lifecycle.md): tombstoned answers 410 everywhere, deleted reads 404 stream_deleted.
      const meta = await apiRaw(path + '/metadata', tenant);
      // A refusal of the tenant (403 tenant_forbidden: no tenants scope) is the page's answer.
      if (meta.status === 400 || meta.status === 401 || meta.status === 403) throw new Error(meta.status + ': ' + ((meta.body && meta.body.message) || 'refused'));
      const read = meta.status === 410 ? meta : await apiRaw(path + '?snapshot=false&limit=1000', tenant);
      const gone = read.status === 410 || (read.status === 404 && read.body && read.body.code === 'stream_deleted');
      if (!read.ok && !gone) throw new Error(read.status + ': ' + ((read.body && read.body.message) || 'failed'));
      const s = gone ? { streamId: id, version: read.body.lastVersion || 0, events: [], count: 0 } : read.body;
      const snap = gone ? null : (await api(path + '/snapshot', tenant)).snapshot;
      $('stream-name').textContent = s.streamId;
      $('stream-tenant').textContent = tenant || '';
      $('stream-tenant').hidden = $('stream-tenant-label').hidden = !tenant;
      $('stream-version').textContent = String(s.version);
      $('stream-category').textContent = s.streamId.split('-')[0];
      $('stream-state').textContent = read.status === 410 ? 'tombstoned (for ever)'
        : gone ? 'deleted at version ' + read.body.lastVersion + ' (an append with no_stream re-creates it)'
        : 'live' + (s.hidden ? ', versions below ' + s.hidden.beforeVersion + ' hidden (' + s.hidden.reason + ')' : '');
      const m = meta.ok ? meta.body : null;
      $('stream-metadata').textContent = m && m.metadataVersion > 0
        ? JSON.stringify({ maxAge: m.maxAge, maxCount: m.maxCount, truncateBefore: m.truncateBefore, custom: m.custom }) + ' (version ' + m.metadataVersion + ')'
        : 'none';
      const box = $('stream-snapshot');
      box.replaceChildren();
      if (snap) {
        box.appendChild(el('div', 'at version ' + snap.version + (snap.createdAt ? ', saved ' + snap.createdAt : '')));
        box.appendChild(el('pre', json(snap.state)));
      } else box.appendChild(el('div', 'none', 'empty'));
      const rows = $('stream-events');
      rows.replaceChildren();
      for (const e of s.events) rows.appendChild(row([e.version, link(String(e.index), '#message/' + e.index), e.eventType, e.schemaVersion, e.createdAt, { text: JSON.stringify(e.data), cls: 'json' }]));
      if (s.events.length === 0) rows.appendChild(row([{ text: 'no events', cls: 'empty' }]));
      $('stream-detail').hidden = false;
      setStatus('stream-status', s.count + ' event(s)');
    } catch (error) {
      setStatus('stream-status', String(error.message || error), true);
    }
  }

  // Projections, subscriptions, interfaces, the held hole
  const stateCell = (s) => ({ text: s, cls: 'state-' + s });
  const processText = (p) => (p.pid === null || p.pid === undefined ? p.id : p.pid + '@' + p.host) + (p.self ? ' (this server)' : '');
  // A partitioned projection has an owner per partition: name them all.
  const ownerText = (c) => {
    if (c.partitions) return [...new Set(c.partitions.filter((p) => p.owner).map((p) => processText(p.owner)))].join(', ') || null;
    if (!c.owner) return null;
    return processText(c.owner) + ', heartbeat ' + c.owner.heartbeatAgeMs + ' ms ago' + (c.owner.stale ? ' (overdue)' : '');
  };
  const standbysText = (list) => (list && list.length ? list.map(processText).join(', ') : null);
  async function showConsumers() {
    try {
      const [projections, interfaces, scavenge] = await Promise.all([api('/api/projections'), api('/api/interfaces'), api('/api/admin/scavenge?limit=1')]);
      // The scavenge (docs/lifecycle.md): the run going on here, else the newest one.
      const run = scavenge.running || scavenge.runs[0];
      $('scavenge').textContent = !run ? 'never run'
        : 'run ' + run.id + ' ' + (scavenge.running ? 'running: index ' + run.position + ' of ' + run.through : run.status + (run.finishedAt ? ' ' + run.finishedAt : '') + (run.status === 'running' ? ' (stopped at ' + run.position + ' of ' + run.through + '; run it again to resume)' : '')) +
          ', ' + run.rowsErased + ' rows erased, ' + run.bytesFreed + ' bytes freed';
      const hole = projections.watermark.heldHole;
      const box = $('hole');
      if (hole) {
        const w = hole.oldestWriter;
        box.className = 'hole';
        box.textContent = 'Hole held at ' + hole.from + (hole.to !== hole.from ? '..' + hole.to : '') + ' for ' + hole.heldMs + ' ms by ' + hole.writers + ' open writer(s)' +
          (w ? '; oldest: pid ' + w.pid + ' (' + (w.applicationName || 'no application_name') + '), transaction since ' + w.xactStart : '') +
          '. Readers wait here up to ' + projections.watermark.gapTimeoutMs + ' ms.';
      } else {
        box.className = 'hole none';
        box.textContent = 'No hole held (' + projections.watermark.ordering + ' ordering, safe head ' + projections.watermark.position + ')';
      }
      const prow = $('projection-rows');
      prow.replaceChildren();
      // A build of a versioned projection says its version and state (candidate, serving, previous, retired).
      const versionText = (p) => p.versionState && !(p.versionState === 'serving' && (p.version ?? 1) === 1 && (p.build ?? 1) <= 1) ? p.name + ' [v' + p.version + (p.build > 1 ? ' build ' + p.build : '') + ' ' + p.versionState + ']' : p.name;
      for (const p of projections.projections) prow.appendChild(row([versionText(p), p.kind, p.stream, { text: p.position, cls: 'num' }, { text: p.head, cls: 'num' }, { text: p.lag, cls: 'num' }, stateCell(p.state), ownerText(p), standbysText(p.standbys), p.lastError]));
      if (projections.projections.length === 0) prow.appendChild(row([{ text: 'none in this server', cls: 'empty' }]));
      $('amqp-state').textContent = interfaces.amqp ? '(broker ' + interfaces.broker + ')' : '(AMQP is off)';
      const irow = $('interface-rows');
      irow.replaceChildren();
      for (const i of interfaces.interfaces) irow.appendChild(row([i.name, i.type, { text: i.bookmark, cls: 'num' }, { text: i.position, cls: 'num' }, { text: i.lag, cls: 'num' }, stateCell(i.state), { text: i.published, cls: 'num' }, i.lastError]));
      if (interfaces.interfaces.length === 0) irow.appendChild(row([{ text: 'none configured', cls: 'empty' }]));
      const groups = (await api('/api/consumer-groups')).groups;
      const grow = $('group-rows');
      grow.replaceChildren();
      for (const g of groups) {
        const alive = g.members.filter((m) => m.alive);
        const members = alive.length + ' live' + (alive.length ? ': ' + alive.map((m) => m.memberId + ' (' + m.inFlight + ')').join(', ') : '');
        grow.appendChild(row([g.group, g.definition.strategy, stateCell(g.state), members, { text: g.checkpoint, cls: 'num' }, { text: g.lag, cls: 'num' }, { text: g.inFlight, cls: 'num' }, { text: g.ready, cls: 'num' }, { text: g.parked, cls: 'num' }]));
      }
      if (groups.length === 0) grow.appendChild(row([{ text: 'none defined', cls: 'empty' }]));
      setStatus('consumers-status', 'refreshed ' + new Date().toLocaleTimeString());
    } catch (error) {
      setStatus('consumers-status', String(error.message || error), true);
    }
  }

  // Routing: #tail, #message/42, #stream/order-1, #stream/order-1?tenant=acme, #consumers
  function route() {
    const hash = location.hash.slice(1) || 'tail';
    const q = hash.indexOf('?');
    const query = new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
    const [view, ...rest] = (q < 0 ? hash : hash.slice(0, q)).split('/');
    const arg = decodeURIComponent(rest.join('/'));
    // (#dashboard and #storage: dashboard.js and storage.js draw them)
    const views = ['tail', 'message', 'stream', 'consumers', 'dashboard', 'storage'];
    const known = views.includes(view) ? view : 'tail';
    for (const name of views) $('view-' + name).hidden = name !== known;
    for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.dataset.view === known);
    clearInterval(state.refresh);
    state.view = known;
    if (known === 'message') showMessageDetail(arg);
    else if (known === 'stream') showStream(arg, query.get('tenant') || '');
    else if (known === 'consumers') { showConsumers(); state.refresh = setInterval(showConsumers, 2000); }
    else if (known === 'tail' && !state.tail.wanted && token()) tailConnect();
  }

  $('tail-form').addEventListener('submit', (e) => { e.preventDefault(); tailConnect(); });
  $('tail-disconnect').addEventListener('click', () => { tailStop(); tailButtons(false); setStatus('tail-status', 'disconnected'); });
  $('tail-types').addEventListener('change', () => { if (state.tail.wanted) tailConnect(); });
  $('message-form').addEventListener('submit', (e) => { e.preventDefault(); location.hash = '#message/' + $('message-index').value.trim(); });
  $('stream-list-form').addEventListener('submit', (e) => { e.preventDefault(); listStreams(false); });
  $('stream-more').addEventListener('click', () => listStreams(true));
  $('stream-form').addEventListener('submit', (e) => { e.preventDefault(); location.hash = streamHash($('stream-id').value.trim(), $('stream-tenant-input').value.trim()); });
  $('save-token').addEventListener('click', () => {
    sessionStorage.setItem('ordinal-token', token());
    summary();
    if (state.view === 'tail') tailConnect();
    else route();
  });
  window.addEventListener('hashchange', route);
  summary();
  setInterval(summary, 5000);
  route();
})();
`;
