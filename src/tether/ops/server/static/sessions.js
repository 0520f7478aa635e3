// tether web inbox, sessions: the paged list, one session's timeline with its charts, and
// the audit view. Uses inbox.js's api(), el(), visible(), say(), refused() and age(): all
// data goes into the page as text (textContent through visible()), charts are SVG built
// with DOM calls, nothing is loaded from elsewhere.
"use strict";

const PAGE = 50;
const SVG = "http://www.w3.org/2000/svg";
const sessionsView = { offset: 0, total: 0, open: null, timer: null };
let timelineData = null;
let auditSession = null; // the session whose audit records are shown

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = visible(text);
  return node;
}

function seconds(s) {
  if (s < 1) return Math.round(s * 1000) + " ms";
  if (s < 120) return s.toFixed(1) + " s";
  return age(s);
}

function canAudit() { return me !== null && me.can.audit; }

function showTab(name) {
  if (name === "inbox" && me !== null && !me.can.inbox) name = "sessions";
  $("tab-inbox").classList.toggle("on", name === "inbox");
  $("tab-sessions").classList.toggle("on", name !== "inbox");
  $("inbox").hidden = name !== "inbox";
  $("sessions").hidden = name !== "sessions";
  $("timeline").hidden = name !== "timeline";
  if (name !== "timeline") {
    sessionsView.open = null;
    if (location.hash) history.replaceState(null, "", location.pathname);
  }
}

function openLinked() {
  // /#timeline=ID (an approval's "links.page", or a shared link) opens that timeline; a
  // fragment that is not percent-encoding (decodeURIComponent throws URIError) is dropped
  const match = /^#timeline=(.+)$/.exec(location.hash);
  if (!match) return;
  let id;
  try { id = decodeURIComponent(match[1]); } catch (e) {
    history.replaceState(null, "", location.pathname);
    say("Ignored a malformed link: #timeline= must be followed by a percent-encoded session id.");
    return;
  }
  openTimeline(id);
}

async function sessionsChanged() {
  // called by inbox.js when the shared change cursor moves
  if (!$("sessions").hidden) await loadSessions();
  if (!$("timeline").hidden && sessionsView.open !== null) await loadTimeline(sessionsView.open, true);
}

// -- the sessions list ------------------------------------------------------------------

async function loadSessions() {
  const q = new URLSearchParams({ limit: String(PAGE), offset: String(sessionsView.offset) });
  if ($("s-status").value) q.set("status", $("s-status").value);
  if ($("s-search").value) q.set("q", $("s-search").value);
  const data = await api("/api/sessions?" + q.toString());
  sessionsView.total = data.total;
  const body = $("session-list").querySelector("tbody");
  body.replaceChildren();
  for (const s of data.sessions) {
    const row = el("tr");
    row.dataset.session = s.session_id;
    const id = el("td");
    const open = el("button", s.session_id, "link");
    open.type = "button";
    open.addEventListener("click", () => openTimeline(s.session_id));
    id.append(open);
    const status = el("td", s.status, "status");
    status.dataset.status = s.status;
    // the store's listing redacted it like every view; el() shows it as escaped text
    const prompt = el("td", s.first_prompt == null ? "" : s.first_prompt, "prompt");
    if (s.first_prompt) prompt.title = visible(s.first_prompt);
    row.append(id, prompt, status, el("td", age(s.age_seconds)), el("td", age(s.idle_seconds) + " ago"),
      el("td", s.model_calls), el("td", s.tool_calls), el("td", s.total_tokens.toLocaleString()), el("td", usd(s.cost)),
      el("td", s.pending_approvals || "", s.pending_approvals ? "badge-cell" : undefined));
    body.append(row);
  }
  drawMatches(data.matches);
  $("s-total").textContent = String(data.total);
  const first = data.total === 0 ? 0 : data.offset + 1;
  $("s-range").textContent = first + "–" + (data.offset + data.sessions.length) + " of " + data.total;
  $("s-prev").disabled = data.offset === 0;
  $("s-next").disabled = data.offset + data.sessions.length >= data.total;
  $("s-updated").textContent = "updated " + new Date().toLocaleTimeString();
}

