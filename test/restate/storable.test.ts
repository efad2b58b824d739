/**
 * What a step journals (`storable.ts`): JSON as the SDK would write it, or a small stand-in that
 * says why the value could not be stored (not JSON, or over `maxStepBytes`), so that the step is
 * never retried for it. The cluster tests (`size-limit.test.ts`, `robustness.test.ts`) check the
 * same against a real restate-server.
 */
import { describe, expect, it } from "vitest";
import { createAgentSessions } from "../../src/restate/index.js";
import { DEFAULT_MAX_STEP_BYTES, type SessionBudget, storableSerde } from "../../src/restate/storable.js";

type Outcome = { kind: "value"; value: unknown } | { kind: "error"; message: string };
const serde = (maxBytes?: number) => storableSerde<Outcome>((_value, why) => ({ kind: "error", message: why }), maxBytes);
const roundTrip = (maxBytes: number | undefined, value: Outcome) => {
	const codec = serde(maxBytes);
	return codec.deserialize(codec.serialize(value));
};

describe("storableSerde", () => {
	it("journals JSON up to the cap as it is", () => {
		const value: Outcome = { kind: "value", value: "x".repeat(2000) };
		expect(roundTrip(4096, value)).toEqual(value);
	});

	it("journals a stand-in, with the sizes, for a value whose JSON is over the cap", () => {
		expect(roundTrip(4096, { kind: "value", value: "x".repeat(5000) })).toEqual({ kind: "error", message: "its JSON is 5 KiB, over the 4 KiB a step may journal (maxStepBytes)" });
		expect(roundTrip(undefined, { kind: "value", value: "x".repeat(DEFAULT_MAX_STEP_BYTES) })).toEqual({ kind: "error", message: "its JSON is 8.0 MiB, over the 8.0 MiB a step may journal (maxStepBytes)" });
	});

	it("counts what it journals against the session's budget, and journals a stand-in for a value over what is left", () => {
		const budget: SessionBudget = { max: 8192, used: 2048 };
		const codec = storableSerde<Outcome>((_value, why) => ({ kind: "error", message: why }), 1024 * 1024, budget);
		const small: Outcome = { kind: "value", value: "x".repeat(3000) };
		expect(codec.deserialize(codec.serialize(small))).toEqual(small);
		expect(budget.used).toBe(2048 + JSON.stringify(small).length);
		const left = budget.max - budget.used;
		expect(codec.deserialize(codec.serialize({ kind: "value", value: "x".repeat(left) }))).toEqual({
			kind: "error",
			message: `its JSON is 4 KiB, over the ${Math.ceil(left / 1024)} KiB the session has left of its 8 KiB (maxSessionBytes)`,
		});
	});

	it("journals a stand-in for a value that is not JSON", () => {
		expect(roundTrip(undefined, { kind: "value", value: { rows: 12n } })).toEqual({ kind: "error", message: "it is not JSON-serializable (Do not know how to serialize a BigInt)" });
	});
});

describe("createAgentSessions' maxStepBytes", () => {
	it("refuses what is not a number of bytes, at least 1024", () => {
		// A TypeError, as every other option of createAgentSessions that is wrong (docs/restate.md).
		for (const bad of [0, 100, 1023, Number.NaN, Number.POSITIVE_INFINITY]) {
			const make = () => createAgentSessions({ agent: () => ({}), maxStepBytes: bad });
			expect(make).toThrow(TypeError);
			expect(make).toThrow(`agentchart/restate: maxStepBytes must be a number of bytes, at least 1024 (got ${String(bad)})`);
		}
		// A string says it is one: shown bare, "2048" read as a number large enough.
		for (const [bad, got] of [["2048", 'the string "2048"'], ["8MB", 'the string "8MB"'], [true, "true"]] as const) {
			const make = () => createAgentSessions({ agent: () => ({}), maxStepBytes: bad as unknown as number });
			expect(make).toThrow(TypeError);
			expect(make).toThrow(`agentchart/restate: maxStepBytes must be a number of bytes, at least 1024 (got ${got})`);
		}
		// (On a Node without Promise.withResolvers the SDK check refuses it next, which is not this.)
		expect(() => createAgentSessions({ agent: () => ({}), maxStepBytes: 1024 })).not.toThrow(/maxStepBytes/);
	});
});

describe("createAgentSessions' maxSessionBytes", () => {
	it("refuses what is not a number of bytes, at least 1024", () => {
		// A TypeError, as every other option of createAgentSessions that is wrong (docs/restate.md).
		for (const bad of [0, 100, 1023, Number.NaN, Number.POSITIVE_INFINITY]) {
			const make = () => createAgentSessions({ agent: () => ({}), maxSessionBytes: bad });
			expect(make).toThrow(TypeError);
			expect(make).toThrow(`agentchart/restate: maxSessionBytes must be a number of bytes, at least 1024 (got ${String(bad)})`);
		}
		// A string says it is one: shown bare, "2048" read as a number large enough.
		for (const [bad, got] of [["2048", 'the string "2048"'], ["8MB", 'the string "8MB"'], [true, "true"]] as const) {
			const make = () => createAgentSessions({ agent: () => ({}), maxSessionBytes: bad as unknown as number });
			expect(make).toThrow(TypeError);
			expect(make).toThrow(`agentchart/restate: maxSessionBytes must be a number of bytes, at least 1024 (got ${got})`);
		}
		// (On a Node without Promise.withResolvers the SDK check refuses it next, which is not this.)
		expect(() => createAgentSessions({ agent: () => ({}), maxSessionBytes: 1024 })).not.toThrow(/maxSessionBytes/);
	});
});

describe("createAgentSessions' options", () => {
	it("refuses options no session could run with, when the objects are made (not at a handler's call, which Restate would retry for an hour)", () => {
		const cases: [unknown, RegExp][] = [
			[undefined, /createAgentSessions: its options must be an object such as \{ agent: \(sessionId\) => agentOptions \}, got undefined/],
			[{}, /createAgentSessions: agent must be a function \(sessionId\) => agent options, got undefined/],
			[{ agent: { initialState: {} } }, /agent must be a function/],
			[{ agent: () => ({}), name: "" }, /name must be a non-empty text, got ""/],
			[{ agent: () => ({}), worker: 7 }, /worker must be a text, got 7/],
			[{ agent: () => ({}), events: "http://localhost:9900" }, /events must be a sink with a publish\(envelope\) method \(createHttpEventSink\), got "http:\/\/localhost:9900"/],
			[{ agent: () => ({}), onToolRun: true }, /onToolRun must be a function, got true/],
			// Ignored, these would publish no event and keep the default budget, without a word.
			[{ agent: () => ({}), event: { publish: () => undefined } }, /^agentchart\/restate: createAgentSessions has no option "event" \(its options: agent, name, events, worker, maxStepBytes, maxSessionBytes, onToolRun\)$/],
			[{ agent: () => ({}), maxSessionByte: 4096, worker: "w1" }, /createAgentSessions has no option "maxSessionByte"/],
		];
		for (const [options, message] of cases) expect(() => createAgentSessions(options as never)).toThrow(message);
	});
});
