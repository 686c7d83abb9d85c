/**
 * The page's script (plain browser JS, inlined by page.ts; no backticks or `${` in it, as it lives
 * in a template string). Messages are queued as they arrive and applied once per animation frame,
 * so a 3,000-delta response redraws at the screen's rate, not the stream's.
 */
export const PAGE_SCRIPT = String.raw`
"use strict";
var app = { sessions: new Map(), selected: null, pinned: false, step: null, event: null, actor: null, frames: 0, applied: 0, renders: 0, travel: 0, travelShown: -1, pointsOf: null, points: [], paidModel: null };
var actionToken = document.querySelector('meta[name="inspector-token"]').getAttribute("content");
var queue = [];
var scheduled = false;
window.__inspector = app;

function $(id) { return document.getElementById(id); }
function el(tag, attrs, children) {
  var node = document.createElement(tag);
  for (var key in attrs || {}) {
    if (key === "text") node.textContent = attrs[key];
    else if (key === "onclick") node.onclick = attrs[key];
    else node.setAttribute(key, attrs[key]);
  }
  (children || []).forEach(function (child) { if (child) node.append(child); });
  return node;
}
function dotted(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return Object.keys(value).map(function (key) {
    var inner = dotted(value[key]);
    return inner ? key + "." + inner : key;
  }).join(" | ");
}
function pathsOf(value, prefix) {
  if (typeof value === "string") return [prefix + "." + value];
  var out = [];
  if (value && typeof value === "object") {
    for (var key in value) {
      out.push(prefix + "." + key);
      out = out.concat(pathsOf(value[key], prefix + "." + key));
    }
  }
  return out;
}

function enqueue(batch) {
  for (var i = 0; i < batch.length; i++) queue.push(batch[i]);
  if (!scheduled) { scheduled = true; requestAnimationFrame(apply); }
}
function apply() {
  scheduled = false;
  var batch = queue.splice(0, queue.length);
  for (var i = 0; i < batch.length; i++) ingest(batch[i]);
  app.frames++;
  app.applied += batch.length;
  render();
}
function sessionOf(id) {
  var session = app.sessions.get(id);
  if (!session) {
    session = { id: id, kind: "run", actors: new Map(), events: [], last: 0 };
    app.sessions.set(id, session);
  }
  return session;
}
function actorOf(session, a) {
  var actor = session.actors.get(a);
  if (!actor) {
    actor = { a: a, id: a, parent: null, machine: null, system: null, snaps: [] };
    session.actors.set(a, actor);
  }
  return actor;
}
function ingest(m) {
  var session = sessionOf(m.s);
  if (m.t === "session") { session.kind = m.kind; session.at = m.at; return; }
  if (m.t === "fork") {
    session.forks = (session.forks || []).concat([{ fork: m.fork, seq: m.seq, label: m.label, edited: m.edited }]);
    sessionOf(m.fork).forkOf = { s: m.s, seq: m.seq, label: m.label, edited: m.edited };
    app.travel++;
    return;
  }
  if (m.t === "approval") {
    session.approvals = session.approvals || new Map();
    var known = session.approvals.get(m.id);
    session.approvals.set(m.id, { id: m.id, tool: m.tool || (known && known.tool) || "", args: known ? known.args : m.args, state: m.state });
    app.travel++;
    return;
  }
  if (m.t === "forkFailed") { session.failed = m.error; app.travel++; return; }
  if (m.t === "forkable") { session.forkable = true; app.travel++; return; }
  if (m.t === "compare") { session.compare = m; app.travel++; return; }
  session.last = Math.max(session.last, m.n);
  if (m.t === "actor") {
    var actor = actorOf(session, m.a);
    actor.id = m.id; actor.parent = m.parent; actor.machine = m.machine; actor.system = m.system;
  } else if (m.t === "snap") {
    actorOf(session, m.a).snaps.push(m);
  } else if (m.t === "event") {
    session.events.push(m);
    if (session.events.length > 2000) session.events.splice(0, session.events.length - 2000);
  }
}
/** The actor's snapshot at the selected step (the latest when following live). */
function snapAt(actor) {
  var snaps = actor.snaps;
  if (app.step === null) return snaps[snaps.length - 1];
  for (var i = snaps.length - 1; i >= 0; i--) if (snaps[i].n <= app.step) return snaps[i];
  return undefined;
}

function render() {
  // A fork just started is selected once its first message arrived.
  if (app.wanted && app.sessions.has(app.wanted)) { app.selected = app.wanted; app.wanted = null; app.pinned = true; }
  if (!app.pinned || !app.sessions.has(app.selected)) {
    var ids = Array.from(app.sessions.keys());
    app.selected = ids.length ? ids[ids.length - 1] : null;
  }
  renderSessions();
  var session = app.selected === null ? null : app.sessions.get(app.selected);
  renderActors(session);
  renderCharts(session);
  renderLog(session);
  renderContext(session);
  renderTravel(session);
  app.renders++;
  $("mode").textContent = app.step === null ? "live" : "step " + app.step;
  $("live").disabled = app.step === null;
}
function renderSessions() {
  var list = $("sessions");
  list.replaceChildren();
  app.sessions.forEach(function (session, id) {
    list.append(el("li", {
      "data-session": id,
      class: id === app.selected ? "selected" : "",
      onclick: function () { app.selected = id; app.pinned = true; app.step = null; app.event = null; app.actor = null; render(); },
    }, [el("b", { text: id }), el("small", { text: " " + session.kind + " · " + session.actors.size + " actors" })]));
  });
  if (!app.sessions.size) list.append(el("li", { class: "empty", text: "waiting for a run…" }));
}
function renderActors(session) {
  var list = $("actors");
  list.replaceChildren();
  if (!session) return;
  var children = new Map();
  session.actors.forEach(function (actor) {
    var parent = actor.parent && session.actors.has(actor.parent) ? actor.parent : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(actor);
  });
  function branch(parent) {
    // Bounded child ids are reused batch after batch: a repeated id starts a new generation of
    // siblings, and only the latest generation that exists at the selected step is shown.
    var generations = [[]];
    var seen = new Set();
    (children.get(parent) || []).forEach(function (actor) {
      if (seen.has(actor.id)) { generations.push([]); seen.clear(); }
      seen.add(actor.id);
      generations[generations.length - 1].push(actor);
    });
    var latest = 0;
    generations.forEach(function (generation, index) { if (generation.some(snapAt)) latest = index; });
    // Of earlier generations, what still runs and has no newer namesake stays (e.g. the run's step worker).
    var newer = new Set(generations.slice(latest).flat().map(function (actor) { return actor.id; }));
    var kids = generations.slice(0, latest).flat().filter(function (actor) {
      var snap = snapAt(actor);
      return snap && snap.status === "active" && !newer.has(actor.id);
    }).concat(generations[latest]);
    if (!kids.length) return null;
    var ul = el("ul");
    kids.forEach(function (actor) {
      var snap = snapAt(actor);
      var li = el("li", {
        "data-actor-id": actor.id,
        "data-machine": actor.machine || "",
        "data-status": snap ? snap.status : "",
        "data-state": snap ? dotted(snap.value) : "",
        class: (snap ? snap.status : "pending") + (app.actor === actor.a ? " selected" : ""),
      }, [
        el("span", { class: "name", text: actor.id, onclick: function () { app.actor = actor.a; render(); } }),
        el("small", { text: (actor.machine ? " " + actor.machine : "") + (snap ? " · " + dotted(snap.value) + (snap.status !== "active" ? " (" + snap.status + ")" : "") : "") }),
        branch(actor.a),
      ]);
      ul.append(li);
    });
    return ul;
  }
  var tree = branch(null);
  if (tree) list.append(tree);
}
function renderCharts(session) {
  document.querySelectorAll(".chart").forEach(function (chart) {
    chart.querySelectorAll(".active, .active-leaf").forEach(function (node) { node.classList.remove("active", "active-leaf"); });
    var machine = chart.getAttribute("data-machine");
    var actors = session ? Array.from(session.actors.values()).filter(function (actor) { return actor.machine === machine; }) : [];
    chart.hidden = actors.length === 0;
    var shown = [];
    var finished = null;
    actors.forEach(function (actor) {
      var snap = snapAt(actor);
      if (!snap) return;
      if (snap.status === "active") shown.push(snap); else finished = snap;
    });
    // A finished machine keeps its final state marked while no other of its kind runs.
    if (!shown.length && finished) shown.push(finished);
    var labels = [];
    shown.forEach(function (snap) {
      var paths = pathsOf(snap.value, machine);
      labels.push(dotted(snap.value));
      paths.forEach(function (path) {
        var node = document.getElementById(path);
        if (!node) return;
        node.classList.add("active");
        if (!paths.some(function (other) { return other.indexOf(path + ".") === 0; })) node.classList.add("active-leaf");
      });
    });
    chart.querySelector(".chart-state").textContent = labels.join(" · ");
  });
}
function renderLog(session) {
  var list = $("log");
  var events = session ? session.events.slice(-300) : [];
  list.replaceChildren();
  events.forEach(function (m) {
    var actor = session.actors.get(m.a);
    list.append(el("li", {
      "data-n": String(m.n),
      class: app.event === m.n ? "selected" : "",
      onclick: function () { selectEvent(session, m); },
    }, [el("small", { text: "#" + m.n + " " + (actor ? actor.id : m.a) + " ← " }), el("span", { text: m.type })]));
  });
  if (app.step === null) list.scrollTop = list.scrollHeight;
}
/** An event selects the step its target reached by it: that actor's next snapshot (XState reports the event first). */
function selectEvent(session, m) {
  var actor = session.actors.get(m.a);
  var after = actor && actor.snaps.find(function (snap) { return snap.n > m.n; });
  app.event = m.n;
  app.step = after ? after.n : m.n;
  app.actor = m.a;
  render();
}
function renderContext(session) {
  var box = $("context");
  var title = $("context-title");
  if (!session) { box.textContent = ""; return; }
  var actor = app.actor && session.actors.get(app.actor);
  if (!actor) {
    session.actors.forEach(function (candidate) { if (!actor && candidate.machine === "run") actor = candidate; });
    if (!actor) actor = session.actors.values().next().value;
  }
  var snap = actor && snapAt(actor);
  title.textContent = actor ? "context of " + actor.id + (snap ? " at #" + snap.n : "") : "context";
  box.textContent = snap ? JSON.stringify(snap.context, null, 2) : "";
}

// -- time travel: fork points, forks, their approvals, and a fork beside its original ----------

function withQuery(path, query) {
  var search = location.search ? location.search + "&" : "?";
  return path + search + query;
}
function post(path, body) {
  return fetch(withQuery(path, ""), { method: "POST", headers: { "content-type": "application/json", "x-inspector-token": actionToken }, body: JSON.stringify(body) })
    .then(function (response) { return response.json().then(function (data) { if (!response.ok) throw new Error(data.error || response.statusText); return data; }); });
}
/** The points of the selected session, fetched when the selection changes (or on refresh); the form is not redrawn per frame. */
function loadPoints(id) {
  app.pointsOf = id;
  $("fork").hidden = true;
  if (id === null || !app.sessions.get(id).forkable) return;
  fetch(withQuery("/points", "session=" + encodeURIComponent(id))).then(function (response) {
    return response.ok ? response.json() : null;
  }).then(function (data) {
    if (app.pointsOf !== id) return;
    app.points = data ? data.points : [];
    app.paidModel = data ? data.paidModel || null : null;
    var select = $("fork-point");
    select.replaceChildren();
    app.points.forEach(function (point) {
      select.append(el("option", { value: String(point.seq), text: "#" + point.seq + " run " + point.run + " · " + point.label }));
    });
    var before = app.points.filter(function (point) { return point.beforeResponse; });
    if (before.length) select.value = String(before[before.length > 1 ? 1 : 0].seq);
    $("fork").hidden = !data || app.points.length === 0;
    $("fork-paid").textContent = app.paidModel ? "A fork calls " + app.paidModel + ", a paid model: its first request waits for your approval below." : "";
    pointChosen();
  });
}
function chosenPoint() {
  var seq = Number($("fork-point").value);
  return app.points.find(function (point) { return point.seq === seq; });
}
function pointChosen() {
  var point = chosenPoint();
  var box = $("fork-response");
  var editable = Boolean(point && point.beforeResponse);
  box.disabled = !editable;
  $("fork-edit").checked = false;
  $("fork-edit").disabled = !editable;
  box.value = editable ? point.beforeResponse.text : "";
  $("fork-calls").textContent = editable && point.beforeResponse.calls.length
    ? "recorded calls: " + point.beforeResponse.calls.map(function (call) { return call.name; }).join(", ")
    : "";
}
function forkNow() {
  var point = chosenPoint();
  if (!point) return;
  var body = { session: app.pointsOf, seq: point.seq };
  if (point.beforeResponse && ($("fork-edit").checked || $("fork-response").value !== point.beforeResponse.text)) {
    body.edit = { text: $("fork-response").value, keepCalls: $("fork-keep-calls").checked };
  }
  $("fork-status").textContent = "forking…";
  post("/fork", body).then(function (data) {
    $("fork-status").textContent = "forked: " + data.fork;
    app.wanted = data.fork; app.step = null; app.event = null; app.actor = null;
    render();
  }, function (error) { $("fork-status").textContent = "fork refused: " + error.message; });
}
function decide(session, id, approve) {
  post("/approval", { session: session, id: id, approve: approve, reason: approve ? undefined : "rejected in the inspector" })
    .catch(function (error) { $("fork-status").textContent = "decision refused: " + error.message; });
}
function renderTravel(session) {
  var id = session ? session.id : null;
  var pointsKey = id + ":" + Boolean(session && session.forkable);
  if (pointsKey !== app.pointsKey) { app.pointsKey = pointsKey; loadPoints(id); }
  var key = app.travel + ":" + id;
  if (key === app.travelShown) return;
  app.travelShown = key;
  var origin = $("fork-origin");
  origin.textContent = session && session.forkOf ? "fork of " + session.forkOf.s + " at #" + session.forkOf.seq + " (" + session.forkOf.label + (session.forkOf.edited ? ", response edited" : "") + ")" + (session.failed ? " — failed: " + session.failed : "") : "";
  var forks = $("forks");
  forks.replaceChildren();
  ((session && session.forks) || []).forEach(function (fork) {
    forks.append(el("li", { "data-fork": fork.fork, onclick: function () { app.selected = fork.fork; app.pinned = true; render(); } }, [el("b", { text: fork.fork }), el("small", { text: " at #" + fork.seq + " · " + fork.label })]));
  });
  var approvals = $("approvals");
  approvals.replaceChildren();
  if (session && session.approvals) session.approvals.forEach(function (request) {
    approvals.append(el("li", { "data-approval": request.id, "data-state": request.state }, [
      el("span", { text: request.tool + " " + JSON.stringify(request.args) + " " }),
      request.state === "waiting" ? el("button", { type: "button", class: "approve", text: "approve", onclick: function () { decide(session.id, request.id, true); } }) : el("small", { text: request.state }),
      request.state === "waiting" ? el("button", { type: "button", class: "reject", text: "reject", onclick: function () { decide(session.id, request.id, false); } }) : null,
    ]));
  });
  renderCompare(session && session.compare);
}
/** The fork's transcript beside its original's, the first difference marked. */
function renderCompare(compare) {
  var box = $("compare");
  box.replaceChildren();
  if (!compare) return;
  var rows = [el("tr", {}, [el("th", { text: "#" }), el("th", { text: compare.of }), el("th", { text: compare.s })])];
  var n = Math.max(compare.original.length, compare.fork.length);
  function cell(line, side) {
    return el("td", { class: side }, line ? [el("small", { text: line.role + " " }), el("span", { text: line.text })] : []);
  }
  for (var i = 0; i < n; i++) {
    rows.push(el("tr", { "data-i": String(i), class: compare.diverge === i ? "diverged" : compare.diverge !== null && i > compare.diverge ? "after" : "" }, [
      el("td", { text: compare.diverge === i ? i + " ⟶ diverges" : String(i) }),
      cell(compare.original[i], "original"),
      cell(compare.fork[i], "fork"),
    ]));
  }
  box.append(el("table", {}, rows));
}
// -- readable diagrams: wheel zooms around the pointer, dragging pans, a double click resets;
// hovering an edge highlights it (CSS) ------------------------------------------------------------

function zoomable(chart) {
  var svg = chart.querySelector("svg");
  if (!svg) return;
  var view = { scale: 1, x: 0, y: 0 };
  var drag = null;
  function apply() {
    svg.style.transform = "translate(" + view.x + "px, " + view.y + "px) scale(" + view.scale + ")";
    chart.setAttribute("data-zoom", view.scale.toFixed(2));
  }
  svg.style.transformOrigin = "0 0";
  chart.addEventListener("wheel", function (event) {
    event.preventDefault();
    var box = chart.getBoundingClientRect();
    var px = event.clientX - box.left + chart.scrollLeft;
    var py = event.clientY - box.top + chart.scrollTop;
    var next = Math.min(8, Math.max(0.25, view.scale * (event.deltaY < 0 ? 1.2 : 1 / 1.2)));
    // The point under the pointer stays where it is.
    view.x = px - (px - view.x) * (next / view.scale);
    view.y = py - (py - view.y) * (next / view.scale);
    view.scale = next;
    apply();
  }, { passive: false });
  chart.addEventListener("pointerdown", function (event) {
    if (event.button !== 0) return;
    drag = { x: event.clientX - view.x, y: event.clientY - view.y };
    chart.classList.add("panning");
  });
  window.addEventListener("pointermove", function (event) {
    if (!drag) return;
    view.x = event.clientX - drag.x;
    view.y = event.clientY - drag.y;
    apply();
  });
  window.addEventListener("pointerup", function () { drag = null; chart.classList.remove("panning"); });
  chart.addEventListener("dblclick", function () { view = { scale: 1, x: 0, y: 0 }; apply(); });
}
document.querySelectorAll(".chart").forEach(zoomable);

// A clicked state lists its own transitions: event, guard, target, rule ids (from the machine definitions and their comments).
var transitions = JSON.parse($("transitions").textContent || "{}");
document.querySelectorAll(".chart g.node.state").forEach(function (node) {
  node.addEventListener("click", function () {
    document.querySelectorAll(".chart g.node.clicked").forEach(function (other) { other.classList.remove("clicked"); });
    node.classList.add("clicked");
    var info = transitions[node.id] || { rules: [], transitions: [] };
    var list = info.transitions;
    var box = $("state-info");
    box.hidden = false;
    box.setAttribute("data-state-id", node.id);
    box.replaceChildren(el("b", { text: node.id }), el("span", { class: "rules", text: info.rules.length ? " (" + info.rules.join(", ") + ")" : "" }), el("small", { text: " · " + list.length + " transition" + (list.length === 1 ? "" : "s") + " of its own (a click elsewhere keeps this open)" }), el("ul", {}, list.map(function (t) {
      return el("li", { "data-rules": t.rules.join(" "), text: (t.event || "always") + (t.guard ? " [" + t.guard + "]" : "") + " → " + (t.targets.length ? t.targets.join(", ") : "(stays: actions only)") + (t.rules.length ? " · " + t.rules.join(", ") : "") });
    })));
  });
});

$("fork-point").onchange = pointChosen;
$("fork-go").onclick = forkNow;
$("fork-refresh").onclick = function () { loadPoints(app.pointsOf); };

$("live").onclick = function () { app.step = null; app.event = null; render(); };
var source = new EventSource("/events" + location.search);
source.addEventListener("reset", function (event) {
  app.sessions.clear();
  queue.length = 0;
  enqueue(JSON.parse(event.data));
});
source.onmessage = function (event) { enqueue(JSON.parse(event.data)); };
source.onopen = function () { $("connection").textContent = "connected"; };
source.onerror = function () { $("connection").textContent = "disconnected (retrying)"; };
render();
`;
