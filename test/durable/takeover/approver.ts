/**
 * The other process of approval-takeover-watch.test.ts: loads session "s" from the file store at
 * `root`, approves each call the stored run waits for, and prints what it saw as one JSON line.
 * The deploy tool counts its runs in `root/deploys` (appended by every process that runs it).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { Agent } from "../../../src/agent.js";
import { createFileStore } from "../../../src/durable/file-store.js";
import { createScriptedModel } from "../../../src/providers/scripted.js";
import { makeTool, ok } from "../../agent/helpers.js";

const root = process.argv[2] as string;
const deploy = makeTool(
	"deploy",
	async () => {
		appendFileSync(join(root, "deploys"), `${process.pid}\n`);
		return ok("deployed");
	},
	{ needsApproval: true },
);
const scripted = createScriptedModel([{ content: "done" }]);
const agent = await Agent.load({ store: createFileStore(root, { fsync: "never" }), sessionId: "s", initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
const waiting = agent.pendingApprovals.map((call) => call.toolCallId);
for (const id of waiting) await agent.approve(id);
await agent.waitForIdle();
await agent.saved();
process.stdout.write(`${JSON.stringify({ waiting, roles: agent.state.messages.map((message) => message.role), last: agent.state.messages.at(-1) })}\n`);
