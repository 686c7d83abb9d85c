/**
 * The live inspector's one page: inline CSS, inline script (with the response's CSP nonce) and the
 * project's diagrams inlined, so it loads nothing but its own event channel.
 */
import type { Diagram } from "./diagrams.js";
import { PAGE_SCRIPT } from "./page-script.js";

const STYLE = `
:root { --accent: #d9480f; --accent-soft: #fff4e6; --line: #d9e2ec; --dim: #616e7c; font: 13px/1.4 system-ui, sans-serif; color: #1f2933; }
body { margin: 0; display: grid; grid-template-columns: 300px 1fr 420px; grid-template-rows: auto 1fr; height: 100vh; }
header { grid-column: 1 / -1; display: flex; gap: 12px; align-items: center; padding: 6px 12px; border-bottom: 1px solid var(--line); }
header h1 { font-size: 15px; margin: 0; }
header small { color: var(--dim); }
aside, main, section { overflow: auto; padding: 8px; }
aside { border-right: 1px solid var(--line); display: flex; flex-direction: column; gap: 6px; }
section { border-left: 1px solid var(--line); }
h2 { font-size: 12px; text-transform: uppercase; color: var(--dim); margin: 6px 0 2px; }
ul { list-style: none; margin: 0; padding: 0 0 0 12px; }
#sessions, #actors > ul, #log { padding-left: 0; }
li.selected > span, li.selected > b, #log li.selected { background: var(--accent-soft); }
#sessions li, #log li, #actors .name { cursor: pointer; }
#actors li.done > .name, #actors li.stopped > .name { color: var(--dim); }
#actors li.active > .name { font-weight: bold; }
#log { max-height: 40vh; overflow: auto; font-family: ui-monospace, monospace; font-size: 11px; }
#context { max-height: 45vh; overflow: auto; font-size: 11px; white-space: pre-wrap; word-break: break-all; }
.chart { border: 1px solid var(--line); margin-bottom: 8px; overflow: auto; max-height: 80vh; }
#fork label { display: block; margin: 4px 0; }
#fork select, #fork textarea { width: 100%; box-sizing: border-box; }
#forks li { cursor: pointer; }
#approvals button { margin-left: 4px; }
#compare table { border-collapse: collapse; width: 100%; font-size: 11px; }
#compare td, #compare th { border: 1px solid var(--line); padding: 2px 4px; vertical-align: top; word-break: break-word; }
#compare tr.diverged td { background: #ffd8a8; border-top: 2px solid var(--accent); }
#compare tr.after td.fork { background: var(--accent-soft); }
.chart-state { padding: 2px 6px; color: var(--accent); font-weight: bold; }
.chart g.node.active > path, .chart g.node.active > polygon, .chart g.node.active > ellipse { stroke: var(--accent); stroke-width: 2.5px; }
.chart g.node.active-leaf > path, .chart g.node.active-leaf > polygon { fill: #ffd8a8; stroke: var(--accent); stroke-width: 3px; }
.chart g.node.active-leaf text { font-weight: bold; }
.chart g.cluster.active > path, .chart g.cluster.active > polygon { stroke: var(--accent); stroke-width: 2.5px; fill: var(--accent-soft); }
`;

export function renderPage({ nonce, diagrams, actionToken }: { nonce: string; diagrams: readonly Diagram[]; actionToken: string }): string {
  const charts = diagrams
    .map((diagram) => `<div class="chart" data-machine="${diagram.machine}" hidden><div class="chart-state"></div>${diagram.svg}</div>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="inspector-token" content="${actionToken}"><title>xstate-agent-loop live inspector</title>
<style nonce="${nonce}">${STYLE}</style></head>
<body>
<header><h1>Live inspector</h1><small id="connection">connecting…</small><small id="mode">live</small><button id="live" type="button">follow live</button></header>
<aside><h2>Sessions</h2><ul id="sessions"></ul><h2>Actors</h2><div id="actors"></div><h2>Events</h2><ul id="log"></ul></aside>
<main id="charts">${charts || "<p>No diagrams found (run <code>npm run visualize</code>).</p>"}</main>
<section>
<h2>Time travel</h2><p id="fork-origin"></p>
<div id="fork" hidden>
<label>fork point <select id="fork-point"></select></label> <button id="fork-refresh" type="button" title="read the session's points again">↻</button>
<label><input id="fork-edit" type="checkbox"> replace the next response with:</label>
<textarea id="fork-response" rows="4"></textarea><small id="fork-calls"></small>
<label><input id="fork-keep-calls" type="checkbox" checked> keep its tool calls</label>
<button id="fork-go" type="button">fork from here</button> <small id="fork-paid"></small>
<p id="fork-status"></p>
<small>A fork is a new session: the original is only read. Tools that are not replay-safe wait for your approval below before they run.</small>
</div>
<h2>Forks</h2><ul id="forks"></ul>
<h2>Waiting for approval</h2><ul id="approvals"></ul>
<div id="compare"></div>
<h2 id="context-title">context</h2><pre id="context"></pre></section>
<script nonce="${nonce}">${PAGE_SCRIPT}</script>
</body></html>`;
}
