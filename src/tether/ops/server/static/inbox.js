// tether web inbox: the token lives in sessionStorage and goes out as an Authorization
// header on fetch() to this server only; no cookies. All data is put in the page as text
// (textContent), never as HTML.
"use strict";

const KEY = "tether.token";
const MASK = "***";
const DONE = new Set(["completed", "failed", "cancelled"]);
const $ = (id) => document.getElementById(id);
let cursor = null;
let selected = null; // the approval shown in the detail panel
let approvals = [];
const recent = new Map(); // session id -> {approval, decision, status}
let signIns = 0; // which sign-in the update loop belongs to
let me = null; // GET /api/me: name, roles, and the views this token opens (can.inbox/sessions/audit)

function token() { return sessionStorage.getItem(KEY); }

class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : "HTTP " + status);
    this.status = status;
    this.body = body || {};
  }
}

async function api(path, options = {}) {
  const headers = { Authorization: "Bearer " + token(), Accept: "application/json" };
  if (options.body) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { ...options, headers, cache: "no-store", credentials: "omit" });
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

function say(text, ok = false) {
  const el = $("message");
  el.textContent = visible(text);
  el.className = ok ? "ok" : "";
  el.hidden = !text;
}

function age(seconds) {
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    if (seconds >= size) return Math.floor(seconds / size) + unit;
  }
  return Math.floor(seconds) + "s";
}

function json(value) { return typeof value === "string" ? value : JSON.stringify(value); }

// Control, bidi and invisible characters in data are shown as \uNNNN escapes, never obeyed:
// "/etc/\u202etxt.egatsgol/pmt/" must not render as a harmless path. The same characters as
// the CLI's tether/ops/terminal.py (Unicode Cc, Cf, Cs, Co, Cn, Zl, Zp and a few blank
// letters); newline and tab stay. On JSON text the result is still JSON of the same value.
const INVISIBLE = /(?![\n\t])[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164\uffa0]/gu;
function visible(text) {
  return String(text).replace(INVISIBLE, (c) => {
    let out = "";
    for (let i = 0; i < c.length; i++) out += "\\u" + c.charCodeAt(i).toString(16).padStart(4, "0");
    return out;
  });
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = visible(text);
  if (cls) node.className = cls;
  return node;
}

function refused(err) {
  if (err.status === 401) {
    signOut();
    say("Sign-in failed: " + err.message);
  } else if (err.status === 403) {
    say("Refused: " + err.message);
  } else {
    say(err.message || String(err));
  }
}

function showSignedIn(on) {
  const inbox = on && me !== null && me.can.inbox;
  $("login").hidden = on;
  $("inbox").hidden = !inbox;
  $("tabs").hidden = !on;
  $("tab-inbox").hidden = !inbox;
  if (!on) { $("sessions").hidden = true; $("timeline").hidden = true; }
  else if (typeof showTab === "function") showTab(inbox ? "inbox" : "sessions");
  $("signout").hidden = !on;
  $("recent").hidden = !on || recent.size === 0;
}

function signOut() {
  sessionStorage.removeItem(KEY);
  signIns += 1;
  selected = null;
  me = null;
  if (location.hash) history.replaceState(null, "", location.pathname); // nothing stays open
  showSignedIn(false);
}

async function refresh() {
  if (me === null || !me.can.inbox) return; // an auditor: sessions and audit only
  const now = Date.now() / 1000;
  const data = await api("/api/approvals");
  approvals = data.approvals;
  const body = $("approvals").querySelector("tbody");
  body.replaceChildren();
  for (const a of approvals) {
    const row = el("tr");
    row.dataset.id = a.id;
    if (selected && selected.id === a.id) row.className = "selected";
    const expires = a.expires_at === null ? "never" : "in " + age(Math.max(0, a.expires_at - now)) + " (" + a.on_expiry + ")";
    const tool = (a.tool || "(" + a.source + ")") + (a.may_have_run ? " (in doubt: may have run)" : "");
    const cells = [tool, a.server || "-", a.session_id, json(a.arguments), json(a.reason), age(a.age_seconds), expires];
    cells.forEach((text, i) => row.append(el("td", text, i === 3 ? "args" : i === 1 ? "server" : undefined)));
    const open = el("button", a.can_decide ? "Open" : "View");
    open.type = "button";
    open.className = "open";
    open.addEventListener("click", () => select(a.id));
    const last = el("td");
    last.append(open);
    row.append(last);
    body.append(row);
  }
  $("count").textContent = String(approvals.length);
  $("empty").hidden = approvals.length > 0;
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
  if (selected) {
    const still = approvals.find((a) => a.id === selected.id);
    if (still) { selected = still; await showSession(); } else { $("detail").hidden = true; selected = null; }
  }
  await refreshRecent();
}

