/**
 * A manual compaction (`agent.compact()`) that a restart interrupted: the restored agent makes it
 * again, and its listeners hear `auto_compaction_start` before `auto_compaction_end` (reason
 * "manual"). Before, the restored compaction failed as interrupted and its listeners heard a lone
 * failed `auto_compaction_end` (a spinner shown on start and hidden on end saw an end without its
 * start), the transcript left uncompacted. Restored from `agent.snapshot()`, from a store that
 * saved the session during the compaction (a `steer()` does), and from a file store whose process
 * was killed with SIGKILL mid-compaction.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { CompactionSettings } from "../../src/compaction/settings.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { assistant, plainRoles, roles, user } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";
import { compactionEvents, hangingCompaction, killedWhileCompacting, long, transcript, until } from "./compaction-helpers.js";

const tempDir = useTempDirs("agentchart-manual-compaction-");
describe("a manual compaction interrupted by a restart", () => {
	it("restored from agent.snapshot(), is made again with its instructions: its listeners hear its start, then its end", async () => {
		const scripted = createScriptedModel([]);
		const hanging = hangingCompaction();
		const first = new Agent({ initialState: { model: scripted.model, messages: transcript() }, streamFn: scripted.streamFn, compaction: hanging.settings });
		const compacting = first.compact("keep the names").catch((error: Error) => error.message);
		await until(hanging.started);
		const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
		first.dispose();
		await compacting;

		const events: AgentEvent[] = [];
		const asked: (string | undefined)[] = [];
		const second = Agent.restore(snapshot, {
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: 1, summarize: async (request) => (asked.push(request.instructions), "the summary") },
			listeners: [(event) => void events.push(event)],
		});
		await second.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:compacted"]);
		expect(asked).toEqual(["keep the names"]);
		expect(roles(second.state.messages)[0]).toBe("compactionSummary");
		expect(second.state.errorMessage).toBeUndefined();
		// The restored agent takes commands again once it is done.
		expect(second.state.isStreaming).toBe(false);
	});

	it("restored, compact() waits its turn: it rejects while the compaction is made again, and is taken after it", async () => {
		const scripted = createScriptedModel([]);
		const hanging = hangingCompaction();
		const first = new Agent({ initialState: { model: scripted.model, messages: [...transcript(), user(long("third")), assistant(long("third answer"))] }, streamFn: scripted.streamFn, compaction: hanging.settings });
		void first.compact().catch(() => undefined);
		await until(hanging.started);
		const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
		first.dispose();

		const events: AgentEvent[] = [];
		const second = Agent.restore(snapshot, { streamFn: scripted.streamFn, compaction: { enabled: true, keepRecentTokens: 1, summarize: async () => "the summary" }, listeners: [(event) => void events.push(event)] });
		await expect(second.compact()).rejects.toThrow(/already processing/);
		await second.waitForIdle();
		// Taken (and refused by the compaction itself: what was left to summarise is summarised).
		await expect(second.compact()).rejects.toThrow(/^Compaction failed: Nothing to compact/);
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:compacted", "start:manual", expect.stringMatching(/^end:manual:Compaction failed: Nothing to compact/)]);
	});

	it("made again and failing again, ends failed after its start (the transcript as it was)", async () => {
		const scripted = createScriptedModel([]);
		const hanging = hangingCompaction();
		const first = new Agent({ initialState: { model: scripted.model, messages: transcript() }, streamFn: scripted.streamFn, compaction: hanging.settings });
		void first.compact().catch(() => undefined);
		await until(hanging.started);
		const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
		first.dispose();

		const events: AgentEvent[] = [];
		const failing: CompactionSettings = {
			enabled: true,
			keepRecentTokens: 1,
			summarize: async () => {
				throw new Error("the summariser is down");
			},
		};
		const second = Agent.restore(snapshot, { streamFn: scripted.streamFn, compaction: failing, listeners: [(event) => void events.push(event)] });
		await second.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:Compaction failed: the summariser is down"]);
		expect(plainRoles(second.state.messages)).toEqual(["user", "assistant", "user", "assistant"]);
	});

	it("loaded from a store that saved the session during it (a steer), is made again and its compacted transcript is stored", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: long("an answer") }]);
		const hanging = hangingCompaction();
		const options = { store, sessionId: "s", streamFn: scripted.streamFn };
		const first = new Agent({ ...options, initialState: { model: scripted.model, messages: transcript() }, compaction: { enabled: true, keepRecentTokens: 1, summarize: async () => "first summary" } });
		await first.prompt(long("a prompt"));
		first.compaction = hanging.settings;
		void first.compact().catch(() => undefined);
		await until(hanging.started);
		first.steer(user("after the compaction"));
		await first.saved();

		const events: AgentEvent[] = [];
		const settings: CompactionSettings = { enabled: true, keepRecentTokens: 1, summarize: async () => "second summary" };
		const second = await Agent.load({ ...options, compaction: settings, listeners: [(event) => void events.push(event)] });
		await second.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:compacted"]);
		expect(second.hasQueuedMessages()).toBe(true);
		await second.saved();

		const third = await Agent.load({ ...options, compaction: settings });
		await third.waitForIdle();
		expect(third.state.messages[0]).toMatchObject({ role: "compactionSummary", summary: "second summary" });
		expect(third.hasQueuedMessages()).toBe(true);
	});

	it("in a process killed with SIGKILL while it compacts (file store), is made again by the process that loads the session", async () => {
		const root = await tempDir();
		// The child stores a session, compacts it with a summariser that never answers, steers
		// meanwhile (the session is stored in the middle of the compaction) and says so.
		await killedWhileCompacting(root, 'agent.steer(long("queued")); await agent.saved();', 'await agent.prompt("go"); void agent.compact();');

		const scripted = createScriptedModel([]);
		const events: AgentEvent[] = [];
		const agent = await Agent.load({
			store: createFileStore(root),
			sessionId: "s",
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: 1, summarize: async () => "the summary" },
			listeners: [(event) => void events.push(event)],
		});
		await agent.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:compacted"]);
		expect(agent.state.messages[0]).toMatchObject({ role: "compactionSummary", summary: "the summary" });
		await agent.saved();
	}, 30_000);
});