function drawMatches(matches) {
  // the full-text hits of the search box's words (GET /api/sessions?q=): snippets the
  // server redacted, shown as escaped text like every value
  const list = $("match-list");
  list.replaceChildren();
  $("s-matches").hidden = !matches || matches.length === 0;
  for (const m of matches || []) {
    const item = el("li", undefined, "match");
    item.dataset.session = m.session_id;
    const open = el("button", m.session_id, "link");
    open.type = "button";
    open.addEventListener("click", () => openTimeline(m.session_id));
    item.append(open, el("span", " " + m.role + " · " + new Date(m.at * 1000).toLocaleString() + " ", "muted"),
      el("span", m.snippet, "snippet"));
    list.append(item);
  }
}

function reloadSessions(reset) {
  if (reset) sessionsView.offset = 0;
  loadSessions().catch(refused);
}

// -- one session's timeline ---------------------------------------------------------------

async function openTimeline(sessionId) {
  sessionsView.open = sessionId;
  history.replaceState(null, "", "#timeline=" + encodeURIComponent(sessionId)); // a link to share
  showTab("timeline");
  $("step-detail").hidden = true;
  $("audit-view").hidden = true;
  try { await loadTimeline(sessionId, false); } catch (err) { refused(err); }
}

async function loadTimeline(sessionId, keepDetail) {
  const t = await api("/api/timeline/" + encodeURIComponent(sessionId));
  if (sessionsView.open !== sessionId) return; // another one was opened meanwhile
  timelineData = t;
  $("tl-id").textContent = visible(t.session_id);
  const status = $("tl-status");
  status.textContent = visible(t.status);
  status.dataset.status = t.status;
  $("tl-holder").textContent = t.lease_holder ? visible("running in " + t.lease_holder) : "";
  $("tl-audit").hidden = !canAudit();
  $("tl-broken").hidden = t.notes.length === 0;
  $("tl-broken").textContent = visible(t.notes.join("; "));
  drawTokens(t.usage);
  drawSplit(t.time_split);
  drawSteps(t);
  if (!keepDetail) $("step-detail").hidden = true;
}

function drawSteps(t) {
  const body = $("steps").querySelector("tbody");
  body.replaceChildren();
  const length = t.axis.length || 1;
  t.steps.forEach((s, i) => {
    const row = el("tr", undefined, "step kind-" + s.kind + (s.failed ? " failed" : "") + (s.depth ? " nested" : ""));
    row.dataset.index = String(i);
    row.dataset.kind = s.kind;
    row.dataset.status = s.status;
    row.dataset.depth = String(s.depth);
    row.dataset.session = s.session_id;
    const status = el("td", s.status, "status");
    status.dataset.status = s.status;
    const bar = svg("svg", { viewBox: "0 0 1000 12", preserveAspectRatio: "none", class: "axis" });
    const place = t.axis.places[i];
    const x = (place.x / length) * 1000;
    const w = Math.max(2, (place.w / length) * 1000);
    bar.append(svg("rect", { x: x.toFixed(1), y: 1, width: w.toFixed(1), height: 10, class: "span-" + s.kind + (s.failed ? " span-failed" : "") }));
    const axis = el("td");
    axis.append(bar);
    // a sub-agent's rows are indented under the tool call that ran it
    const title = el("td", (s.depth ? "↳ " : "") + s.title, "title");
    title.style.paddingLeft = (0.6 + 1.4 * s.depth) + "em";
    row.append(el("td", i + 1), el("td", "+" + seconds(Math.max(0, s.start - t.start))),
      title, status, el("td", seconds(s.duration)), axis);
    row.addEventListener("click", () => showStep(i));
    body.append(row);
  });
}

function field(list, name, value) {
  if (value === null || value === undefined || value === "") return;
  list.append(el("dt", name), el("dd", typeof value === "string" ? value : JSON.stringify(value)));
}

