/**
 * The debug console's page: plain HTML; its script is `/debug/events.js`
 * (debug-console.script.ts), so the page's Content-Security-Policy allows no inline script.
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
<script src="/debug/events.js"></script>
</body>
</html>
`;
