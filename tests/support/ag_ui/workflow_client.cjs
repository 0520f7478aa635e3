// Drives a workflow thread of tether's POST /ag-ui with the official @ag-ui/client
// HttpAgent: a run to the branch's interrupt, then a resume answering every pending one.
// Usage: node workflow_client.cjs BASE_URL THREAD  (env: CALLER_TOKEN, BOSS_TOKEN; NODE_PATH
// names the node_modules holding @ag-ui/client). Prints one JSON summary line.
"use strict";
const { HttpAgent, buildResumeArray } = require("@ag-ui/client");

const [base, thread] = process.argv.slice(2);

function agent(token, messages) {
  const headers = { Authorization: `Bearer ${process.env[token]}` };
  const a = new HttpAgent({ url: `${base}/ag-ui`, headers, threadId: thread });
  a.setMessages(messages);
  return a;
}

async function run(a, params) {
  const events = [];
  let outcome = null;
  let error = null;
  const result = await a.runAgent(params, {
    onEvent: ({ event }) => events.push(event),
    onRunFinishedEvent: ({ event }) => { outcome = event.outcome || null; },
    onRunErrorEvent: ({ event }) => { error = event.message; },
  });
  return { types: events.map((e) => e.type), events, outcome, error, result: result.result };
}

async function main() {
  const caller = agent("CALLER_TOKEN", [{ id: "u1", role: "user", content: "the plan" }]);
  const first = await run(caller, { runId: "r1" });
  const pending = caller.pendingInterrupts.map((i) => ({
    id: i.id,
    message: i.message,
    subagentRunId: i.subagentRunId || null,
    reason: i.reason,
    toolCallId: i.toolCallId,
    arguments: i.metadata && i.metadata.tether && i.metadata.tether.arguments,
  }));
  const boss = agent("BOSS_TOKEN", caller.messages);
  boss.pendingInterrupts = caller.pendingInterrupts;
  const answers = {};
  for (const i of caller.pendingInterrupts) answers[i.id] = { status: "resolved", payload: "approve" };
  const second = await run(boss, { runId: "r2", resume: buildResumeArray(caller.pendingInterrupts, answers) });
  const started = (r) => r.events.filter((e) => e.type === "SUBAGENT_STARTED").map((e) => e.subagentRunId);
  console.log(JSON.stringify({
    outcome: first.outcome && first.outcome.type,
    error: first.error,
    started: started(first),
    pending,
    resumedOutcome: second.outcome && second.outcome.type,
    resumedError: second.error,
    result: second.result,
    leftPending: boss.pendingInterrupts.length,
  }));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
