// Drives tether's POST /ag-ui with the official @ag-ui/client HttpAgent (npm), one
// scenario per thread, and prints one JSON summary line for the Python test to check.
// Usage: node client.cjs BASE_URL  (env: CALLER_TOKEN, BOSS_TOKEN, SUFFIX; NODE_PATH
// names the node_modules holding @ag-ui/client)
"use strict";
const { HttpAgent, buildResumeArray } = require("@ag-ui/client");

const base = process.argv[2];
const suffix = process.env.SUFFIX || "n";
const bearer = (name) => ({ Authorization: `Bearer ${process.env[name]}` });

function agent(thread, token, messages) {
  const a = new HttpAgent({ url: `${base}/ag-ui`, headers: bearer(token), threadId: thread });
  a.setMessages(messages || []);
  return a;
}

async function run(a, params) {
  const events = [];
  let outcome = null;
  let error = null;
  const result = await a.runAgent(params || {}, {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: ({ event }) => {
      outcome = event.outcome || null;
    },
    onRunErrorEvent: ({ event }) => {
      error = event.message;
    },
  });
  return {
    types: events.map((e) => e.type),
    events,
    outcome,
    error,
    result: result.result,
    newMessages: result.newMessages,
  };
}

const user = (id, content) => ({ id, role: "user", content });

async function main() {
  const out = {};

  // text, reasoning, steps, state
  const text = agent(`text-${suffix}`, "CALLER_TOKEN", [user("u1", "Ann")]);
  const t = await run(text, { runId: "r1" });
  out.text = {
    types: t.types,
    result: t.result,
    assistant: text.messages.filter((m) => m.role === "assistant").map((m) => m.content),
  };

  // backend tools and the state snapshot
  const tools = agent(`tools-${suffix}`, "CALLER_TOKEN", [user("u1", "go")]);
  const tl = await run(tools, { runId: "r1" });
  out.tools = {
    types: tl.types,
    state: tools.state,
    toolMessages: tools.messages.filter((m) => m.role === "tool").map((m) => m.content),
    result: tl.result,
  };

  // interrupts: the outcome, then resume entries (one resolved, one cancelled) by a
  // caller allowed to approve transfers
  const pay = agent(`pay-${suffix}`, "CALLER_TOKEN", [user("u1", "pay")]);
  const p1 = await run(pay, { runId: "r1" });
  const pending = pay.pendingInterrupts.map((i) => ({
    id: i.id,
    reason: i.reason,
    message: i.message,
    toolCallId: i.toolCallId,
    arguments: i.metadata && i.metadata.tether.arguments,
  }));
  const boss = agent(`pay-${suffix}`, "BOSS_TOKEN", pay.messages);
  boss.pendingInterrupts = pay.pendingInterrupts;
  const [first, second] = pay.pendingInterrupts;
  const resume = buildResumeArray(pay.pendingInterrupts, {
    [first.id]: { status: "resolved", payload: "approve" },
    [second.id]: { status: "cancelled" },
  });
  const p2 = await run(boss, { runId: "r2", resume });
  out.pay = {
    outcome: p1.outcome && p1.outcome.type,
    pending,
    resumedOutcome: p2.outcome && p2.outcome.type,
    results: p2.events.filter((e) => e.type === "TOOL_CALL_RESULT").map((e) => [e.toolCallId, e.content]),
    result: p2.result,
    error: p2.error,
    leftPending: boss.pendingInterrupts.length,
  };

  // front-end tools: the run ends with the call pending; its result goes in the next input
  const pick = {
    name: "pick_color",
    description: "Ask the user to pick a colour",
    parameters: { type: "object", properties: { options: { type: "array", items: { type: "string" } } } },
  };
  const front = agent(`front-${suffix}`, "CALLER_TOKEN", [user("u1", "choose")]);
  const f1 = await run(front, { runId: "r1", tools: [pick] });
  const call = front.messages.filter((m) => m.role === "assistant").flatMap((m) => m.toolCalls || [])[0];
  front.addMessage({ id: "tm1", role: "tool", toolCallId: call.id, content: "blue" });
  const f2 = await run(front, { runId: "r2", tools: [pick] });
  out.front = {
    outcome: f1.outcome,
    call: { id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) },
    result: f2.result,
    outcome2: f2.outcome && f2.outcome.type,
  };

  // sub-agent attribution
  const tree = agent(`tree-${suffix}`, "CALLER_TOKEN", [user("u1", "go")]);
  const s1 = await run(tree, { runId: "r1" });
  out.tree = {
    started: s1.events.filter((e) => e.type === "SUBAGENT_STARTED").map((e) => [e.subagentRunId, e.name, e.parentToolCallId]),
    attributed: s1.events.filter((e) => e.subagentRunId && e.type === "TEXT_MESSAGE_CONTENT").map((e) => [e.subagentRunId, e.delta]),
    interrupts: tree.pendingInterrupts.map((i) => i.subagentRunId),
    outcome: s1.outcome && s1.outcome.type,
  };
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.log(JSON.stringify({ crashed: String((err && err.stack) || err) }));
  process.exit(1);
});
