/**
 * Commands on an agent between runs change what its store must hold: a queue cleared or its
 * mode changed, the session reset, the transcript compacted by `compact()`. Each is stored (after
 * `saved()`, as a steer or a follow-up is), so a restart brings back neither a message that was
 * withdrawn, nor a conversation that was cleared, nor the transcript a compaction replaced (found
 * by an outside probe).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { textOf, user } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-probe-idle-");

const compaction = { enabled: false, keepRecentTokens: 5, summarize: async () => "the summary" };

/** A session that ran once ("go" → "hi") and has a follow-up queued; everything stored. */
async function storedSession(store: AgentStore) {
	const scripted = createScriptedModel([{ content: "hi" }, { content: "again" }]);
	const options = { store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn, compaction };
	const agent = await Agent.load({ ...options, initialState: { ...options.initialState, messages: [user(`early ${"e".repeat(200)}`), user(`later ${"l".repeat(200)}`)] } });
	await agent.prompt("go");
	agent.followUp(user("queued"));
	await agent.saved();
	return { agent, options };
}

/** What a new process finds: the agent loaded from the store, after the one before it stopped. */
async function afterRestart(agent: Agent, options: Parameters<typeof Agent.load>[0]) {
	await agent.saved();
	agent.dispose();
	const loaded = await Agent.load(options);
	await loaded.waitForIdle();
	return loaded;
}

/** Lets the agent's last writes land before the test's directory is removed. */
async function settle(agent: Agent): Promise<void> {
	await agent.saved();
	agent.dispose();
}

for (const kind of ["memory", "file"] as const) {
	describe(`commands between runs are stored (${kind} store)`, () => {
		const makeStore = async (): Promise<AgentStore> => (kind === "memory" ? createMemoryStore() : createFileStore(await tempDir()));

		it("a follow-up withdrawn with clearFollowUpQueue() or clearAllQueues() stays withdrawn", async () => {
			for (const clear of ["clearFollowUpQueue", "clearAllQueues"] as const) {
				const { agent, options } = await storedSession(await makeStore());
				agent[clear]();
				const loaded = await afterRestart(agent, options);
				expect(loaded.hasQueuedMessages()).toBe(false);
				await settle(loaded);
			}
		});

		it("a steer withdrawn with clearSteeringQueue() stays withdrawn", async () => {
			const { agent, options } = await storedSession(await makeStore());
			agent.steer(user("steer"));
			await agent.saved();
			agent.clearSteeringQueue();
			const loaded = await afterRestart(agent, options);
			expect(loaded.hasQueuedMessages()).toBe(true); // the follow-up
			await loaded.continue();
			expect(loaded.state.messages.map((message) => textOf(message))).not.toContain("steer");
			await settle(loaded);
		});

		it("a queue mode set between runs is the loaded agent's mode", async () => {
			const { agent, options } = await storedSession(await makeStore());
			agent.steeringMode = "all";
			agent.followUpMode = "all";
			const loaded = await afterRestart(agent, options);
			expect([loaded.steeringMode, loaded.followUpMode]).toEqual(["all", "all"]);
			await settle(loaded);
		});

		it("reset() clears the stored session too: no transcript, nothing queued, after a restart", async () => {
			const { agent, options } = await storedSession(await makeStore());
			agent.reset();
			const loaded = await afterRestart(agent, options);
			expect(loaded.state.messages).toEqual([]);
			expect(loaded.hasQueuedMessages()).toBe(false);
			await settle(loaded);
		});

		it("compact() is stored: the loaded transcript starts with its summary, the next run goes on from it", async () => {
			const { agent, options } = await storedSession(await makeStore());
			const result = await agent.compact("keep the names");
			expect(result.messagesDropped).toBeGreaterThan(0);
			const compacted = agent.state.messages.map((message) => textOf(message));
			const loaded = await afterRestart(agent, options);
			expect(loaded.state.messages[0]).toMatchObject({ role: "compactionSummary", summary: "the summary" });
			expect(loaded.state.messages.map((message) => textOf(message))).toEqual(compacted);
			await loaded.continue(); // the queued follow-up
			expect(loaded.state.messages.filter((message) => (message as { role: string }).role === "compactionSummary")).toHaveLength(1);
			expect(loaded.state.messages.slice(-2).map((message) => textOf(message))).toEqual(["queued", "again"]);
			await settle(loaded);
		});
	});
}