function showStep(index) {
  const s = timelineData.steps[index];
  for (const row of $("steps").querySelectorAll("tbody tr")) row.classList.toggle("selected", row.dataset.index === String(index));
  $("sd-title").textContent = visible((index + 1) + ". " + s.title);
  const list = $("sd-fields");
  list.replaceChildren();
  const d = s.detail;
  field(list, "status", s.status);
  field(list, "when", new Date(s.start * 1000).toLocaleString() + " (" + seconds(s.duration) + ")");
  if (s.depth) field(list, "session", s.session_id + " (sub-agent, level " + s.depth + ")");
  if (s.kind === "model") {
    field(list, "tokens", d.input_tokens + " in, " + d.output_tokens + " out");
    if (d.cost != null) field(list, "cost", usd(d.cost));
    field(list, "model", d.model);
    field(list, "attempts", String(d.attempts));
    for (const r of d.retries || []) field(list, "retry", "attempt " + r.attempt + " failed: " + r.reason + " (" + r.provider + ", waited " + seconds(r.delay) + ")" + (r.error ? ": " + r.error : ""));
    for (const f of d.fallbacks || []) field(list, "fallback", f.from + " → " + f.to + ": " + f.reason + (f.error ? ": " + f.error : ""));
  }
  if (s.kind === "compaction") {
    field(list, "reason", d.reason);
    field(list, "manager", d.manager);
    field(list, "tokens", "~" + d.tokens_before + " → ~" + d.tokens_after + " (estimated)");
    field(list, "messages", "[" + d.messages[0] + ", " + d.messages[1] + ") replaced by " + (d.summary === "none" ? "nothing" : "a " + d.summary + " marker"));
    field(list, "summary", d.summary_text);
  }
  if (s.kind === "tool") {
    field(list, "arguments", d.arguments);
    if (d.edited) field(list, "ran with", JSON.stringify(d.edited.arguments) + " (" + (d.edited.label || "edited by " + (d.edited.decided_by || "a resume answer")) + ")");
    field(list, "result", d.result);
    if (d.duration_ms !== undefined && d.duration_ms !== null) field(list, "measured", d.duration_ms + " ms");
    if (d.child_session) field(list, "sub-agent", d.child_session.session_id + " (" + d.child_session.status + ", " + d.child_session.steps + " rows below)" + (d.child_session.error ? ": " + d.child_session.error : ""));
  }
  if (s.kind === "interrupt") {
    field(list, "reason", d.reason);
    if (d.approval) {
      const a = d.approval;
      field(list, "approval", (a.label || a.status + (a.decided_by ? " by " + a.decided_by : "")) + (a.decided_at ? " at " + new Date(a.decided_at * 1000).toLocaleString() : ""));
      field(list, "note", a.note);
    }
    field(list, "answer", d.answer);
  }
  if (s.kind === "run" && d.usage) field(list, "run usage", d.usage.total_tokens + " tokens, " + d.usage.model_calls + " model calls (" + d.usage.model_retries + " retries, " + d.usage.model_fallbacks + " fallbacks), " + d.usage.tool_calls + " tool calls");
  const links = $("sd-links");
  links.replaceChildren();
  if (s.approval_id) links.append(linkButton("approval " + s.approval_id, () => showApproval(s.approval_id, s)));
  if (s.parent !== null) links.append(linkButton("↑ " + (s.parent + 1) + ". " + timelineData.steps[s.parent].title, () => showStep(s.parent)));
  if (s.detail.child_session) links.append(linkButton("open " + s.detail.child_session.session_id, () => openTimeline(s.detail.child_session.session_id)));
  if (s.call_id) {
    for (const [j, other] of timelineData.steps.entries()) {
      if (j !== index && other.call_id === s.call_id && other.session_id === s.session_id) links.append(linkButton("→ " + (j + 1) + ". " + other.title, () => showStep(j)));
    }
  }
  if (s.audit_seqs.length && canAudit()) links.append(linkButton("audit records " + s.audit_seqs.join(", "), () => showAudit(s.audit_seqs, s.session_id)));
  $("sd-json").textContent = visible(JSON.stringify(d, null, 2));
  $("step-detail").hidden = false;
}

