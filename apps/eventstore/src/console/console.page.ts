/**
 * The console's page: plain HTML and CSS, no build step. The scripts are `/console/console.js`
 * (console.script.ts), `/console/dashboard.js` and `/console/storage.js`. Every value from the server is shown with textContent, never as HTML.
 */
export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Ordinal console</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { --ink: #1d2330; --muted: #5b6474; --line: #e3e6ea; --accent: #2456c7; --bad: #b00020; --warn: #8a5a00; --bg: #f6f7f9; }
  * { box-sizing: border-box; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: var(--ink); background: #fff; }
  header { display: flex; gap: 1.5rem; align-items: center; flex-wrap: wrap; padding: .7rem 1.5rem; background: var(--ink); color: #fff; }
  header h1 { font-size: 1.1rem; margin: 0; letter-spacing: .02em; }
  header nav a { color: #cfd8ea; text-decoration: none; margin-right: 1rem; padding-bottom: .15rem; }
  header nav a.active { color: #fff; border-bottom: 2px solid #8fb0ff; }
  header .auth { margin-left: auto; display: flex; gap: .5rem; align-items: center; }
  header input { font: inherit; padding: .25rem .4rem; width: 16rem; }
  #summary { padding: .45rem 1.5rem; background: var(--bg); border-bottom: 1px solid var(--line); color: var(--muted); }
  #summary b { color: var(--ink); }
  main { padding: 1rem 1.5rem 2rem; }
  section[hidden] { display: none; }
  h2 { font-size: 1.05rem; margin: .2rem 0 .8rem; }
  h3 { font-size: .95rem; margin: 1.2rem 0 .5rem; }
  form.bar { display: flex; gap: .75rem; flex-wrap: wrap; align-items: end; margin-bottom: .75rem; }
  label { display: flex; flex-direction: column; font-size: .78rem; color: var(--muted); }
  form.bar input { font: inherit; padding: .3rem .4rem; min-width: 11rem; }
  button { font: inherit; padding: .3rem .9rem; cursor: pointer; }
  .status { margin: .4rem 0; font-weight: 600; }
  .error { color: var(--bad); }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .25rem .55rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { font-size: .78rem; color: var(--muted); font-weight: 600; }
  td.num { font-variant-numeric: tabular-nums; }
  td.json, pre { font-family: ui-monospace, monospace; font-size: .8rem; white-space: pre-wrap; word-break: break-all; }
  pre { background: var(--bg); padding: .6rem .8rem; border-radius: 4px; margin: 0; }
  tr.fresh { background: #fff8d6; }
  tr.link { cursor: pointer; }
  tr.link:hover { background: #eef3ff; }
  a { color: var(--accent); }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1.2rem; margin: 0 0 1rem; }
  dl.facts dt { color: var(--muted); }
  dl.facts dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
  .state-running, .state-live, .tier-hot { color: #1a7f37; font-weight: 600; }
  .state-failed, .state-disconnected { color: var(--bad); font-weight: 600; }
  .state-catching-up, .state-rebuilding, .state-retrying, .state-starting { color: var(--warn); font-weight: 600; }
  .hole { padding: .6rem .8rem; border-left: 4px solid var(--warn); background: #fff8e6; margin: .5rem 0 1rem; }
  .hole.none { border-color: #1a7f37; background: #effaf1; }
  .empty { color: var(--muted); font-style: italic; }
  tr.current { background: #eef3ff; font-weight: 600; }
  svg.chart { display: block; width: 100%; max-width: 960px; height: auto; margin-bottom: .4rem; }
  #dashboard-figures { margin: .2rem 0 .6rem; font-style: normal; }
</style>
</head>
<body>
<header>
  <h1>Ordinal</h1>
  <nav>
    <a href="#tail" data-view="tail">Live tail</a>
    <a href="#message" data-view="message">Message</a>
    <a href="#stream" data-view="stream">Streams</a>
    <a href="#consumers" data-view="consumers">Projections, interfaces &amp; groups</a>
    <a href="#dashboard" data-view="dashboard">Dashboard</a>
    <a href="#storage" data-view="storage">Storage</a>
  </nav>
  <div class="auth">
    <input id="token" type="password" autocomplete="off" placeholder="Bearer token (read scope)">
    <button id="save-token" type="button">Use token</button>
  </div>
</header>
<div id="summary">head <b id="head">?</b> &middot; safe head <b id="safe-head">?</b> &middot; ordering <b id="ordering">?</b> &middot; <span id="summary-status">not loaded</span></div>
<main>
<section id="view-tail">
  <h2>Live tail</h2>
  <form class="bar" id="tail-form">
    <label>Types <input id="tail-types" placeholder="OrderPlaced,OrderCancelled (empty: all)"></label>
    <label>User <input id="tail-user" placeholder="only this userId"></label>
    <label>From index <input id="tail-from" inputmode="numeric" placeholder="empty: the last 50, then live"></label>
    <button id="tail-connect" type="submit">Connect</button>
    <button id="tail-disconnect" type="button" disabled>Disconnect</button>
  </form>
  <div class="status" id="tail-status">disconnected</div>
  <table>
    <thead><tr><th>Index</th><th>Type</th><th>User</th><th>Stream</th><th>Created</th><th>Body</th></tr></thead>
    <tbody id="tail-rows"></tbody>
  </table>
</section>
<section id="view-message" hidden>
  <h2>Message</h2>
  <form class="bar" id="message-form">
    <label>Index <input id="message-index" inputmode="numeric" placeholder="e.g. 42"></label>
    <button type="submit">Show</button>
  </form>
  <div class="status" id="message-status"></div>
  <div id="message-detail" hidden>
    <dl class="facts" id="message-facts"></dl>
    <h3>Body</h3><pre id="message-body"></pre>
    <h3>Metadata</h3><pre id="message-metadata"></pre>
    <h3>Chain <span class="empty" id="chain-note"></span></h3>
    <table><thead><tr><th>Index</th><th>Type</th><th>Caused by</th><th>Stream</th><th>Created</th></tr></thead><tbody id="message-chain"></tbody></table>
  </div>
</section>
<section id="view-stream" hidden>
  <h2>Stream browser</h2>
  <form class="bar" id="stream-form">
    <label>Stream id <input id="stream-id" placeholder="e.g. order-1001"></label>
    <label>Tenant <input id="stream-tenant-input" placeholder="none (needs the tenants scope)"></label>
    <button type="submit">Open</button>
  </form>
  <div class="status" id="stream-status"></div>
  <div id="stream-list-box">
    <form class="bar" id="stream-list-form">
      <label>Streams starting with <input id="stream-prefix" placeholder="e.g. order-"></label>
      <button type="submit">List</button>
    </form>
    <table>
      <thead><tr><th>Stream</th><th>Version</th><th>Last append</th></tr></thead>
      <tbody id="stream-list"></tbody>
    </table>
    <button type="button" id="stream-more" hidden>More</button>
    <div class="status" id="stream-list-status"></div>
  </div>
  <div id="stream-detail" hidden>
    <dl class="facts"><dt>Stream</dt><dd id="stream-name"></dd><dt id="stream-tenant-label" hidden>Tenant</dt><dd id="stream-tenant" hidden></dd><dt>Version</dt><dd id="stream-version"></dd><dt>Category</dt><dd id="stream-category"></dd><dt>State</dt><dd id="stream-state"></dd><dt>Metadata</dt><dd id="stream-metadata"></dd></dl>
    <h3>Snapshot</h3><div id="stream-snapshot"></div>
    <h3>Events</h3>
    <table>
      <thead><tr><th>Version</th><th>Index</th><th>Type</th><th>Schema</th><th>Created</th><th>Data</th></tr></thead>
      <tbody id="stream-events"></tbody>
    </table>
  </div>
</section>
<section id="view-consumers" hidden>
  <h2>Projections and subscriptions</h2>
  <div class="status" id="consumers-status"></div>
  <div id="hole" class="hole none">no hole held</div>
  <table>
    <thead><tr><th>Name</th><th>Kind</th><th>Stream</th><th>Position</th><th>Head</th><th>Lag</th><th>State</th><th>Owner</th><th>Standbys</th><th>Last error</th></tr></thead>
    <tbody id="projection-rows"></tbody>
  </table>
  <h3>Push interfaces <span id="amqp-state" class="empty"></span></h3>
  <table>
    <thead><tr><th>Name</th><th>Type</th><th>Bookmark</th><th>Position</th><th>Lag</th><th>State</th><th>Published</th><th>Last error</th></tr></thead>
    <tbody id="interface-rows"></tbody>
  </table>
  <h3>Scavenge</h3>
  <div id="scavenge" class="empty">never run</div>
  <h3>Consumer groups</h3>
  <table>
    <thead><tr><th>Group</th><th>Strategy</th><th>State</th><th>Members</th><th>Checkpoint</th><th>Lag</th><th>In flight</th><th>Ready</th><th>Parked</th></tr></thead>
    <tbody id="group-rows"></tbody>
  </table>
</section>
<section id="view-dashboard" hidden>
  <h2>Dashboard</h2>
  <div class="status" id="dashboard-status"></div>
  <div id="dashboard-figures" class="empty">no samples yet</div>
  <h3>Ingest rate (messages per second)</h3>
  <svg id="chart-rate" class="chart" role="img" aria-label="ingest rate"></svg>
  <h3>Head and safe head, with the held hole</h3>
  <svg id="chart-head" class="chart" role="img" aria-label="head and safe head"></svg>
  <h3>Consumer lag (messages behind the safe head)</h3>
  <svg id="chart-lag" class="chart" role="img" aria-label="consumer lag"></svg>
</section>
<section id="view-storage" hidden>
  <h2>Storage</h2>
  <form class="bar"><button id="storage-refresh" type="button">Refresh</button></form>
  <div class="status" id="storage-status"></div>
  <div id="storage-detail" hidden>
    <p id="storage-size"></p>
    <h3>Totals by tier</h3>
    <table>
      <thead><tr><th>Tier</th><th>Segments</th><th>Estimated rows</th><th>Size</th></tr></thead>
      <tbody id="storage-totals"></tbody>
    </table>
    <h3>Segments, oldest first</h3>
    <table>
      <thead><tr><th>First index</th><th>Last index</th><th>Tier</th><th>Estimated rows</th><th>Size</th><th>Table</th><th>Created</th></tr></thead>
      <tbody id="storage-rows"></tbody>
    </table>
  </div>
</section>
</main>
<script src="/console/console.js"></script>
<script src="/console/dashboard.js"></script>
<script src="/console/storage.js"></script>
</body>
</html>
`;
