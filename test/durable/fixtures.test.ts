/**
 * Snapshots written by this version of agentchart, kept as files: every later version must
 * restore them and go on (a stored session outlives an upgrade). Never edit the fixtures; a new
 * format version adds new ones beside them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { assistant, makeTool, ok, textOf, user } from "../agent/helpers.js";

function fixture(name: string): AgentSnapshot {
	return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")) as AgentSnapshot;
}

describe("snapshots of format version 1, as files", () => {
	it("restores an idle agent and goes on from it", async () => {
		const snapshot = fixture("snapshot-v1-idle.json");
		expect(snapshot.version).toBe(1);
		const scripted = createScriptedModel([{ content: "a new answer" }]);
		const tools = [makeTool("send", async () => ok("sent"), { needsApproval: true }), makeTool("read", async () => ok("read it"), { replay: "safe" })];
		const agent = Agent.restore(snapshot, { initialState: { tools }, streamFn: scripted.streamFn });
		expect(agent.state.systemPrompt).toBe("You are a fixture.");
		expect(agent.followUpMode).toBe("all");
		await agent.prompt("another question");
		expect(agent.state.messages.map((message) => textOf(message))).toEqual(["first question", "earlier answer", "another question", "a new answer"]);
	});

	it("restores a run waiting for approval, with its follow-up queued, and finishes it", async () => {
		const snapshot = fixture("snapshot-v1-awaiting-approval.json");
		const sends: string[] = [];
		const tools = [makeTool("send", async (_id, args) => (sends.push(JSON.stringify(args)), ok("sent")), { needsApproval: true }), makeTool("read", async () => ok("read it"), { replay: "safe" })];
		const scripted = createScriptedModel([{ content: "both done" }, { content: "follow-up answered" }]);
		const agent = Agent.restore(snapshot, { initialState: { tools }, streamFn: scripted.streamFn });
		expect(agent.pendingApprovals.map((call) => `${call.toolCallId} ${call.toolName}`)).toEqual(["s1 send"]);
		agent.approve("s1");
		await agent.waitForIdle();
		expect(sends).toEqual(['{"to":"bob"}']);
		expect(agent.state.messages.map((message) => textOf(message))).toEqual(["first question", "earlier answer", "second question", "", "read it", "sent", "both done", "a follow-up", "follow-up answered"]);
	});
});

describe("snapshots of format version 2, as files", () => {
	it("loads a stored session with the runs its line journaled after the snapshot, not those of another line", async () => {
		const snapshot = fixture("snapshot-v2-idle-stored.json");
		expect(snapshot.version).toBe(2);
		expect(snapshot.lineage).toEqual(expect.any(String));
		const store = createMemoryStore();
		store.saveSnapshot("fixture", snapshot);
		const run = (seq: number, effect: string, text: string, lineage: string | undefined): StoredJournalEntry[] => [
			{ seq, kind: "run", phase: "start", effect, messages: [user(text)], lineage },
			{ seq: seq + 1, kind: "run", phase: "end", effect, messages: [assistant(`answer to ${text}`)], lineage },
		];
		// The stored line's next run, and two runs an agent of another line (one that started the session anew) left behind.
		const seq = snapshot.journalSeq;
		for (const entry of [...run(seq + 1, "r2", "second question", snapshot.lineage), ...run(seq + 1, "r2", "from another line", "another-line"), ...run(seq + 3, "r3", "also from another line", "another-line")]) store.appendJournal("fixture", entry);
		const scripted = createScriptedModel([{ content: "a new answer" }]);
		const agent = await Agent.load({ store, sessionId: "fixture", initialState: {}, streamFn: scripted.streamFn });
		expect(agent.state.systemPrompt).toBe("You are a fixture.");
		expect(agent.state.messages.map((message) => textOf(message))).toEqual(["first question", "earlier answer", "second question", "answer to second question"]);
		await agent.prompt("another question");
		expect(agent.state.messages.map((message) => textOf(message)).slice(4)).toEqual(["another question", "a new answer"]);
	});
});

describe("snapshots of format version 3, as files", () => {
	it("restores a run whose tools were running: the replay-safe one runs again, the other is answered as interrupted", async () => {
		const snapshot = fixture("snapshot-v3-tool-running.json");
		expect(snapshot.version).toBe(3);
		expect(snapshot.machine.context.run?.batch?.effectPrefix).toBe("r1.t1");
		const ran: string[] = [];
		const tools = [makeTool("read", async (id) => (ran.push(id), ok("read it")), { replay: "safe" }), makeTool("charge", async (id) => (ran.push(id), ok("charged")))];
		const agent = Agent.restore(snapshot, { initialState: { tools }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
		await agent.waitForIdle();
		expect(ran).toEqual(["r1"]);
		const texts = agent.state.messages.map((message) => textOf(message));
		expect(texts.slice(0, 3)).toEqual(["first question", "earlier answer", "second question"]);
		expect(texts[4]).toBe("read it");
		expect(texts[5]).toMatch(/interrupted/);
		expect(texts.at(-1)).toBe("done");
	});
});