async function refreshRecent() {
  const list = $("recent-list");
  list.replaceChildren();
  for (const [session, item] of recent) {
    if (!DONE.has(item.status)) {
      try { item.status = (await api("/api/sessions/" + encodeURIComponent(session) + "?tail=0")).status; }
      catch (e) { item.status = "unknown"; }
    }
    const li = el("li");
    li.dataset.session = session;
    li.append(el("code", session), " " + item.decision + " (" + item.approval + ") - session ");
    const status = el("span", item.status, "status");
    status.dataset.status = item.status;
    li.append(status);
    list.append(li);
  }
  $("recent").hidden = recent.size === 0;
}

async function select(id) {
  selected = approvals.find((a) => a.id === id) || null;
  if (!selected) return;
  say("");
  for (const row of $("approvals").querySelectorAll("tbody tr")) {
    row.className = row.dataset.id === id ? "selected" : "";
  }
  $("d-id").textContent = visible(selected.id);
  $("d-session").textContent = visible(selected.session_id);
  $("d-tool").textContent = visible(selected.tool || "(" + selected.source + ": " + selected.name + ")");
  $("d-server").textContent = visible(selected.server || "-");
  $("d-reason").textContent = visible(json(selected.reason));
  $("d-args").textContent = visible(JSON.stringify(selected.arguments, null, 2));
  $("edit").value = visible(JSON.stringify(selected.arguments, null, 2)); // parses to the same value
  $("edit").disabled = !selected.takes_edits;
  // a call a crash left in doubt may have run: its own answers, never a plain "Approve"
  const doubt = Boolean(selected.may_have_run);
  $("answer-confirm").hidden = doubt;
  $("confirm-buttons").hidden = doubt;
  $("answer-in-doubt").hidden = !doubt;
  $("in-doubt-buttons").hidden = !doubt;
  $("skip-result").value = "";
  $("note").value = "";
  $("d-view-only").hidden = selected.can_decide;
  $("detail").hidden = false;
  await showSession();
}

async function showSession() {
  if (!selected) return;
  const s = await api("/api/sessions/" + encodeURIComponent(selected.session_id) + "?tail=20");
  const status = $("d-status");
  status.textContent = visible(s.status);
  status.dataset.status = s.status;
  const waiting = s.waiting_for.find((w) => w.id === selected.interrupt_id);
  const callId = waiting && waiting.tool_call ? waiting.tool_call.id : null;
  const list = $("transcript");
  list.replaceChildren();
  $("t-count").textContent = "(last " + s.messages.length + " of " + s.messages_total + " messages)";
  for (const m of s.messages) {
    for (const b of m.content) list.append(block(m.role, b, callId));
  }
  for (const c of s.open_batch || []) {
    if (c.result) { list.append(block("tool", c.result, callId)); continue; }
    const li = el("li");
    if (c.in_doubt) li.append(el("span", "in doubt", "role"), el("span", c.name + " (" + c.id + "): started, no result saved: may have run", "doubt"));
    else li.append(el("span", "waiting", "role"), el("span", c.name + " (" + c.id + "): not run yet", "muted"));
    if (c.id === callId) { li.classList.add("here"); li.append(el("span", "  ← waits for this decision", "muted")); }
    list.append(li);
  }
}

function block(role, b, callId) {
  const li = el("li");
  li.append(el("span", role, "role"));
  if (b.type === "text" || b.type === "reasoning") {
    li.append(el("span", (b.type === "reasoning" ? "reasoning: " : "") + b.text));
  } else if (b.type === "tool_call") {
    li.append(el("span", "→ " + b.name + "(" + JSON.stringify(b.arguments) + ")", "call"));
    if (b.edited) li.append(el("span", "  ran with " + JSON.stringify(b.edited.arguments) + " (" + (b.edited.label || "edited by " + (b.edited.decided_by || "a resume answer")) + ")", "call"));
    if (b.id === callId) { li.classList.add("here"); li.append(el("span", "  ← this request", "muted")); }
  } else {
    li.append(el("span", "← " + b.name + " [" + b.status + "]: " + b.content, "result"));
  }
  return li;
}

