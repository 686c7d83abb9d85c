/**
 * The page's script (plain browser JS, inlined by page.ts; no backticks or `${` in it, as it lives
 * in a template string). Messages are queued as they arrive and applied once per animation frame,
 * so a 3,000-delta response redraws at the screen's rate, not the stream's.
 */
export const PAGE_SCRIPT = String.raw`
"use strict";
var app = { sessions: new Map(), selected: null, pinned: false, step: null, event: null, actor: null, frames: 0, applied: 0 };
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
    var kids = children.get(parent) || [];
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