function linkButton(text, action) {
  const b = el("button", text, "link");
  b.type = "button";
  b.addEventListener("click", () => { say(""); action(); });
  return b;
}

async function showApproval(id, step) {
  const known = step && step.detail.approval;
  if (me !== null && !me.can.inbox && known) { // no inbox access: what the timeline knows
    say("Approval " + id + ": " + known.status + (known.decided_by ? " by " + known.decided_by : "") + (known.note ? " (" + known.note + ")" : ""), true);
    return;
  }
  try {
    const a = await api("/api/approvals/" + encodeURIComponent(id));
    if (a.status === "pending") {
      showTab("inbox");
      if (approvals.some((x) => x.id === id)) await select(id);
      return;
    }
    say("Approval " + id + ": " + a.status + (a.decided_by ? " by " + a.decided_by : "") + (a.note ? " (" + a.note + ")" : ""), true);
  } catch (err) { refused(err); }
}

// -- charts (inline SVG) ------------------------------------------------------------------

function tokens(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
  if (n >= 1e4) return Math.round(n / 1e3) + "k";
  return String(Math.round(n));
}

// a cost is a decimal string (USD) or null when no call had a known price
function usd(cost) { return cost == null ? "-" : "$" + Number(cost).toPrecision(4); }

function drawTokens(usage) {
  const box = $("chart-tokens");
  box.replaceChildren();
  // L and B leave room for the axis values: tokens on the left, call numbers below
  const W = 600, H = 170, P = 6, L = 46, B = 18;
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img" });
  chart.append(svg("title", {}, "tokens per model call"));
  const calls = usage.calls;
  const top = Math.max(1, ...calls.map((c) => c.input + c.output));
  const total = Math.max(1, usage.total_tokens);
  const base = H - B, height = base - P;
  for (const [value, label] of [[0, "0"], [top / 2, tokens(top / 2)], [top, tokens(top)]]) {
    const y = base - (height * value) / top;
    chart.append(svg("line", { x1: L, x2: W - P, y1: y.toFixed(1), y2: y.toFixed(1), class: "gridline" }));
    chart.append(svg("text", { x: L - 4, y: (y + 4).toFixed(1), "text-anchor": "end", class: "tick tick-y" }, label));
  }
  const step = (W - L - P) / Math.max(1, calls.length);
  const points = [];
  calls.forEach((c, i) => {
    const x = L + i * step;
    const hIn = (height * c.input) / top;
    const hOut = (height * c.output) / top;
    const w = Math.max(1, step * 0.8);
    const bin = svg("rect", { x: x.toFixed(1), y: (base - hIn).toFixed(1), width: w.toFixed(1), height: hIn.toFixed(1), class: "bar-in" });
    bin.append(svg("title", {}, "call " + (i + 1) + ": " + c.input + " in"));
    const bout = svg("rect", { x: x.toFixed(1), y: (base - hIn - hOut).toFixed(1), width: w.toFixed(1), height: hOut.toFixed(1), class: "bar-out" });
    bout.append(svg("title", {}, "call " + (i + 1) + ": " + c.output + " out"));
    bin.addEventListener("click", () => showStep(c.step));
    bout.addEventListener("click", () => showStep(c.step));
    chart.append(bin, bout);
    if (i === 0 || i === calls.length - 1) {
      chart.append(svg("text", { x: (x + w / 2).toFixed(1), y: H - 4, "text-anchor": "middle", class: "tick tick-x" }, "call " + (i + 1)));
    }
    points.push((x + w / 2).toFixed(1) + "," + (base - (height * c.cumulative) / total).toFixed(1));
  });
  if (points.length) chart.append(svg("polyline", { points: points.join(" "), class: "cumulative" }));
  box.append(chart);
  $("tl-tokens").textContent = "(" + calls.length + " calls, " + usage.total_tokens.toLocaleString() + " tokens, cost " + usd(usage.cost) + "; left axis: tokens per call, the line: cumulative share of " + usage.total_tokens.toLocaleString() + ")";
}

const PARTS = [["model", "model"], ["tools", "tools"], ["waiting", "waiting for humans"], ["tether", "tether"]];

