import { SSE_READER_SCRIPT } from '../console/sse-reader.script.js';

/**
 * The debug console's script, served at `/debug/events.js`. EventSource cannot send an
 * Authorization header, so it reads the stream with fetch and a streaming body reader, parsed
 * by the parser both consoles share (console/sse-reader.script.ts). Message data is shown with
 * textContent only (never parsed as HTML).
 */
export const DEBUG_CONSOLE_SCRIPT = `(() => {
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
`;