function editedArgs() {
  if (!selected.takes_edits) return null;
  let value;
  try { value = JSON.parse($("edit").value); } catch (e) { throw new Error("the arguments are not valid JSON: " + e.message); }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("the arguments must be a JSON object");
  const changed = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === MASK) continue; // a masked secret left as is: the real value stays
    if (JSON.stringify(v) !== JSON.stringify(selected.arguments[k])) changed[k] = v;
  }
  return Object.keys(changed).length ? changed : null;
}

const DECIDED = { approve: "Approved ", deny: "Denied ", retry: "Retry (the call runs again) for ", skip: "Skipped with your result: ", abort: "Aborted the run of " };
const BUTTONS = ["approve", "deny", "retry", "skip", "abort"];

async function decide(decision) {
  if (!selected) return;
  const target = selected;
  const body = { decision };
  const note = $("note").value.trim();
  if (note) body.note = note;
  if (decision === "skip") {
    const result = $("skip-result").value;
    if (!result.trim()) { say("Skip needs a result: type what the call returned (the model reads it instead of running the call)."); return; }
    body.result = result;
  }
  try {
    const edited = decision === "approve" ? editedArgs() : null;
    if (edited) body.edited_args = edited;
  } catch (e) { say(e.message); return; }
  for (const b of BUTTONS) $(b).disabled = true;
  try {
    const done = await api("/api/approvals/" + encodeURIComponent(target.id) + "/decision", { method: "POST", body: JSON.stringify(body) });
    recent.set(done.session_id, { approval: done.id, decision: done.may_have_run ? decision : done.decision, status: "?" });
    say(DECIDED[decision] + done.id + " as " + done.decided_by + "; the session resumes when a worker picks it up.", true);
    selected = null;
    $("detail").hidden = true;
    await refresh();
  } catch (err) {
    if (err.status === 409) say("Conflict: " + err.message);
    else refused(err);
  } finally {
    for (const b of BUTTONS) $(b).disabled = false;
  }
}

async function poll(generation) {
  // one loop per sign-in: a loop of an earlier sign-in stops at its next answer
  while (token() && generation === signIns) {
    try {
      const q = cursor === null ? "" : "?since=" + encodeURIComponent(cursor) + "&wait=20";
      const event = await api("/api/events" + q);
      if (generation !== signIns) break;
      if (event.cursor !== cursor) {
        cursor = event.cursor;
        await refresh();
        if (typeof sessionsChanged === "function") await sessionsChanged(); // sessions.js
      }
    } catch (err) {
      if (generation !== signIns) break;
      refused(err);
      if (err.status === 401 || err.status === 403) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

async function start() {
  try {
    me = await api("/api/me");
    await refresh();
  } catch (err) {
    refused(err);
    if (err.status === 401) return;
    if (err.status === 403) { showSignedIn(false); sessionStorage.removeItem(KEY); return; }
  }
  const linked = location.hash; // showSignedIn picks a tab, which clears the fragment
  showSignedIn(true);
  cursor = null;
  signIns += 1;
  poll(signIns); // first: nothing a link holds may keep the live updates from starting
  if (linked && typeof openLinked === "function") { history.replaceState(null, "", linked); openLinked(); }
}

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("token").value.trim());
    $("token").value = "";
    say("");
    start();
  });
  $("signout").addEventListener("click", () => { signOut(); say("Signed out.", true); });
  $("approve").addEventListener("click", () => decide("approve"));
  $("deny").addEventListener("click", () => decide("deny"));
  for (const b of ["retry", "skip", "abort"]) $(b).addEventListener("click", () => decide(b));
  // recent sessions: also poll their status every 2 s until they are done
  setInterval(() => {
    if (token() && [...recent.values()].some((r) => !DONE.has(r.status))) refreshRecent().catch(() => {});
  }, 2000);
  if (token()) start();
});