function drawSplit(split) {
  const box = $("chart-split");
  box.replaceChildren();
  const legend = $("split-legend");
  legend.replaceChildren();
  const W = 600, H = 24;
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart split", role: "img" });
  chart.append(svg("title", {}, "time split"));
  const total = Math.max(1e-9, split.total);
  let x = 0;
  for (const [key, label] of PARTS) {
    const w = (W * split[key]) / total;
    const part = svg("rect", { x: x.toFixed(2), y: 0, width: w.toFixed(2), height: H, class: "part-" + key });
    part.append(svg("title", {}, label + ": " + seconds(split[key])));
    chart.append(part);
    x += w;
    const item = el("li");
    item.append(el("span", "", "swatch part-" + key), el("span", label + " " + seconds(split[key]) + " (" + Math.round((100 * split[key]) / total) + "%)"));
    legend.append(item);
  }
  box.append(chart);
  $("tl-span").textContent = "(" + seconds(split.total) + " from first to last step)";
}

// -- audit view (auditor or admin) ---------------------------------------------------------

async function showAudit(highlight, sessionId) {
  const id = sessionId || sessionsView.open;
  if (id === null) return;
  try {
    const [data, verify] = await Promise.all([
      api("/api/audit?session=" + encodeURIComponent(id) + "&limit=10000"),
      api("/api/audit/verify"),
    ]);
    auditSession = id;
    $("av-session").textContent = visible(id);
    const body = $("audit-records").querySelector("tbody");
    body.replaceChildren();
    for (const r of data.records) {
      const row = el("tr", undefined, (highlight || []).includes(r.seq) ? "selected" : undefined);
      row.dataset.seq = String(r.seq);
      row.append(el("td", r.seq), el("td", new Date(r.at * 1000).toLocaleString()), el("td", r.event), el("td", JSON.stringify(r.data), "args"));
      body.append(row);
    }
    const v = $("av-verify");
    v.textContent = verify.ok ? "chain verified (" + verify.checked + " records)" : "CHAIN BROKEN at " + (verify.first_bad ? verify.first_bad.position + ": " + verify.first_bad.reason : "?");
    v.className = verify.ok ? "muted ok" : "bad";
    $("audit-view").hidden = false;
  } catch (err) {
    if (err.status === 403) say("The audit view needs the auditor or admin role: " + err.message);
    else refused(err);
  }
}

async function exportAudit() {
  // the server's export (GET /api/audit/export): the chain status line, then the records
  if (auditSession === null) return;
  const response = await fetch("/api/audit/export?session=" + encodeURIComponent(auditSession), {
    headers: { Authorization: "Bearer " + token() }, cache: "no-store", credentials: "omit",
  });
  if (!response.ok) {
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    refused(new ApiError(response.status, body));
    return;
  }
  const blob = await response.blob();
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "audit-" + auditSession.replace(/[^A-Za-z0-9._-]/g, "_") + ".jsonl";
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

document.addEventListener("DOMContentLoaded", () => {
  $("tab-inbox").addEventListener("click", () => { showTab("inbox"); });
  $("tab-sessions").addEventListener("click", () => { showTab("sessions"); reloadSessions(false); });
  $("s-status").addEventListener("change", () => reloadSessions(true));
  $("s-search").addEventListener("input", () => {
    clearTimeout(sessionsView.timer);
    sessionsView.timer = setTimeout(() => reloadSessions(true), 250);
  });
  $("s-filter").addEventListener("submit", (e) => { e.preventDefault(); reloadSessions(true); });
  $("s-prev").addEventListener("click", () => { sessionsView.offset = Math.max(0, sessionsView.offset - PAGE); reloadSessions(false); });
  $("s-next").addEventListener("click", () => { sessionsView.offset += PAGE; reloadSessions(false); });
  $("tl-back").addEventListener("click", () => { showTab("sessions"); reloadSessions(false); });
  $("tl-audit").addEventListener("click", () => showAudit([]));
  $("av-export").addEventListener("click", () => { exportAudit().catch(refused); });
  $("d-timeline").addEventListener("click", () => { if (selected) openTimeline(selected.session_id); });
});
