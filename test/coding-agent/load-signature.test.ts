/**
 * The load signature (a record whose snapshot is ahead of its own event), on records shaped as
 * pi's coding agent prints them: what a stream split by the OS looks like is told apart from a
 * stream whose every snapshot shows its own point; and a run that shows it is run again.
 */
import { describe, expect, it, vi } from "vitest";
import type { JsonObject } from "./harness.js";
import { loadSignature } from "./load-signature.js";
import { MAX_RUNS, type Observation, observeUnloaded, type Scenario } from "./observe.js";

type Block = JsonObject;

const text = (value: string, streaming: boolean): Block => (streaming ? { type: "text", text: value, index: 0 } : { type: "text", text: value });

function assistant(content: Block[]): JsonObject {
	return { role: "assistant", content, stopReason: "stop" };
}

function update(event: JsonObject, content: Block[]): JsonObject {
	const message = assistant(content);
	return { type: "message_update", assistantMessageEvent: { ...event, partial: message }, message };
}

/** The records of "Hello world" streamed in two deltas, each snapshot as it was at its event. */
function cleanStream(): JsonObject[] {
	return [
		{ type: "message_start", message: assistant([]) },
		update({ type: "text_start", contentIndex: 0 }, [text("", true)]),
		update({ type: "text_delta", contentIndex: 0, delta: "Hello " }, [text("Hello ", true)]),
		update({ type: "text_delta", contentIndex: 0, delta: "world" }, [text("Hello world", true)]),
		update({ type: "text_end", contentIndex: 0, content: "Hello world" }, [text("Hello world", false)]),
		{ type: "message_end", message: assistant([text("Hello world", false)]) },
	];
}

describe("the load signature", () => {
	it("is absent when every snapshot shows its own point of the stream", () => {
		expect(loadSignature(cleanStream())).toBeUndefined();
	});

	it("is absent in records of users, tool results and other events", () => {
		const records: JsonObject[] = [
			{ type: "agent_start" },
			{ type: "message_start", message: { role: "user", content: [{ type: "text", text: "hi" }] } },
			{ type: "message_end", message: { role: "user", content: [{ type: "text", text: "hi" }] } },
			...cleanStream(),
			{ type: "agent_end", messages: [] },
		];
		expect(loadSignature(records)).toBeUndefined();
	});

	it("shows when a text_start record already holds the text of the next delta", () => {
		const records = cleanStream();
		records[1] = update({ type: "text_start", contentIndex: 0 }, [text("Hello ", true)]);
		expect(loadSignature(records)).toBe(`record 1 (message_update:text_start): block 0 holds "Hello " where its events gave ""`);
	});

	it("shows when a delta's record shows its block already ended", () => {
		const records = cleanStream();
		records[3] = update({ type: "text_delta", contentIndex: 0, delta: "world" }, [text("Hello world", false)]);
		expect(loadSignature(records)).toBe("record 3 (message_update:text_delta): block 0 already ended");
	});

	it("shows when a record holds a block its events have not started", () => {
		const records = cleanStream();
		records[0] = { type: "message_start", message: assistant([text("", true)]) };
		expect(loadSignature(records)).toBe("record 0 (message_start): 1 content blocks where its events started 0");
	});

	it("shows when a thinking block has its signature before it ended", () => {
		const thinking = (value: string, signature: string): Block => ({ type: "thinking", thinking: value, thinkingSignature: signature, index: 0 });
		const records: JsonObject[] = [
			{ type: "message_start", message: assistant([]) },
			update({ type: "thinking_start", contentIndex: 0 }, [thinking("", "")]),
			update({ type: "thinking_delta", contentIndex: 0, delta: "Hmm" }, [thinking("Hmm", "sig")]),
		];
		expect(loadSignature(records)).toBe("record 2 (message_update:thinking_delta): block 0 already has its signature");
	});

	it("shows when a tool call's JSON is ahead of its deltas", () => {
		const call = (json: string): Block => ({ type: "toolCall", id: "t", name: "read", arguments: {}, partialJson: json, index: 0 });
		const records: JsonObject[] = [
			{ type: "message_start", message: assistant([]) },
			update({ type: "toolcall_start", contentIndex: 0 }, [call('{"path":')]),
		];
		expect(loadSignature(records)).toBe(`record 1 (message_update:toolcall_start): block 0 holds "{\\"path\\":" where its events gave ""`);
	});

	it("starts over at each assistant message", () => {
		expect(loadSignature([...cleanStream(), ...cleanStream()])).toBeUndefined();
	});
});

describe("the load signature of streamed tool output", () => {
	const output = (text: string): JsonObject => ({
		type: "tool_execution_update",
		toolCallId: "toolu_bash",
		toolName: "bash",
		args: {},
		partialResult: { content: text === "" ? [] : [{ type: "text", text }], details: {} },
	});

	it("is absent when each update adds one line", () => {
		expect(loadSignature([output(""), output("one\n"), output("one\ntwo\n"), output("one\ntwo\nthree\n")])).toBeUndefined();
	});

	it("shows when one update adds two lines (two writes read as one)", () => {
		expect(loadSignature([output(""), output("one\ntwo\n"), output("one\ntwo\nthree\n")])).toBe("record 1 (tool_execution_update): toolu_bash output grew by 2 lines at once");
	});
});

describe("a run with the load signature", () => {
	const ahead = (): JsonObject[] => {
		const records = cleanStream();
		records[1] = update({ type: "text_start", contentIndex: 0 }, [text("Hello ", true)]);
		return records;
	};
	const observation = (records: JsonObject[]): Observation => ({
		engine: "pi",
		root: "/tmp/x",
		exitCode: 0,
		stdout: "",
		records,
		sessions: [],
		requests: [],
		stderr: "",
	});
	const scenario: Scenario = { name: "s", mode: "json", responses: [], requestCount: 0, drive: () => Promise.reject(new Error("not run")) };
	const same = (o: Observation) => o;
	/** An observer that shows the given record lists, one per run, and counts the runs. */
	function runs(...lists: JsonObject[][]) {
		let count = 0;
		return {
			observe: async () => observation(lists[Math.min(count++, lists.length - 1)] as JsonObject[]),
			count: () => count,
		};
	}
	const quietly = <T>(body: () => Promise<T>): Promise<T> => {
		const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
		return body().finally(() => warn.mockRestore());
	};

	it("is run again, and the clean run is the one compared", async () => {
		const observer = runs(ahead(), cleanStream());
		const { observation: compared, discarded } = await quietly(() => observeUnloaded(scenario, "pi", same, observer.observe));
		expect(observer.count()).toBe(2);
		expect(discarded).toHaveLength(1);
		expect(compared.records).toEqual(cleanStream());
	});

	it("is compared as it is after MAX_RUNS runs that all show it", async () => {
		const observer = runs(ahead());
		const { observation: compared, discarded } = await quietly(() => observeUnloaded(scenario, "agentchart", same, observer.observe));
		expect(observer.count()).toBe(MAX_RUNS);
		expect(discarded).toHaveLength(MAX_RUNS - 1);
		expect(compared.records).toEqual(ahead());
	});

	it("is not run again when the scenario's answers arrive at once on purpose", async () => {
		const observer = runs(ahead(), cleanStream());
		const { discarded } = await observeUnloaded({ ...scenario, burst: true }, "pi", same, observer.observe);
		expect(observer.count()).toBe(1);
		expect(discarded).toEqual([]);
	});

	it("is not run again when it is clean", async () => {
		const observer = runs(cleanStream(), ahead());
		await observeUnloaded(scenario, "pi", same, observer.observe);
		expect(observer.count()).toBe(1);
	});
});
