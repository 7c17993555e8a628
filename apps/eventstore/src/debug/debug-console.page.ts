import { SSE_READER_SCRIPT } from '../console/sse-reader.script.js';

/**
 * The debug console's page: plain HTML with inline script. EventSource cannot send an
 * Authorization header, so the page reads the stream with fetch and a streaming body
 * reader, parsed by the parser both consoles share (console/sse-reader.script.ts). Message
 * data is shown with textContent only (never parsed as HTML).
 */
export const DEBUG_CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Ordinal - live events</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2330; }
  h1 { font-size: 1.3rem; margin: 0 0 1rem; }
  form { display: flex; gap: .75rem; flex-wrap: wrap; align-items: end; margin-bottom: .75rem; }
  label { display: flex; flex-direction: column; font-size: .8rem; color: #555; }
  input { font: inherit; padding: .3rem .4rem; min-width: 12rem; }
  button { font: inherit; padding: .35rem .9rem; }
  #status { margin: .5rem 0; font-weight: 600; }
  #status.error { color: #b00020; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e3e6ea; vertical-align: top; }
  td.body { font-family: ui-monospace, monospace; font-size: .8rem; white-space: pre-wrap; word-break: break-all; }
  tr.fresh { background: #fff8d6; }
</style>
</head>
<body>
<h1>Ordinal &middot; live events</h1>
<form id="controls">
  <label>Token <input id="token" type="password" autocomplete="off" placeholder="Bearer token with the read scope"></label>
  <label>Types <input id="types" placeholder="OrderPlaced,OrderCancelled (empty: all)"></label>
  <label>From index <input id="start" inputmode="numeric" placeholder="empty: live from now"></label>
  <button id="connect" type="submit">Connect</button>
  <button id="disconnect" type="button" disabled>Disconnect</button>
</form>
<div id="status">disconnected</div>
<table>
  <thead><tr><th>Index</th><th>Type</th><th>User</th><th>Created</th><th>Body</th></tr></thead>
  <tbody id="messages"></tbody>
</table>
<script>
(() => {
  ${SSE_READER_SCRIPT}
  const MAX_ROWS = 500;
  const $ = (id) => document.getElementById(id);
  const state = { abort: null, lastIndex: 0, wanted: false, retry: null };
  $('token').value = sessionStorage.getItem('ordinal-token') || '';

  function setStatus(text, error) {
    $('status').textContent = text;
    $('status').className = error ? 'error' : '';
  }

  function cell(row, text, cls) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
  }

  function show(message, late) {
    const row = document.createElement('tr');
    row.dataset.index = String(message.id);
    row.dataset.type = message.messageType;
    row.className = late ? 'fresh late' : 'fresh';
    cell(row, String(message.id));
    cell(row, late ? message.messageType + ' (late)' : message.messageType);
    cell(row, message.userId == null ? '' : message.userId);
    cell(row, message.createdAt);
    cell(row, JSON.stringify(message.body), 'body');
    const body = $('messages');
    body.insertBefore(row, body.firstChild);
    setTimeout(() => row.classList.remove('fresh'), 1500);
    while (body.childElementCount > MAX_ROWS) body.removeChild(body.lastChild);
  }

  function handle({ event, data }) {
    if (event === 'connected') {
      setStatus('connected from ' + data.startIndex + ', server at ' + data.headIndex);
    } else if (event === 'message') {
      state.lastIndex = data.message.id;
      show(data.message, false);
    } else if (event === 'late-message') {
      show(data.message, true);
    } else if (event === 'heartbeat') {
      setStatus('connected, server at ' + data.headIndex + ', last shown ' + (state.lastIndex || 'none'));
    } else if (event === 'stream-ended') {
      state.wanted = false;
      setStatus('stream ended at ' + data.endIndex);
    }
  }

  async function headers() {
    return { authorization: 'Bearer ' + $('token').value.trim() };
  }

  async function errorText(response) {
    try { return (await response.json()).message; } catch { return response.statusText; }
  }

  async function startIndex() {
    if (state.lastIndex > 0) return state.lastIndex + 1;
    const typed = $('start').value.trim();
    if (typed !== '') return Number(typed);
    const response = await fetch('/api/events/head', { headers: await headers() });
    if (!response.ok) state.wanted = response.status >= 500;
    if (!response.ok) throw new Error(response.status + ': ' + (await errorText(response)));
    return (await response.json()).head + 1;
  }

  async function run() {
    const abort = new AbortController();
    state.abort = abort;
    try {
      const params = new URLSearchParams({ startIndex: String(await startIndex()) });
      const types = $('types').value.replace(/\\s+/g, '');
      if (types) params.set('types', types);
      setStatus('connecting...');
      const response = await fetch('/api/events/stream?' + params, { headers: await headers(), signal: abort.signal });
      if (!response.ok) {
        state.wanted = response.status >= 500;
        throw new Error(response.status + ': ' + (await errorText(response)));
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const events = sseReader(handle);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        events.push(decoder.decode(value, { stream: true }));
      }
      if (state.wanted) setStatus('connection closed by the server; reconnecting...');
    } catch (error) {
      if (abort.signal.aborted) return;
      setStatus(String(error.message || error), true);
    }
    if (state.wanted && state.abort === abort) state.retry = setTimeout(run, 2000);
    else if (!state.wanted) finish();
  }

  function finish() {
    $('connect').disabled = false;
    $('disconnect').disabled = true;
  }

  function stop() {
    state.wanted = false;
    clearTimeout(state.retry);
    if (state.abort) state.abort.abort();
    state.abort = null;
  }

  $('controls').addEventListener('submit', (e) => {
    e.preventDefault();
    stop();
    sessionStorage.setItem('ordinal-token', $('token').value.trim());
    state.lastIndex = 0;
    $('messages').replaceChildren();
    state.wanted = true;
    $('connect').disabled = true;
    $('disconnect').disabled = false;
    run();
  });
  $('disconnect').addEventListener('click', () => {
    stop();
    finish();
    setStatus('disconnected');
  });
  $('types').addEventListener('change', () => {
    if (state.wanted) $('controls').requestSubmit();
  });
})();
</script>
</body>
</html>
`;
