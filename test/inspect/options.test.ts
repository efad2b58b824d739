// createAgentInspector's options and attach's actor, checked as they are given. A limit that was
// not a number reached the ring buffer as is ("RingBuffer capacity must be a positive integer,
// got 10" for the text "10"); a preview limit that made no sense was taken, so that
// `payload: { stringLength: -3 }` cut every string of every record to "…(+N)" and `depth: -1`
// dropped the messages from the records, without a word; a misspelt option was ignored; and
// attach({}) failed inside the inspector reading `system.inspect`.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAgentInspector, forwardToStately, type InspectionRecord, parseRecording } from "../../src/inspect/index.js";
import { createScriptedModel } from "../../src/testing/index.js";

const refusals: [string, unknown, string][] = [
	["a text for a number", { capacity: "10" }, 'createAgentInspector(options): capacity must be a whole number of at least 1, got "10"'],
	["a negative capacity", { capacity: -1 }, "createAgentInspector(options): capacity must be a whole number of at least 1, got -1"],
	["NaN", { historySize: Number.NaN }, "createAgentInspector(options): historySize must be a whole number of at least 1, got NaN"],
	["no bytes", { historyBytes: 0 }, "createAgentInspector(options): historyBytes must be a number of bytes above 0, got 0"],
	["a clock that is not a function", { now: 5 }, "createAgentInspector(options): now must be a function, got 5"],
	["null", null, "createAgentInspector(options): options must be an object of options, got null"],
	["a misspelt option", { capacty: 10 }, 'createAgentInspector(options): unknown option "capacty" (known: capacity, historySize, historyBytes, now, schedule, payload)'],
	["a misspelt limit", { payload: { maxStringLength: 100 } }, 'createAgentInspector(options): unknown payload limit "maxStringLength" (known: depth, stringLength, arrayItems, objectKeys, budget, characters)'],
	["a negative limit", { payload: { stringLength: -3 } }, "createAgentInspector(options): payload.stringLength must be a whole number of at least 0 (or Infinity), got -3"],
	["a negative depth", { payload: { depth: -1 } }, "createAgentInspector(options): payload.depth must be a whole number of at least 0 (or Infinity), got -1"],
	["a limit as text", { payload: { budget: "5" } }, 'createAgentInspector(options): payload.budget must be a whole number of at least 0 (or Infinity), got "5"'],
];

describe("createAgentInspector(options)", () => {
	it.each(refusals)("refuses %s with a TypeError naming the option", (_, options, message) => {
		expect(() => createAgentInspector(options as never)).toThrow(new TypeError(message));
	});

	it("takes every documented option, Infinity as a limit, and no options at all", async () => {
		expect(() => createAgentInspector()).not.toThrow();
		expect(() => createAgentInspector({ capacity: 10, historySize: 10, historyBytes: 1.5e6, now: Date.now, schedule: (flush) => setImmediate(flush), payload: { depth: 0, stringLength: Number.POSITIVE_INFINITY, arrayItems: 2, objectKeys: 3, budget: 10, characters: 100 } })).not.toThrow();
		// Infinity keeps a long tool result whole.
		const inspector = createAgentInspector({ payload: { stringLength: Number.POSITIVE_INFINITY, characters: Number.POSITIVE_INFINITY } });
		const long = "x".repeat(50_000);
		const scripted = createScriptedModel([{ content: long }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const records: InspectionRecord[] = [];
		inspector.subscribe((batch) => records.push(...batch));
		inspector.attach(agent.actor);
		await agent.prompt("go");
		inspector.flush();
		expect(JSON.stringify(records)).toContain(long);
	});
});

describe("inspector.attach(actor)", () => {
	it.each([[{}], [null], ["agent"]])("refuses %j, saying what it takes", (actor) => {
		expect(() => createAgentInspector().attach(actor as never)).toThrow(/^inspector\.attach\(actor\): expected an XState actor \(an Agent's agent\.actor, or createActor\(\.\.\.\) of a machine\), got /);
	});
});

// Each was taken, and failed later (inside the next flush, or reading a field) with a message
// that named nothing the caller wrote.
describe("the inspector's other entry points refuse what they cannot use", () => {
	it("subscribe takes a function", () => {
		expect(() => createAgentInspector().subscribe(5 as never)).toThrow(new TypeError("inspector.subscribe takes a function of the records, got number"));
	});

	it("forwardToStately takes an inspector of @statelyai/inspect", () => {
		expect(() => forwardToStately(createAgentInspector(), null as never)).toThrow(/^forwardToStately takes the inspector made by @statelyai\/inspect's createBrowserInspector\(\)/);
		expect(() => forwardToStately(createAgentInspector(), { adapter: {} } as never)).toThrow(TypeError);
		const sent: unknown[] = [];
		const stop = forwardToStately(createAgentInspector(), { adapter: { send: (event) => sent.push(event) } });
		stop();
	});

	it("parseRecording takes the recording's text", () => {
		expect(() => parseRecording(5 as never)).toThrow(new TypeError("parseRecording takes a recording's text (JSON lines), got number"));
		expect(parseRecording("")).toEqual([]);
	});
});
