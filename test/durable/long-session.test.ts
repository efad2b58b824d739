/**
 * One long session on the file store (and on the scripted model). A snapshot holds the whole transcript, and one was saved
 * every 256 journal entries (about 40 runs of a tool call each), however long the transcript:
 * the bytes a session wrote grew with the square of its length (a 1,200-message session of 100 KB
 * tool results wrote 210 MB for its 30 MB). Now the journal may hold as many entries as the
 * transcript has messages, and what the snapshots write adds up to a few times the transcript.
 *
 * And a transcript too large to be one JavaScript string failed each write with a bare "Invalid
 * string length"; the error now names the session and what to do. And the scripted model turned
 * the whole transcript into JSON at every call for a usage estimate, also when the reply gave its
 * usage: a long session's turns cost its length.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { AgentStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { makeTool, ok } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-long-session-");
const realStringify = JSON.stringify;
afterEach(() => {
	JSON.stringify = realStringify;
});

/** A file store that counts the characters of the snapshots it is given. */
function measuredStore(root: string) {
	const inner = createFileStore(root, { fsync: "never" });
	const written = { snapshots: 0, snapshotChars: 0, lastSnapshotChars: 0 };
	const store: AgentStore = {
		...inner,
		saveSnapshot(id, snapshot) {
			const chars = JSON.stringify(snapshot).length;
			written.snapshots++;
			written.snapshotChars += chars;
			written.lastSnapshotChars = chars;
			return inner.saveSnapshot(id, snapshot);
		},
	};
	return { store, written };
}

const usage = { input: 1, output: 1 };

describe("a long session on the file store", () => {
	it("writes its snapshots in a few times the transcript's bytes over 600 runs, not once per 40 runs", async () => {
		const root = await tempDir();
		const { store, written } = measuredStore(root);
		const result = "r".repeat(1_000);
		const fetch = makeTool("fetch", async () => ok(result));
		const scripted = createScriptedModel([]);
		const agent = new Agent({ store, sessionId: "long", initialState: { model: scripted.model, tools: [fetch] }, streamFn: scripted.streamFn });
		for (let run = 0; run < 600; run++) {
			scripted.append({ content: [toolCall("fetch", {}, `c${run}`)], usage }, { content: `done ${run}`, usage });
			await agent.prompt(`run ${run}`);
		}
		await agent.saved();
		expect(agent.storeProblems).toEqual([]);
		const transcriptChars = JSON.stringify(agent.state.messages).length;
		// Once every 40 runs: about 6.5 times the transcript at 600 runs, and growing with each run.
		expect(written.snapshotChars).toBeLessThan(3 * transcriptChars);
		expect(written.snapshots).toBeLessThanOrEqual(6);

		const none = createScriptedModel([]);
		const restored = await Agent.load({ store: createFileStore(root), sessionId: "long", initialState: { model: none.model, tools: [fetch] }, streamFn: none.streamFn });
		await restored.waitForIdle();
		expect(restored.state.messages).toEqual(agent.state.messages);
		expect(restored.storeProblems).toEqual([]);
	}, 60_000);

	it("is not measured through the scripted model's usage estimate: a reply that gives its input tokens does not read the transcript", async () => {
		// The estimate turned the whole transcript into JSON at every call, so a long session's turns on
		// the scripted model cost its length, and a benchmark of one measured that instead of the agent.
		let reads = 0;
		const earlier = { type: "text" as const, text: "earlier", toJSON: () => (reads++, { type: "text", text: "earlier" }) };
		const scripted = createScriptedModel([{ content: "given", usage: { input: 5, output: 1 } }, { content: "estimated" }]);
		const agent = new Agent({ initialState: { model: scripted.model, messages: [{ role: "user", content: [earlier], timestamp: 1 }] }, streamFn: scripted.streamFn });
		await agent.prompt("one");
		expect(reads).toBe(0);
		await agent.prompt("two");
		expect(reads).toBe(1);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "estimated" }] });
	});

	it("refuses a snapshot too large to be one string with an error that names the session and the cure", async () => {
		// V8's strings end at 2^29 - 24 characters: a transcript past that, stood in for here by a
		// stringify that fails as V8's does there, without half a gigabyte of test data.
		JSON.stringify = ((value: unknown, ...rest: [never, never]) => {
			if (typeof value === "object" && value !== null && "crc" in value) throw new RangeError("Invalid string length");
			return realStringify(value, ...rest);
		}) as typeof JSON.stringify;
		const scripted = createScriptedModel([{ content: "hello", usage }]);
		const agent = new Agent({ store: createFileStore(await tempDir(), { fsync: "never" }), sessionId: "big", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("hi");
		await expect(agent.saved()).rejects.toThrow(/session "big" is too large for the file store: its snapshot \(\d+ messages\) does not fit in one JavaScript string.*Compact the session/);
		expect(agent.storeProblems[0]).toMatch(/^the store could not save a snapshot: session "big" is too large for the file store/);
	});
});
