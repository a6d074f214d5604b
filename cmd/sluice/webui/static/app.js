// The live page of sluice run (docs/operations.md, "Web UI"): it asks /api/state once a
// second and draws the graph once, then updates its counters, working out rates from the
// previous answer. Every text from the run is set with textContent, never parsed as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const W = 220, H = 92, GAP_X = 70, GAP_Y = 22, PAD = 14, LINE = 16;
const $ = (id) => document.getElementById(id);

let prev = null;     // the previous state, for rates
let graphKey = "";   // the graph drawn, to draw again only when it changes

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function html(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

const count = (n) => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));

function perSecond(name, field, st) {
  const old = prev && prev.nodes.find((n) => n.name === name);
  const now = st.nodes.find((n) => n.name === name)[field];
  if (!old || old[field] === null || now === null || st.at <= prev.at) return "";
  const r = (now - old[field]) / ((st.at - prev.at) / 1000);
  return " · " + (r >= 100 ? Math.round(r).toLocaleString("en-US") : r.toFixed(1)) + "/s";
}

const place = (n) => ({ x: PAD + n.layer * (W + GAP_X), y: PAD + n.row * (H + GAP_Y) });

function drawGraph(st) {
  const g = $("graph");
  g.replaceChildren();
  let width = 0, height = 0;
  for (const n of st.nodes) {
    const p = place(n);
    width = Math.max(width, p.x + W + PAD);
    height = Math.max(height, p.y + H + PAD);
  }
  g.setAttribute("width", width);
  g.setAttribute("height", height);
  g.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const defs = svg("defs");
  for (const id of ["arrow", "arrow-errors"]) {
    const m = svg("marker", { id, viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 8, markerHeight: 8, orient: "auto" });
    m.append(svg("path", { d: "M0,0 L8,4 L0,8 z" }));
    defs.append(m);
  }
  g.append(defs);
  for (const e of st.edges) {
    const a = place(st.nodes[e.from]), b = place(st.nodes[e.to]);
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    g.append(svg("path", { class: "edge" + (e.errors ? " errors" : ""), d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`,
      "marker-end": `url(#arrow${e.errors ? "-errors" : ""})` }));
    if (e.label) g.append(svg("text", { class: "edge-label", x: mx, y: (y1 + y2) / 2 - 4, "text-anchor": "middle" }, e.label));
  }
  for (const n of st.nodes) {
    const p = place(n);
    const node = svg("g", { class: "node " + n.kind, "data-node": n.name, transform: `translate(${p.x},${p.y})` });
    node.append(svg("rect", { width: W, height: H }));
    node.append(svg("text", { class: "name", x: 10, y: 18 }, n.name));
    node.append(svg("text", { class: "type", x: 10, y: 18 + LINE }, n.type));
    const lines = n.kind === "source" ? ["out", "errors"] : n.kind === "sink" ? ["in", "errors"] : ["in", "out", "errors"];
    lines.forEach((what, i) => {
      const t = svg("text", { class: what, x: 10, y: 18 + LINE * (i + 2) }, what + " ");
      t.append(svg("tspan", { class: "count" }), svg("tspan", { class: "rate" }));
      node.append(t);
    });
    g.append(node);
  }
}

function updateGraph(st) {
  for (const n of st.nodes) {
    const node = document.querySelector(`#graph [data-node="${CSS.escape(n.name)}"]`);
    for (const what of ["in", "out", "errors"]) {
      const t = node.querySelector("." + what);
      if (!t) continue;
      t.querySelector(".count").textContent = count(n[what]);
      t.querySelector(".rate").textContent = what === "errors" ? "" : perSecond(n.name, what, st);
      if (what === "errors") t.classList.toggle("some", n.errors > 0);
      if (what === "out" && n.outputs && Object.keys(n.outputs).length > 1) {
        t.querySelector(".rate").textContent += " (" + Object.entries(n.outputs).map(([k, v]) => `${k} ${count(v)}`).join(", ") + ")";
      }
    }
  }
}

function fillTable(id, rows) {
  $(id).querySelector("tbody").replaceChildren(...rows.map((cells) => {
    const tr = html("tr");
    for (const c of cells) tr.append(c instanceof Node ? (() => { const td = html("td"); td.append(c); return td; })() : html("td", c));
    return tr;
  }));
  $(id).hidden = rows.length === 0;
  $(id + "-empty").hidden = rows.length > 0;
}

function offsets(next) {
  return Object.entries(next || {}).map(([src, parts]) =>
    src + ": " + Object.entries(parts).map(([p, o]) => `p${p}@${count(o)}`).join(" ")).join("; ");
}

function lineage(l) {
  const c = html("code", "spec " + (l.spec_hash || "?").slice(0, 12));
  c.title = "spec hash " + (l.spec_hash || "?");
  const span = html("span");
  span.append(c, " · sluice " + (l.version || "?"));
  if (l.git_commit) span.append(" · git " + l.git_commit.slice(0, 10) + (l.git_dirty ? " (uncommitted changes)" : ""));
  return span;
}

function update(st) {
  $("pipeline").textContent = st.pipeline;
  for (const id of ["live", "ready"]) {
    $(id).textContent = st[id] === "ok" ? "yes" : "no: " + st[id];
    $(id).classList.toggle("bad", st[id] !== "ok");
  }
  $("epochs").textContent = count(st.epochs);
  $("error-rows").textContent = count(st.error_rows);
  $("updated").textContent = new Date(st.at).toLocaleTimeString();
  $("updated").classList.remove("bad");
  const key = JSON.stringify([st.nodes.map((n) => [n.name, n.type, n.layer, n.row]), st.edges]);
  if (key !== graphKey) {
    drawGraph(st);
    graphKey = key;
  }
  updateGraph(st);
  fillTable("lag", st.lag.map((l) => [l.source, l.partition, count(l.records), l.seconds === null ? "–" : l.seconds.toFixed(1)]));
  fillTable("commits", st.commits.map((c) => [c.sink, String(c.epoch), new Date(c.at).toLocaleTimeString(), offsets(c.next), lineage(c)]));
  $("errors").replaceChildren(...st.errors.map((e) => {
    const li = html("li", `${e.node}.${e.output} at ${new Date(e.at).toLocaleTimeString()}`);
    li.append(html("pre", e.row));
    return li;
  }));
  $("errors-empty").hidden = st.errors.length > 0;
  prev = st;
}

async function poll() {
  try {
    const res = await fetch("/api/state", { cache: "no-store" });
    if (!res.ok) throw new Error(res.status + " " + (await res.text()));
    update(await res.json());
  } catch (err) {
    $("updated").textContent = "no answer from the run (" + err.message + ")";
    $("updated").classList.add("bad");
  }
  setTimeout(poll, 1000);
}

poll();
