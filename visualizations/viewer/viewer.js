/*
 * Run viewer for xstate-agent-loop traces (src/trace/FORMAT.md, version 1). Plain JS, no build
 * step, no network beyond the local server (scripts/view.ts): trace.jsonl, machines/index.json,
 * machines/<name>.machine.svg|json. Node and cluster ids in the SVGs are state paths
 * (`run.turn.requesting.streaming`), so the state active at the selected record is found by id.
 */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
    return node;
  };

  /** Which machine draws an actor of the trace. */
  const machineOfActor = (actor) => (actor === "run" ? "run" : /^tool:\d+$/.test(actor) ? "toolCall" : actor);
  const REQUEST_STATES = new Set(["requesting", "streaming"]);

  const app = {
    records: [],
    /** Indices of `records` that stepping visits. */
    steps: [],
    index: 0,
    tMax: 1,
    derived: { turns: [], requests: [], tools: [], toolLanes: 1, notes: [] },
    graphs: new Map(),
    /** machine id → { svg, edgeElements: Map<edge id, element> } */
    charts: new Map(),
    problems: [],
    traceName: "trace.jsonl",
    /** Statechart zoom: a factor of the diagrams' own size (1: readable), or "fit" (the whole chart in its box). */
    zoom: 1,
    /** Records shown and stepped through: by kind (event type or record type), by tool, by text. */
    filter: { type: "", tool: "", text: "" },
    /** Per record index: the tool names it concerns (for the tool filter). */
    toolsOf: [],
    usage: { runs: [], total: null },
  };

  // -------------------------------------------------------------------------------------------
  // Loading
  // -------------------------------------------------------------------------------------------

  async function boot() {
    // Anything that goes wrong shows the error page, never a blank one.
    window.addEventListener("error", (event) => fail("The viewer failed while showing this trace.", [String(event.message || event.error)]));
    window.addEventListener("unhandledrejection", (event) => fail("The viewer failed while showing this trace.", [String((event.reason && event.reason.message) || event.reason)]));
    bindControls();
    await loadMachines().catch((error) => problem(`statecharts: ${error.message} (run \`npm run visualize\`)`));
    await fetchTrace();
  }

  /** Replaces the panels by the error page. */
  function fail(summary, details) {
    document.body.classList.add("failed");
    document.body.dataset.state = "error";
    $("error-page").hidden = false;
    $("error-summary").textContent = summary;
    $("error-list").replaceChildren(...details.slice(0, 50).map((text) => el("li", { text })), ...(details.length > 50 ? [el("li", { text: `… and ${details.length - 50} more` })] : []));
    $("trace-meta").textContent = `${app.traceName} · cannot be shown`;
  }

  function recover() {
    document.body.classList.remove("failed");
    $("error-page").hidden = true;
    document.body.dataset.state = "ready";
  }

  /** Loads trace.jsonl from the server; on a reload the selected record stays selected. */
  async function fetchTrace(keepSelection = false) {
    const selectedSeq = keepSelection && app.records[app.index] ? app.records[app.index].seq : undefined;
    try {
      const response = await fetch("trace.jsonl", { cache: "no-store" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const name = decodeURIComponent(response.headers.get("x-trace-name") || "trace.jsonl");
      app.traceName = name;
      loadTrace(await response.text(), name, selectedSeq);
    } catch (error) {
      fail("The trace could not be loaded from the viewer's server.", [`trace.jsonl: ${error.message}`]);
    }
  }

  async function loadMachines() {
    const response = await fetch("machines/index.json", { cache: "no-store" });
    if (!response.ok) throw new Error(`machines/index.json: HTTP ${response.status}`);
    const machines = await response.json();
    const containers = { run: $("run-chart"), toolCall: $("tool-chart") };
    for (const machine of machines) {
      const graph = await (await fetch(machine.json, { cache: "no-store" })).json();
      app.graphs.set(graph.id, graph);
      let container = containers[graph.id];
      if (!container) {
        // Other machines (e.g. the session machine) get their own chart below.
        const charts = document.querySelector(".charts");
        charts.append(el("h3", { text: `${graph.id} actor` }));
        container = el("div", { id: `${graph.id}-chart`, class: "chart small" });
        charts.append(container);
      }
      if (machine.svg) await mountSvg(container, machine.svg, graph.id);
      else container.textContent = `${machine.name}.svg missing: run npm run visualize`;
    }
    if (!app.graphs.has("run")) problem("no run machine diagram (visualizations/run.machine.json): run `npm run visualize`");
  }

  async function mountSvg(container, url, machineId) {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    const text = await response.text();
    container.innerHTML = text.slice(text.indexOf("<svg"));
    const svg = container.querySelector("svg");
    const naturalWidth = lengthInPx(svg.getAttribute("width")) || (svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width) || 800;
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.classList.add("statechart");
    const edgeElements = new Map();
    for (const edge of svg.querySelectorAll("g.edge[id]")) for (const id of edge.id.split("+")) edgeElements.set(id, edge);
    app.charts.set(machineId, { svg, edgeElements, naturalWidth });
    applyZoom();
  }

  /** "2447pt" → px (Graphviz writes points). */
  function lengthInPx(value) {
    const match = /^([\d.]+)(pt|px)?$/.exec(value || "");
    if (!match) return 0;
    return Number(match[1]) * (match[2] === "pt" ? 4 / 3 : 1);
  }

  /** Sizes every chart for `app.zoom`; "fit" fits each chart's width to its box. */
  function applyZoom() {
    let shown = app.zoom;
    for (const [machineId, chart] of app.charts) {
      const box = chart.svg.closest(".chart");
      const fit = box ? Math.max(0.05, (box.clientWidth - 2) / chart.naturalWidth) : 1;
      // A small chart (the tool-call machine) is never enlarged to fit.
      const factor = app.zoom === "fit" ? Math.min(fit, machineId === "run" ? Infinity : 1) : app.zoom;
      chart.svg.style.width = `${Math.round(chart.naturalWidth * factor)}px`;
      if (machineId === "run") shown = factor;
    }
    $("zoom-level").textContent = `${Math.round(shown * 100)}%${app.zoom === "fit" ? " (fit)" : ""}`;
    for (const [machineId, chart] of app.charts) scrollIntoChart(chart.svg.querySelector(".active-leaf") || initialNode(machineId, chart), true);
  }

  /** The diagram's node for the machine's initial state: where a chart starts before any state is active. */
  function initialNode(machineId, chart) {
    const graph = app.graphs.get(machineId);
    const root = graph && graph.nodes.find((node) => node.id === graph.id);
    return root && root.initial ? chart.svg.getElementById(root.initial) : null;
  }

  function setZoom(zoom) {
    const current = app.zoom === "fit" ? currentFactor() : app.zoom;
    app.zoom = zoom === "fit" ? "fit" : Math.max(0.1, Math.min(4, typeof zoom === "function" ? zoom(current) : zoom));
    applyZoom();
  }

  function currentFactor() {
    const chart = app.charts.get("run");
    return chart ? chart.svg.getBoundingClientRect().width / chart.naturalWidth : 1;
  }

  /** Why `record` cannot be shown, or "" (unknown record types are kept: newer writers may add some). */
  function recordProblem(record) {
    if (!record || typeof record !== "object" || Array.isArray(record)) return "not a JSON object";
    if (typeof record.type !== "string") return "no record type";
    if (record.type === "event" && (!record.event || typeof record.event !== "object" || typeof record.event.type !== "string")) return "an event record without an event type";
    if (record.type === "state" && typeof record.actor !== "string") return "a state record without an actor";
    if (record.type === "note" && typeof record.text !== "string") return "a note without text";
    return "";
  }

  function loadTrace(text, name, selectedSeq) {
    try {
      readTrace(text, name, selectedSeq);
    } catch (error) {
      fail("The viewer failed while reading this trace.", [`${name}: ${error.message}`]);
    }
  }

  function readTrace(text, name, selectedSeq) {
    app.traceName = name;
    app.problems = app.problems.filter((p) => !p.startsWith("trace:"));
    const records = [];
    const bad = [];
    let lastT = 0;
    const lines = text.split("\n");
    lines.forEach((line, lineIndex) => {
      if (!line.trim()) return;
      let record;
      try {
        record = JSON.parse(line);
      } catch (error) {
        bad.push(`line ${lineIndex + 1}: not JSON (${error.message})`);
        return;
      }
      const why = recordProblem(record);
      if (why) {
        bad.push(`line ${lineIndex + 1}: ${why}`);
        return;
      }
      if (typeof record.t !== "number") record.t = lastT;
      lastT = record.t;
      records.push(record);
    });
    const header = records[0];
    const fatal =
      records.length === 0 ? (lines.some((line) => line.trim()) ? "No line of this file is a trace record." : "The file is empty.")
      : header.type !== "trace" ? `The first record is a “${header.type}”, not the trace header (type “trace”): this is not a trace, or its start is missing.`
      : header.version !== 1 ? `This trace is version ${JSON.stringify(header.version)}; this viewer reads version 1.`
      : header.format !== undefined && header.format !== "xstate-agent-loop/trace" ? `The header's format is “${header.format}”, not “xstate-agent-loop/trace”.`
      : "";
    if (fatal) {
      app.records = [];
      fail(fatal, bad);
      return;
    }
    recover();
    for (const why of bad) problem(`trace: ${why} (skipped)`);
    app.records = records;
    app.tMax = Math.max(1, ...records.map((r) => r.t));
    app.derived = derive(records);
    app.toolsOf = toolsOfRecords(records);
    app.usage = usageOf(records);
    renderFilterOptions();
    renderUsage();
    computeSteps();
    const fromHash = /seq=(\d+)/.exec(location.hash);
    const seq = selectedSeq !== undefined ? selectedSeq : fromHash ? Number(fromHash[1]) : undefined;
    const wanted = seq !== undefined ? records.findIndex((r) => r.seq === seq) : -1;
    app.index = wanted >= 0 ? wanted : 0;
    renderRecords();
    renderTimeline();
    render();
  }

  function computeSteps() {
    const skip = $("skip-deltas").checked;
    const { type, tool, text } = app.filter;
    const needle = text.trim().toLowerCase();
    app.steps = [];
    app.records.forEach((record, index) => {
      if (skip && record.type === "event" && record.event && record.event.type === "message_update" && type !== "message_update") return;
      if (type && kindOf(record) !== type) return;
      if (tool && !app.toolsOf[index].has(tool)) return;
      if (needle && !`${describe(record).join(" ")} ${JSON.stringify(record)}`.toLowerCase().includes(needle)) return;
      app.steps.push(index);
    });
    const filtered = type || tool || needle;
    $("filter-count").textContent = filtered ? `${app.steps.length} of ${app.records.length} records` : `${app.records.length} records`;
  }

  /** What the type filter sorts by: the event type for events, else the record type. */
  const kindOf = (record) => (record.type === "event" ? record.event.type : record.type);

  /**
   * The tools each record concerns: tool events, tool results, assistant messages calling them,
   * and the states of tool-call actors. An actor `tool:N` runs the N-th call of its run's latest
   * assistant message (the runtime spawns them with bounded ids in source order).
   */
  function toolsOfRecords(records) {
    const latestCalls = new Map();
    const actorTool = new Map();
    return records.map((record) => {
      const tools = new Set();
      if (record.type === "event") {
        const event = record.event;
        if (typeof event.toolName === "string") tools.add(event.toolName);
        const message = event.message;
        if (message && message.role === "toolResult" && message.toolName) tools.add(message.toolName);
        const calls = message && Array.isArray(message.content) ? message.content.filter((block) => block && block.type === "toolCall").map((block) => block.name) : [];
        for (const name of calls) tools.add(name);
        if (event.type === "message_end" && message && message.role === "assistant") latestCalls.set(record.run, calls);
      } else if (record.type === "state" && /^tool:\d+$/.test(record.actor)) {
        const key = `${record.run}/${record.actor}`;
        if (record.cause === "xstate.init" || !actorTool.has(key)) actorTool.set(key, (latestCalls.get(record.run) || [])[Number(record.actor.slice(5))]);
        const name = actorTool.get(key);
        if (name) tools.add(name);
      }
      return tools;
    });
  }

  function renderFilterOptions() {
    const fill = (select, first, values) => {
      const keep = select.value;
      select.replaceChildren(el("option", { value: "", text: first }), ...values.map((value) => el("option", { value, text: value })));
      select.value = values.includes(keep) ? keep : "";
    };
    const kinds = [...new Set(app.records.map(kindOf))];
    fill($("filter-type"), "all records", kinds);
    fill($("filter-tool"), "any tool", [...new Set(app.toolsOf.flatMap((tools) => [...tools]))].sort());
    app.filter.type = $("filter-type").value;
    app.filter.tool = $("filter-tool").value;
  }

  // -------------------------------------------------------------------------------------------
  // Tokens and cost
  // -------------------------------------------------------------------------------------------

  /** Usage of each assistant response (message_end), summed per run and in all. */
  function usageOf(records) {
    const runs = new Map();
    const blank = (run) => ({ run, responses: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 });
    const total = blank("all");
    for (const record of records) {
      if (record.type !== "event" || record.event.type !== "message_end") continue;
      const message = record.event.message;
      if (!message || message.role !== "assistant" || !message.usage) continue;
      if (!runs.has(record.run)) runs.set(record.run, blank(record.run));
      for (const sum of [runs.get(record.run), total]) addUsage(sum, message.usage);
    }
    return { runs: [...runs.values()], total: total.responses > 0 ? total : null };
  }

  function addUsage(sum, usage) {
    const n = (value) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
    sum.responses++;
    sum.input += n(usage.input);
    sum.output += n(usage.output);
    sum.cacheRead += n(usage.cacheRead);
    sum.cacheWrite += n(usage.cacheWrite);
    sum.totalTokens += n(usage.totalTokens) || n(usage.input) + n(usage.output) + n(usage.cacheRead) + n(usage.cacheWrite);
    sum.cost += usage.cost ? n(usage.cost.total) : 0;
  }

  const count = (n) => n.toLocaleString("en-US");
  const dollars = (n) => (n === 0 ? "$0" : n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`);

  function renderUsage() {
    const body = $("usage").tBodies[0];
    const row = (sum, cls) =>
      el(
        "tr",
        { class: cls, "data-run": sum.run, "data-total-tokens": sum.totalTokens, "data-cost": sum.cost },
        el("td", { text: sum.run === "all" ? "all" : `run ${sum.run}` }),
        el("td", { text: count(sum.responses) }),
        el("td", { text: count(sum.input) }),
        el("td", { text: count(sum.output) }),
        el("td", { text: `${count(sum.cacheRead)} / ${count(sum.cacheWrite)}` }),
        el("td", { text: count(sum.totalTokens) }),
        el("td", { text: dollars(sum.cost) }),
      );
    const { runs, total } = app.usage;
    if (!total) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 7, class: "empty", text: "no assistant response with usage in this trace" })));
      return;
    }
    body.replaceChildren(...(runs.length > 1 ? runs.map((sum) => row(sum, "run")) : []), row(total, "total"));
  }

  /** One response's usage, as the transcript and the records list show it. */
  function usageText(usage) {
    const sum = { responses: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
    addUsage(sum, usage);
    const cache = sum.cacheRead || sum.cacheWrite ? ` (cache ${count(sum.cacheRead)} read, ${count(sum.cacheWrite)} written)` : "";
    return `${count(sum.input)} in · ${count(sum.output)} out${cache} · ${dollars(sum.cost)}`;
  }

  // -------------------------------------------------------------------------------------------
  // What the trace says
  // -------------------------------------------------------------------------------------------

  /** Active state paths of a StateValue under `prefix`, ancestors first. */
  function pathsOf(value, prefix) {
    if (typeof value === "string") return [`${prefix}.${value}`];
    if (!value || typeof value !== "object") return [];
    return Object.entries(value).flatMap(([key, inner]) => [`${prefix}.${key}`, ...pathsOf(inner, `${prefix}.${key}`)]);
  }
  const leavesOf = (paths) => paths.filter((path) => !paths.some((other) => other.startsWith(`${path}.`)));
  const dotted = (value) => leavesOf(pathsOf(value, "")).map((p) => p.slice(1)).join(", ") || "—";

  function derive(records) {
    const turns = [];
    const requests = [];
    const tools = [];
    const notes = [];
    const openTurns = new Map();
    const openTools = new Map();
    const turnCount = new Map();
    const openRequests = new Map();
    const assistantStarts = new Map();
    const fallbackRequests = [];
    const runs = new Set();

    records.forEach((record, index) => {
      if (record.run !== undefined && record.run > 0) runs.add(record.run);
      if (record.type === "note") notes.push({ t: record.t, index, text: record.text });
      if (record.type === "state" && record.actor === "run") {
        const inRequest = pathsOf(record.value, "").some((path) => path.split(".").some((key) => REQUEST_STATES.has(key)));
        const open = openRequests.get(record.run);
        if (inRequest && !open) {
          const bar = { kind: "request", run: record.run, start: record.t, end: null, startIndex: index, endIndex: null };
          requests.push(bar);
          openRequests.set(record.run, bar);
        } else if (!inRequest && open) {
          open.end = record.t;
          open.endIndex = index;
          openRequests.delete(record.run);
        }
      }
      if (record.type !== "event" || !record.event) return;
      const event = record.event;
      switch (event.type) {
        case "turn_start": {
          const n = (turnCount.get(record.run) || 0) + 1;
          turnCount.set(record.run, n);
          const bar = { kind: "turn", run: record.run, n, start: record.t, end: null, startIndex: index, endIndex: null };
          turns.push(bar);
          openTurns.set(record.run, bar);
          break;
        }
        case "turn_end": {
          const bar = openTurns.get(record.run);
          if (bar) Object.assign(bar, { end: record.t, endIndex: index });
          openTurns.delete(record.run);
          break;
        }
        case "message_start":
          if (event.message && event.message.role === "assistant") assistantStarts.set(record.run, { t: record.t, index });
          break;
        case "message_end": {
          const start = assistantStarts.get(record.run);
          if (event.message && event.message.role === "assistant" && start) {
            fallbackRequests.push({ kind: "request", run: record.run, start: start.t, end: record.t, startIndex: start.index, endIndex: index });
            assistantStarts.delete(record.run);
          }
          break;
        }
        case "tool_execution_start": {
          const bar = {
            kind: "tool",
            run: record.run,
            name: event.toolName,
            id: event.toolCallId,
            start: record.t,
            end: null,
            startIndex: index,
            endIndex: null,
            updates: [],
            isError: false,
            durationMs: undefined,
          };
          tools.push(bar);
          openTools.set(`${record.run}/${event.toolCallId}`, bar);
          break;
        }
        case "tool_execution_update": {
          const bar = openTools.get(`${record.run}/${event.toolCallId}`);
          if (bar) bar.updates.push({ t: record.t, index });
          break;
        }
        case "tool_execution_end": {
          const bar = openTools.get(`${record.run}/${event.toolCallId}`);
          if (bar) Object.assign(bar, { end: record.t, endIndex: index, isError: Boolean(event.isError), durationMs: event.durationMs });
          openTools.delete(`${record.run}/${event.toolCallId}`);
          break;
        }
      }
    });
    const allRequests = requests.length > 0 ? requests : fallbackRequests;
    allRequests.forEach((bar, i) => (bar.n = i + 1));
    // Overlapping tool calls go side by side, one lane each.
    const laneEnds = [];
    for (const bar of tools) {
      let lane = laneEnds.findIndex((end) => end !== null && end <= bar.start);
      if (lane < 0) lane = laneEnds.length;
      laneEnds[lane] = bar.end;
      bar.lane = lane;
    }
    return { turns, requests: allRequests, tools, toolLanes: Math.max(1, laneEnds.length), notes, multiRun: runs.size > 1 };
  }

  /** The latest state record per actor at or before `index`. */
  function actorsAt(index) {
    const latest = new Map();
    for (let i = 0; i <= index && i < app.records.length; i++) {
      const record = app.records[i];
      if (record.type === "state") latest.set(record.actor, { record, index: i });
    }
    return latest;
  }

  /** The state record for `actor` before `index` (same run), for the transition taken. */
  function previousState(actor, index, run) {
    for (let i = index - 1; i >= 0; i--) {
      const record = app.records[i];
      if (record.type === "state" && record.actor === actor) return record.run === run ? record : null;
    }
    return null;
  }

  // -------------------------------------------------------------------------------------------
  // Rendering
  // -------------------------------------------------------------------------------------------

  const ms = (t) => (t >= 1000 ? `${(t / 1000).toFixed(2)} s` : `${t < 10 ? t.toFixed(1) : Math.round(t)} ms`);
  const pct = (t) => `${((t / app.tMax) * 100).toFixed(3)}%`;

  function renderTimeline() {
    const { turns, requests, tools, toolLanes, notes, multiRun } = app.derived;
    const timeline = $("timeline");
    timeline.replaceChildren();
    const runPrefix = (bar) => (multiRun ? `run ${bar.run} · ` : "");
    const bar = (item, kind, label, extra = {}) => {
      const end = item.end === null ? app.tMax : item.end;
      const duration = item.durationMs !== undefined ? item.durationMs : end - item.start;
      const node = el("div", {
        class: `bar ${kind}${item.end === null ? " open" : ""}${item.isError ? " error" : ""}`,
        "data-start": item.start,
        "data-end": end,
        "data-index": item.startIndex,
        title: `${label}: ${ms(item.start)} → ${ms(end)} (${ms(duration)})`,
        ...extra,
      });
      node.style.left = pct(item.start);
      node.style.width = `max(3px, ${pct(end - item.start)})`;
      node.append(el("span", { text: `${label} · ${ms(duration)}` }));
      node.addEventListener("click", (event) => {
        event.stopPropagation();
        select(item.startIndex);
      });
      return node;
    };
    const row = (label, children, cls = "") => {
      const track = el("div", { class: "track" }, children);
      track.addEventListener("click", (event) => {
        const box = track.getBoundingClientRect();
        selectTime(((event.clientX - box.left) / box.width) * app.tMax);
      });
      return el("div", { class: `row ${cls}` }, el("div", { class: "label", text: label }), track);
    };

    const ticks = [];
    const step = niceStep(app.tMax / 8);
    for (let t = 0; t <= app.tMax; t += step) {
      const tick = el("span", { class: "tick", text: ms(t) });
      tick.style.left = pct(t);
      ticks.push(tick);
    }
    timeline.append(row("", ticks, "axis"));
    timeline.append(row("Turns", turns.map((item) => bar(item, "turn", `${runPrefix(item)}turn ${item.n}`))));
    timeline.append(row("Requests", requests.map((item) => bar(item, "request", `${runPrefix(item)}request ${item.n}`))));
    for (let lane = 0; lane < toolLanes; lane++) {
      const items = tools.filter((item) => item.lane === lane);
      timeline.append(
        row(
          lane === 0 ? "Tool calls" : "",
          items.map((item) => {
            const node = bar(item, "tool", item.name, { "data-lane": lane, "data-tool-call-id": item.id });
            for (const update of item.updates) {
              const mark = el("i", { class: "update", title: `update at ${ms(update.t)}` });
              mark.style.left = `${(((update.t - item.start) / Math.max(1e-9, (item.end ?? app.tMax) - item.start)) * 100).toFixed(2)}%`;
              node.append(mark);
            }
            return node;
          }),
          "tools",
        ),
      );
    }
    const marks = app.records.map((record, index) => {
      if (record.type === "trace") return null;
      const kind = record.type === "event" && record.event && record.event.type === "message_update" ? "delta" : record.type;
      const mark = el("i", { class: `mark ${kind}`, title: describe(record).join(" ") });
      mark.style.left = pct(record.t);
      mark.addEventListener("click", (event) => {
        event.stopPropagation();
        select(index);
      });
      return mark;
    });
    timeline.append(row("Records", marks, "marks"));
    if (notes.length > 0) {
      timeline.append(
        row(
          "Notes",
          notes.map((note) => {
            const mark = el("i", { class: "mark note", title: note.text });
            mark.style.left = pct(note.t);
            return mark;
          }),
        ),
      );
    }
    const cursor = el("div", { id: "cursor", class: "cursor" });
    timeline.append(cursor);
  }

  function niceStep(raw) {
    const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-6)));
    for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
    return 10 * power;
  }

  function describe(record) {
    switch (record.type) {
      case "trace":
        return ["trace", `v${record.version} · ${(record.model && record.model.id) || "?"}`];
      case "note":
        return ["note", record.text];
      case "state":
        return [`state ${record.actor}`, `${dotted(record.value)}${record.status !== "active" ? ` (${record.status})` : ""} ← ${record.cause || "?"}`];
      case "event": {
        const event = record.event || {};
        const message = event.message || {};
        let detail = "";
        if (event.type === "message_update") detail = (event.assistantMessageEvent && event.assistantMessageEvent.type) || "";
        else if (event.type.startsWith("message_")) {
          detail = `${message.role}${message.stopReason ? ` (${message.stopReason})` : ""}${message.toolName ? ` ${message.toolName}` : ""}`;
          if (event.type === "message_end" && message.role === "assistant" && message.usage) detail += ` · ${usageText(message.usage)}`;
        }
        else if (event.type.startsWith("tool_execution")) detail = `${event.toolName}${event.isError ? " (error)" : ""}`;
        else if (event.type === "message_update") detail = "";
        else if (event.type === "agent_end") detail = `${(event.messages || []).length} messages`;
        return [event.type, detail];
      }
      default:
        return [record.type, ""];
    }
  }

  function renderRecords() {
    const list = $("records");
    list.replaceChildren(
      ...app.steps.map((index) => {
        const record = app.records[index];
        const [kind, detail] = describe(record);
        return el(
          "li",
          { "data-index": index, class: `record ${record.type}`, onclick: () => select(index) },
          el("span", { class: "seq", text: `#${record.seq ?? index}` }),
          el("span", { class: "t", text: ms(record.t) }),
          el("span", { class: "kind", text: kind }),
          el("span", { class: "detail", text: detail }),
        );
      }),
    );
  }

  function render() {
    const header = app.records[0];
    $("trace-meta").textContent = header
      ? `${app.traceName} · ${header.model ? `${header.model.provider}/${header.model.id}` : "no model"} · ${header.createdAt || ""} · ${app.records.length} records · ${ms(app.tMax)}`
      : app.traceName;
    $("problems").hidden = app.problems.length === 0;
    $("problems").textContent = app.problems.join("\n");
    if (app.records.length === 0) return;
    document.body.dataset.state = "ready";

    const record = app.records[app.index];
    const stepIndex = app.steps.indexOf(app.index);
    $("position").textContent = `${stepIndex >= 0 ? stepIndex + 1 : "·"} / ${app.steps.length}  ·  #${record.seq ?? app.index}  ·  ${ms(record.t)}`;
    $("record-label").textContent = describe(record).join(" · ");
    $("record-json").textContent = JSON.stringify(record, null, 2);
    document.body.dataset.selectedSeq = String(record.seq ?? app.index);
    document.body.dataset.selectedType = record.type === "event" && record.event ? record.event.type : record.type;

    // Records list and timeline cursor.
    const list = $("records");
    for (const item of list.querySelectorAll(".selected")) item.classList.remove("selected");
    const item = list.querySelector(`[data-index="${app.index}"]`);
    if (item) {
      item.classList.add("selected");
      const top = item.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - item.offsetHeight) list.scrollTop = top - list.clientHeight / 2;
    }
    const cursor = $("cursor");
    if (cursor) cursor.style.setProperty("--x", String(record.t / app.tMax));
    for (const node of document.querySelectorAll(".timeline .bar")) {
      const current = Number(node.dataset.start) <= record.t && record.t <= Number(node.dataset.end);
      node.classList.toggle("current", current);
    }

    renderStates();
    renderTranscript();
    if (record.seq !== undefined) history.replaceState(null, "", `#seq=${record.seq}`);
  }

  function renderStates() {
    for (const chart of app.charts.values()) {
      for (const node of chart.svg.querySelectorAll(".active, .active-leaf, .taken")) node.classList.remove("active", "active-leaf", "taken");
    }
    const actors = actorsAt(app.index);
    const list = $("actors");
    list.replaceChildren();
    const toolStates = [];
    const ordered = [...actors.entries()].sort(([a], [b]) => (a === "run" ? -1 : b === "run" ? 1 : a.localeCompare(b, "en", { numeric: true })));
    for (const [actor, { record, index }] of ordered) {
      const machineId = machineOfActor(actor);
      const live = record.status === "active";
      list.append(
        el(
          "li",
          { class: `actor ${record.status}`, "data-actor": actor, onclick: () => select(index) },
          el("b", { text: actor }),
          el("span", { text: dotted(record.value) }),
          el("small", { text: `${record.status} · #${record.seq}` }),
        ),
      );
      const chart = app.charts.get(machineId);
      if (!chart) continue;
      // Finished actors keep their last state marked only while nothing newer is live.
      if (!live && actor !== "run") continue;
      const paths = pathsOf(record.value, machineId);
      for (const path of paths) {
        const node = chart.svg.getElementById ? chart.svg.getElementById(path) : chart.svg.querySelector(`[id="${CSS.escape(path)}"]`);
        if (!node) {
          problemOnce(`state ${path} (${actor}, #${record.seq}) is not in the ${machineId} diagram: regenerate the diagrams or the trace`);
          continue;
        }
        node.classList.add("active");
        if (!paths.some((other) => other.startsWith(`${path}.`))) node.classList.add("active-leaf");
      }
      if (actor !== "run") toolStates.push(`${actor}: ${dotted(record.value)}`);
      markTaken(actor, machineId, record, index, chart);
    }
    for (const chart of app.charts.values()) scrollIntoChart(chart.svg.querySelector(".active-leaf"));
    const run = actors.get("run");
    $("state-label").textContent = run ? `run: ${dotted(run.record.value).replace(/\./g, " › ")}` : "";
    $("tool-label").textContent = toolStates.join(" · ");
    if (actors.size === 0) list.append(el("li", { class: "empty", text: "no state records yet" }));
  }

  /** Scrolls a chart (not the page) so the active state is visible. */
  function scrollIntoChart(node, center = false) {
    if (!node) return;
    const container = node.closest(".chart");
    if (!container || (container.scrollHeight <= container.clientHeight && container.scrollWidth <= container.clientWidth)) return;
    const box = node.getBoundingClientRect();
    const frame = container.getBoundingClientRect();
    const middle = (a, b) => (a + b) / 2;
    if (center || box.top < frame.top || box.bottom > frame.bottom) container.scrollTop += middle(box.top, box.bottom) - middle(frame.top, frame.bottom);
    if (center || box.left < frame.left || box.right > frame.right) container.scrollLeft += middle(box.left, box.right) - middle(frame.left, frame.right);
  }

  /**
   * Highlights the transitions that explain the step into `record` from the actor's previous
   * state: one transition on the cause event, then any eventless (`always`) ones, ending in the
   * new state. (The trace has one record per macrostep, so transient states are not recorded.)
   */
  function markTaken(actor, machineId, record, index, chart) {
    const graph = app.graphs.get(machineId);
    const previous = previousState(actor, index, record.run);
    if (!graph || !previous) return;
    const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
    const fromPaths = pathsOf(previous.value, machineId);
    const toLeaves = new Set(leavesOf(pathsOf(record.value, machineId)));
    const cause = record.cause || "";
    const matches = (event) => event === cause || event === "*" || (event.endsWith(".*") && cause.startsWith(event.slice(0, -1)));
    const lineage = (id) => {
      const out = [];
      for (let node = nodes.get(id); node; node = node.parent ? nodes.get(node.parent) : undefined) out.push(node.id);
      return out;
    };
    const entered = (id) => {
      let node = nodes.get(id);
      while (node && node.initial) node = nodes.get(node.initial);
      return node ? node.id : id;
    };
    const taken = new Set();
    const search = (leaf, path) => {
      if (toLeaves.has(leaf)) {
        for (const edge of path) taken.add(edge.id);
        return;
      }
      if (path.length > 10) return;
      const sources = new Set(lineage(leaf));
      for (const edge of graph.edges) {
        if (edge.event !== "" || !sources.has(edge.source) || path.includes(edge)) continue;
        search(edge.internal ? leaf : entered(edge.target), [...path, edge]);
      }
    };
    for (const leaf of leavesOf(fromPaths)) {
      const sources = new Set(lineage(leaf));
      for (const edge of graph.edges) {
        if (sources.has(edge.source) && matches(edge.event)) search(edge.internal ? leaf : entered(edge.target), [edge]);
      }
    }
    for (const id of taken) {
      const node = chart.edgeElements.get(id);
      if (node) node.classList.add("taken");
    }
  }

  function renderTranscript() {
    const list = $("transcript");
    list.replaceChildren();
    const selected = app.index;
    const partial = (open) => ({
      role: "assistant",
      content: [...(open.thinking ? [{ type: "thinking", thinking: open.thinking }] : []), { type: "text", text: open.text }],
    });
    let open = null;
    app.records.forEach((record, index) => {
      if (record.type !== "event" || !record.event) return;
      const event = record.event;
      const role = event.message && event.message.role;
      if (event.type === "message_start") {
        open = { start: index, role, text: "", thinking: "" };
        return;
      }
      if (event.type === "message_update") {
        const inner = event.assistantMessageEvent || {};
        if (open && index <= selected && inner.type === "text_delta") open.text += inner.delta || "";
        if (open && index <= selected && inner.type === "thinking_delta") open.thinking += inner.delta || "";
        return;
      }
      if (event.type !== "message_end") return;
      const start = open ? open.start : index;
      let state = "past";
      if (start > selected) state = "future";
      else if (selected < index) state = role === "assistant" ? "streaming" : "current";
      else if (selected === index) state = "current";
      list.append(messageItem(state === "streaming" ? partial(open) : event.message, record, index, state));
      open = null;
    });
    // A message still open at the end of the trace.
    if (open && open.start <= selected && open.role === "assistant") list.append(messageItem(partial(open), app.records[open.start], open.start, "streaming"));
    const current = list.querySelector(".current, .streaming");
    if (current) {
      const top = current.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 40) list.scrollTop = top - 20;
    }
  }

  function messageItem(message, record, index, state) {
    const role = (message && message.role) || "?";
    const body = el("div", { class: "body" });
    const content = message && message.content;
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
    if (state === "streaming") body.append(el("p", { class: "note", text: "streaming…" }));
    for (const block of blocks) {
      if (block.type === "text" && block.text) body.append(el("p", { text: block.text }));
      else if (block.type === "thinking") body.append(el("details", {}, el("summary", { text: "thinking" }), el("p", { text: block.thinking || "" })));
      else if (block.type === "toolCall") body.append(el("p", { class: "call", text: `→ ${block.name}(${JSON.stringify(block.arguments)})` }));
      else if (block.type === "image") body.append(el("p", { class: "note", text: `[image ${block.mimeType || ""} ${block.data || ""}]` }));
    }
    if (role === "system") {
      const added = (message.toolsAdded || []).map((tool) => tool.name);
      if (added.length > 0) body.append(el("p", { class: "note", text: `tools declared: ${added.join(", ")}` }));
    }
    if (role === "toolResult" && message.details !== undefined) {
      body.append(el("details", {}, el("summary", { text: "details" }), el("pre", { text: JSON.stringify(message.details, null, 2) })));
    }
    const tags = [];
    if (message.stopReason) tags.push(message.stopReason);
    if (message.isError) tags.push("error");
    if (message.durationMs !== undefined) tags.push(ms(message.durationMs));
    if (message.errorMessage) tags.push(message.errorMessage);
    const usage = role === "assistant" && state !== "streaming" && message.usage ? el("p", { class: "usage-tag", text: `tokens: ${usageText(message.usage)}` }) : null;
    if (usage) body.append(usage);
    return el(
      "li",
      { class: `message ${role} ${state}${message.isError ? " error" : ""}`, onclick: () => select(index) },
      el("div", { class: "head" }, el("b", { text: role === "toolResult" ? `tool result · ${message.toolName}` : role }), el("small", { text: `${tags.join(" · ")} #${record.seq}` })),
      body,
    );
  }

  // -------------------------------------------------------------------------------------------
  // Navigation
  // -------------------------------------------------------------------------------------------

  function select(index) {
    if (app.records.length === 0) return;
    app.index = Math.max(0, Math.min(app.records.length - 1, index));
    render();
  }

  function selectTime(t) {
    let best = app.steps[0] ?? 0;
    for (const index of app.steps) if (app.records[index].t <= t) best = index;
    select(best);
  }

  function step(delta) {
    if (app.steps.length === 0) return;
    let position = app.steps.indexOf(app.index);
    if (position < 0) {
      // The selection is a skipped record: move to the nearest visible one in that direction.
      position = app.steps.findIndex((index) => index > app.index);
      if (position < 0) position = app.steps.length;
      if (delta > 0) position -= 1;
    }
    const next = Math.max(0, Math.min(app.steps.length - 1, position + delta));
    select(app.steps[next]);
  }

  function bindControls() {
    $("first").addEventListener("click", () => select(app.steps[0] ?? 0));
    $("last").addEventListener("click", () => select(app.steps[app.steps.length - 1] ?? 0));
    $("prev").addEventListener("click", () => step(-1));
    $("next").addEventListener("click", () => step(1));
    $("reload").addEventListener("click", () => fetchTrace(true));
    $("zoom-in").addEventListener("click", () => setZoom((z) => z * 1.25));
    $("zoom-out").addEventListener("click", () => setZoom((z) => z / 1.25));
    $("zoom-reset").addEventListener("click", () => setZoom(1));
    $("zoom-fit").addEventListener("click", () => setZoom("fit"));
    window.addEventListener("resize", () => app.zoom === "fit" && applyZoom());
    const refilter = () => {
      app.filter = { type: $("filter-type").value, tool: $("filter-tool").value, text: $("filter-text").value };
      computeSteps();
      renderRecords();
      // Keep the selection if it is shown, else go to the first record shown.
      if (app.steps.length > 0 && !app.steps.includes(app.index)) select(app.steps[0]);
      else render();
    };
    $("filter-type").addEventListener("change", refilter);
    $("filter-tool").addEventListener("change", refilter);
    $("filter-text").addEventListener("input", refilter);
    $("skip-deltas").addEventListener("change", () => {
      computeSteps();
      renderRecords();
      render();
    });
    document.addEventListener("keydown", (event) => {
      // Arrow keys belong to the element that uses them (text fields, menus); a checkbox or a
      // button keeps the focus after a click but has no use for them.
      if (usesArrowKeys(event.target)) return;
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const keys = { ArrowRight: () => step(1), ArrowLeft: () => step(-1), Home: () => select(app.steps[0] ?? 0), End: () => select(app.steps[app.steps.length - 1] ?? 0) };
      const action = keys[event.key];
      if (!action) return;
      event.preventDefault();
      action();
    });
    $("file").addEventListener("change", async (event) => {
      const file = event.target.files && event.target.files[0];
      if (file) loadTrace(await file.text(), file.name, -1);
    });
    document.addEventListener("dragover", (event) => event.preventDefault());
    document.addEventListener("drop", async (event) => {
      event.preventDefault();
      const file = event.dataTransfer && event.dataTransfer.files[0];
      if (file) loadTrace(await file.text(), file.name, -1);
    });
  }

  function usesArrowKeys(target) {
    if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement || (target instanceof HTMLElement && target.isContentEditable)) return true;
    return target instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit", "reset", "file", "color"].includes(target.type);
  }

  function problem(text) {
    app.problems.push(text);
    console.warn(text);
  }
  const reported = new Set();
  function problemOnce(text) {
    if (reported.has(text)) return;
    reported.add(text);
    problem(text);
    $("problems").hidden = false;
    $("problems").textContent = app.problems.join("\n");
  }

  window.runViewer = app;
  boot();
})();
