/**
 * What a second outside probe of the kit found, each held here: a tool result the engine refuses
 * is a `tool-contract` violation however it is wrong; a factory written wrong (it shares one
 * agent, returns a Promise, or ignores the snapshot it was given) is thrown at the caller, the
 * same error from exploreAgent and fuzzAgent, instead of a pass or a misleading finding; and
 * exploreAgent refuses numeric options that would test nothing, as fuzzAgent does; both refuse a
 * misspelt option and a first argument that is no factory before anything runs.
 */
import { describe, expect, it } from "vitest";
import { checkToolResult } from "../../src/actors/tool-batch-actor.js";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import { runToolChecked } from "../../src/testing/instrument/checked-calls.js";
import type { AgentViolation } from "../../src/testing/violations.js";
import type { AgentFactory, AgentKit } from "../../src/testing/walk/cast.js";
import type { AgentEvent, AgentToolResult } from "../../src/types/agent.js";
import type { AgentMessage, Message } from "../../src/types/messages.js";
import { factory, lookup, quiet } from "./user-agent.js";

const model = createScriptedModel([]).model;
/** A path of the walk on which the model calls the tool once. */
const CALLS_THE_TOOL = "prompt → delivered → delivered → stream.start → stream.done(tools1)";

/** What a call rejected with (undefined: it resolved). */
async function thrownBy(call: () => Promise<unknown>): Promise<Error | undefined> {
	return call().then(
		() => undefined,
		(error: unknown) => error as Error,
	);
}

describe("a tool result the engine refuses is reported, however it is wrong", () => {
	// Each an error result in the engine ("... instead of a result"): the kit judges as it does.
	const refused: [string, unknown][] = [
		["a text block whose text is a number", { content: [{ type: "text", text: 3 }], details: {} }],
		["a text block without text", { content: [{ type: "text" }], details: {} }],
		["a block of a type no provider takes", { content: [{ type: "audio", data: "AAAA" }], details: {} }],
		["an image without data", { content: [{ type: "image", mimeType: "image/png" }], details: {} }],
		["content that is not a list", { content: "ships tomorrow", details: {} }],
	];

	it.each(refused)("%s", async (_, value) => {
		expect(checkToolResult("lookup_order", value).isError).toBe(true);
		const found: AgentViolation[] = [];
		const settled = await runToolChecked(lookup(async () => value as AgentToolResult<unknown>), "c1", { id: "A-17" }, undefined, undefined, (each) => void found.push(each));
		expect(settled.ok).toBe(true);
		expect(found.map((each) => each.rule)).toEqual(["tool-contract"]);
		expect(found[0]?.message).toMatch(/^tool "lookup_order" \(call c1\) returned .* instead of a result/);
	});

	it("and a result the engine takes, images included, is not", async () => {
		const found: AgentViolation[] = [];
		const image = { content: [{ type: "text" as const, text: "the label" }, { type: "image" as const, data: "AAAA", mimeType: "image/png" }], details: {} };
		await runToolChecked(lookup(async () => image), "c1", { id: "A-17" }, undefined, undefined, (each) => void found.push(each));
		expect(found).toEqual([]);
	});

	it("by exploreAgent and fuzzAgent", async () => {
		const numeric = factory(() => ({ initialState: { model, tools: [lookup(async () => ({ content: [{ type: "text", text: 3 as unknown as string }], details: {} }))] } }));
		const explored = await exploreAgent(numeric, { path: CALLS_THE_TOOL });
		expect(explored.violations.map((each) => each.rule), explored.format()).toContain("tool-contract");
		expect(explored.format()).toContain("instead of a result");
		const fuzzed = await fuzzAgent(numeric, { runs: 20, seed: 1, restarts: false, ...quiet });
		expect(fuzzed.violations.map((each) => each.rule), fuzzed.format()).toContain("tool-contract");
	}, 120_000);
});

describe("a factory that returns one shared agent is refused", () => {
	const sharing = (): { factory: AgentFactory; made: () => number } => {
		let shared: Agent | undefined;
		let made = 0;
		return {
			factory: (kit) => {
				if (!shared) made++;
				shared ??= new Agent(kit.options({ initialState: { model, tools: [lookup()] } }));
				return shared;
			},
			made: () => made,
		};
	};
	const expected = /^agentchart\/testing: your factory returned an agent it had returned before \(one agent made once and shared\?\): .*make a new one on every call: new Agent\(kit\.options\(yourOptions\)\)/;

	it("by exploreAgent", async () => {
		const { factory: shares, made } = sharing();
		const error = await thrownBy(() => exploreAgent(shares, { restores: false }));
		expect(error?.message).toMatch(expected);
		expect(made()).toBe(1);
	}, 60_000);

	it("by fuzzAgent, at once rather than as a failing scenario", async () => {
		const { factory: shares } = sharing();
		const error = await thrownBy(() => fuzzAgent(shares, { runs: 20, seed: 1, ...quiet }));
		expect(error?.message).toMatch(expected);
	}, 60_000);

	it("names the factory when it has a name", async () => {
		const shared = new Agent({ initialState: { model } });
		const supportAgent: AgentFactory = () => shared;
		await expect(exploreAgent(supportAgent, { restores: false })).rejects.toThrow(/your factory supportAgent returned an agent it had returned before/);
	}, 60_000);
});

describe("exploreAgent refuses options that would test nothing", () => {
	let called = 0;
	const counted: AgentFactory = (kit) => {
		called++;
		return new Agent(kit.options({ initialState: { model, tools: [lookup()] } }));
	};

	it.each([
		[{ maxPaths: 0 }, RangeError, "exploreAgent's maxPaths must be an integer of at least 1, got 0"],
		[{ maxPaths: Number.NaN }, RangeError, "exploreAgent's maxPaths must be an integer of at least 1, got NaN"],
		[{ maxPaths: -3 }, RangeError, "exploreAgent's maxPaths must be an integer of at least 1, got -3"],
		[{ maxPaths: 2.5 }, RangeError, "exploreAgent's maxPaths must be an integer of at least 1, got 2.5"],
		[{ maxPaths: "5" as unknown as number }, TypeError, "exploreAgent's maxPaths must be a number, got string"],
		[{ stepTimeoutMs: 0 }, RangeError, "exploreAgent's stepTimeoutMs must be a finite number of at least 1, got 0"],
		[{ stepTimeoutMs: Number.NaN }, RangeError, "exploreAgent's stepTimeoutMs must be a finite number of at least 1, got NaN"],
		[{ settleTimeoutMs: Number.NaN }, RangeError, "exploreAgent's settleTimeoutMs must be a finite number of at least 1, got NaN"],
		[{ settleTimeoutMs: Number.POSITIVE_INFINITY }, RangeError, "exploreAgent's settleTimeoutMs must be a finite number of at least 1, got Infinity"],
	])("%o", async (options, type, message) => {
		const before = called;
		const thrown = await thrownBy(() => exploreAgent(counted, { restores: false, ...options }));
		expect(thrown).toBeInstanceOf(type);
		expect(thrown?.message).toBe(`agentchart/testing: ${message}`);
		expect(called).toBe(before);
	});

	it("and runs the paths it is given", async () => {
		const report = await exploreAgent(counted, { restores: false, maxPaths: 1 });
		expect(report.paths).toBe(1);
		expect(report.steps).toBeGreaterThan(0);
	}, 60_000);
});

describe("a misspelt option, options that are no object and a factory that is no function are refused, by both alike, before anything runs", () => {
	let called = 0;
	const counted: AgentFactory = (kit) => {
		called++;
		return new Agent(kit.options({ initialState: { model, tools: [lookup()] } }));
	};
	const misspelt = (options: object) => options as Parameters<typeof exploreAgent>[1] & Parameters<typeof fuzzAgent>[1];

	// Ignored, `run` and `restore` would leave the defaults (50 runs; restores only where needed): a pass that tested less than it says.
	it.each([
		["exploreAgent", () => exploreAgent(counted, misspelt({ restore: "everywhere" })), 'exploreAgent has no option "restore" (its options: calls, prompt, restores, maxPaths, path, shrink, stepTimeoutMs, settleTimeoutMs, check, log, config, strict); nothing was run'],
		["fuzzAgent", () => fuzzAgent(counted, misspelt({ run: 500, seed: 1, ...quiet })), 'fuzzAgent has no option "run" (its options: runs, seed, path, scenario, calls, prompt, restarts, settleTimeoutMs, check, log); nothing was run'],
		["exploreAgent, options null", () => exploreAgent(counted, misspelt(null as unknown as object)), "exploreAgent's options must be an object, got null"],
		["fuzzAgent, options a number", () => fuzzAgent(counted, misspelt(500 as unknown as object)), "fuzzAgent's options must be an object, got 500"],
		["exploreAgent, no factory", () => exploreAgent(undefined as unknown as AgentFactory), "exploreAgent's first argument must be your factory, a function that builds a new agent each time it is called, (kit) => new Agent(kit.options(yourOptions)); got undefined"],
		["fuzzAgent, an agent for a factory", () => fuzzAgent(new Agent({ initialState: { model } }) as unknown as AgentFactory, quiet), "fuzzAgent's first argument must be your factory, a function that builds a new agent each time it is called, (kit) => new Agent(kit.options(yourOptions)); got an instance of Agent"],
		// A misspelt value read as truthy ran restores: true; the others failed inside the run, naming no option.
		["exploreAgent, restores misspelt", () => exploreAgent(counted, misspelt({ restores: "everwhere" })), 'exploreAgent\'s restores must be true, false or "everywhere", got "everwhere"'],
		["exploreAgent, calls not a list", () => exploreAgent(counted, misspelt({ calls: "lookup" })), 'exploreAgent\'s calls must be a list, got "lookup"'],
		["exploreAgent, path not a text", () => exploreAgent(counted, misspelt({ path: 123 })), "exploreAgent's path must be a string, got 123"],
		["exploreAgent, check not a function", () => exploreAgent(counted, misspelt({ check: 5 })), "exploreAgent's check must be a function, got 5"],
		["fuzzAgent, restarts not a boolean", () => fuzzAgent(counted, misspelt({ restarts: "no", seed: 1, ...quiet })), 'fuzzAgent\'s restarts must be a boolean, got "no"'],
		["fuzzAgent, log not a function", () => fuzzAgent(counted, misspelt({ log: true, seed: 1 })), "fuzzAgent's log must be a function, got true"],
	])("%s", async (_caller, call, message) => {
		const before = called;
		const thrown = await thrownBy(call);
		expect(thrown).toBeInstanceOf(TypeError);
		expect(thrown?.message).toBe(`agentchart/testing: ${message}`);
		expect(called).toBe(before);
	});

	it("and every option either takes is taken", async () => {
		const report = await exploreAgent(counted, { restores: false, maxPaths: 1, shrink: true, stepTimeoutMs: 2000, settleTimeoutMs: 5000, prompt: "Hi", check: () => [], log: () => undefined, strict: false });
		expect(report.paths).toBe(1);
		const fuzzed = await fuzzAgent(counted, { runs: 1, seed: 1, restarts: false, prompt: "Hi", settleTimeoutMs: 5000, check: () => [], ...quiet });
		expect(fuzzed.ok).toBe(true);
	}, 60_000);
});

describe("fuzzAgent refuses a given scenario that would play without what it says", () => {
	const scenario = { replies: [{ calls: [] }], tools: [{ latencyMs: 0, fails: false }], commands: [] };
	const prefix = "agentchart/testing: fuzzAgent's scenario must be one a report printed ({ replies, tools, commands }): ";
	it.each([
		["a misspelt fault (dropped, the reply played whole)", { ...scenario, replies: [{ calls: [], fualt: { kind: "reset", afterDeltas: 1 } }] }, 'a reply has no key "fualt" (its keys: calls, fault)'],
		["afterDeltas not a count", { ...scenario, replies: [{ calls: [], fault: { kind: "reset", afterDeltas: "x" } }] }, "a fault's afterDeltas must be a whole number of at least 0"],
		["afterDeltas negative", { ...scenario, replies: [{ calls: [], fault: { kind: "reset", afterDeltas: -1 } }] }, "a fault's afterDeltas must be a whole number of at least 0"],
		["a key the scenario does not have", { ...scenario, command: [] }, 'a scenario has no key "command" (its keys: replies, tools, commands)'],
		["a misspelt tool key", { ...scenario, tools: [{ latencyMs: 0, fails: false, fail: true }] }, 'a tool has no key "fail" (its keys: latencyMs, fails)'],
		["a misspelt command key", { ...scenario, commands: [{ atEvent: 0, command: "abort", when: 3 }] }, 'a command has no key "when" (its keys: atEvent, command)'],
	])("%s", async (_case, given, message) => {
		const thrown = await thrownBy(() => fuzzAgent(factory(() => ({ initialState: { model, tools: [lookup()] } })), { scenario: given as never, ...quiet }));
		expect(thrown).toBeInstanceOf(TypeError);
		expect(thrown?.message.startsWith(`${prefix}${message}`), thrown?.message).toBe(true);
	});
});

// Found by a probe (2026-12-07): calls: [5] on an agent with one sample call played as call 0
// (wrapped around) and reported "no violation".
describe("fuzzAgent refuses a given scenario whose calls this agent does not have", () => {
	it("names the call and the agent's sample calls", async () => {
		const given = { replies: [{ calls: [5] }], tools: [{ latencyMs: 0, fails: false }], commands: [] };
		const thrown = await thrownBy(() => fuzzAgent(factory(() => ({ initialState: { model, tools: [lookup()] } })), { scenario: given, ...quiet }));
		expect(thrown).toBeInstanceOf(TypeError);
		expect(thrown?.message).toMatch(/^agentchart\/testing: fuzzAgent's scenario calls sample call 5, but this agent has 1 \(lookup_order\): a scenario replays on the agent \(and calls option\) its report was made with$/);
	});
});

describe("createScriptedModel's whenExhausted", () => {
	it("refuses a function with a message that does not say a function is taken", () => {
		expect(() => createScriptedModel([], { whenExhausted: (() => ({ content: "x" })) as never })).toThrow(/^createScriptedModel: options\.whenExhausted must be a reply \(\{ content, \.\.\. \}\), not a function/);
	});
});

describe("a factory that returns a Promise is refused with what to write instead", () => {
	const asynchronous = (async (kit: AgentKit) => new Agent(kit.options({ initialState: { model, tools: [lookup()] } }))) as unknown as AgentFactory;
	const expected = /^agentchart\/testing: your factory asynchronous returned a Promise \(is it an async function\?\): it must return the Agent itself, synchronously/;

	it("by exploreAgent", async () => {
		const error = await thrownBy(() => exploreAgent(asynchronous, { restores: false }));
		expect(error).toBeInstanceOf(TypeError);
		expect(error?.message).toMatch(expected);
	});

	it("by fuzzAgent", async () => {
		const error = await thrownBy(() => fuzzAgent(asynchronous, { runs: 5, seed: 1, ...quiet }));
		expect(error).toBeInstanceOf(TypeError);
		expect(error?.message).toMatch(expected);
	});

	it("and so is one that returns no agent", async () => {
		const nothing = (() => undefined) as unknown as AgentFactory;
		await expect(exploreAgent(nothing, { restores: false })).rejects.toThrow(/^agentchart\/testing: your factory nothing returned undefined instead of an Agent: return new Agent\(kit\.options\(yourOptions\)\)/);
	});
});

describe("a factory that does not restore kit.snapshot is refused, by both alike", () => {
	const ignoresSnapshot: AgentFactory = (kit) => new Agent(kit.options({ initialState: { model, tools: [lookup()] } }));
	const expected = "agentchart/testing: your factory ignoresSnapshot was given kit.snapshot but did not restore it: build the agent as Agent.restore(kit.snapshot, kit.options(yourOptions))";

	it("by exploreAgent", async () => {
		await expect(exploreAgent(ignoresSnapshot)).rejects.toThrow(expected);
	}, 60_000);

	it("by fuzzAgent, instead of reporting the steering message it then loses", async () => {
		const error = await thrownBy(() => fuzzAgent(ignoresSnapshot, { runs: 50, seed: 1, ...quiet }));
		expect(error?.message).toBe(expected);
	}, 120_000);

	it("by fuzzAgent playing a given scenario with a restart at an idle agent", async () => {
		const scenario = { replies: [{ calls: [] }], tools: [{ latencyMs: 0, fails: false }], commands: [{ atEvent: 30, command: "restart" as const }] };
		await expect(fuzzAgent(ignoresSnapshot, { scenario, ...quiet })).rejects.toThrow(expected);
		// A factory that restores plays it through.
		const restores = factory(() => ({ initialState: { model, tools: [lookup()] } }));
		expect((await fuzzAgent(restores, { scenario, ...quiet })).ok).toBe(true);
	}, 60_000);
});

describe("a factory that builds its agent without kit.options is refused", () => {
	// A correct agent: only the factory is wrong. fuzzAgent then drove neither its model nor its
	// tools and reported the steering message it sent as lost, a finding about the agent.
	const scripted = createScriptedModel([], { whenExhausted: { content: "done" } });
	const withoutKit: AgentFactory = (kit) => {
		const options = { initialState: { model: scripted.model, tools: [lookup()] }, streamFn: scripted.streamFn };
		return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
	};
	const expected = "agentchart/testing: your factory withoutKit built the agent without kit.options(...): the kit must hold its model, tools, hooks and listeners, so build it as new Agent(kit.options(yourOptions)), or Agent.restore(kit.snapshot, kit.options(yourOptions)) when kit.snapshot is set";

	it("by fuzzAgent searching, at once", async () => {
		const error = await thrownBy(() => fuzzAgent(withoutKit, { runs: 20, seed: 1, ...quiet }));
		expect(error?.message).toBe(expected);
	}, 60_000);

	it("by fuzzAgent playing a given scenario", async () => {
		const scenario = { replies: [{ calls: [] }], tools: [{ latencyMs: 0, fails: false }], commands: [{ atEvent: 0, command: "steer" as const }] };
		await expect(fuzzAgent(withoutKit, { scenario, ...quiet })).rejects.toThrow(expected);
	}, 60_000);

	it("and one that passes kit.options but puts its own model back is refused too", async () => {
		const ownModel: AgentFactory = (kit) => {
			const agent = new Agent(kit.options({ initialState: { model, tools: [lookup()] } }));
			agent.streamFn = scripted.streamFn;
			return agent;
		};
		const error = await thrownBy(() => fuzzAgent(ownModel, { runs: 5, seed: 1, ...quiet }));
		expect(error?.message).toMatch(/^agentchart\/testing: your factory ownModel built the agent without kit\.options/);
	}, 60_000);
});

describe("a request your convertToLlm or transformContext makes invalid is reported, by both alike", () => {
	// Each drops the tool results: every request after a tool call carries calls without their result (a 400 from every provider).
	const dropsResults = (messages: AgentMessage[]) => messages.filter((message) => message.role !== "toolResult");
	const converts: AgentFactory = (kit) => {
		const options = kit.options({ initialState: { model, tools: [lookup()] }, convertToLlm: (messages: AgentMessage[]) => dropsResults(messages) as Message[] });
		return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
	};
	const transforms: AgentFactory = (kit) => {
		const options = kit.options({ initialState: { model, tools: [lookup()] }, transformContext: async (messages: AgentMessage[]) => dropsResults(messages) });
		return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
	};
	const requestFindings = (violations: readonly AgentViolation[]) => violations.filter((found) => found.rule === "provider-request").map((found) => found.message);

	it.each([
		["convertToLlm", converts],
		["transformContext", transforms],
	])("by exploreAgent (%s)", async (_name, made) => {
		const report = await exploreAgent(made, { restores: false, path: CALLS_THE_TOOL });
		expect(requestFindings(report.violations)).toEqual([expect.stringMatching(/^the model was sent a request a provider refuses \(after transformContext and convertToLlm\): assistant #\d+: tool call\(s\) \S+ without a result/)]);
	}, 60_000);

	it("by fuzzAgent", async () => {
		const report = await fuzzAgent(converts, { runs: 20, seed: 1, ...quiet });
		expect(report.ok).toBe(false);
		expect(requestFindings(report.violations)[0]).toMatch(/without a result/);
	}, 120_000);

	it("and not for an agent whose requests are whole", async () => {
		const whole = factory(() => ({ initialState: { model, tools: [lookup()] } }));
		expect(requestFindings((await exploreAgent(whole, { restores: false, path: CALLS_THE_TOOL })).violations)).toEqual([]);
	}, 60_000);
});

describe("a listener that never answers an event is named as what the run waits on", () => {
	// Its promise never settles (an awaited write that hangs): before, the report said the run "kept going, turn after turn".
	const stuck: AgentFactory = (kit) => {
		const options = kit.options({ initialState: { model, tools: [lookup()] }, listeners: [(event: AgentEvent) => (event.type === "tool_execution_end" ? new Promise<void>(() => {}) : undefined)] });
		return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
	};
	const expected = /a listener has not answered an event \(the promise it returned is still pending\): the run waits for its listeners before it goes on/;

	it("by exploreAgent", async () => {
		const report = await exploreAgent(stuck, { restores: false, path: CALLS_THE_TOOL, settleTimeoutMs: 300, stepTimeoutMs: 300, ...quiet });
		const settle = report.violations.filter((found) => found.rule === "settle").map((found) => found.message);
		expect(settle).toEqual([expect.stringMatching(expected)]);
	}, 60_000);

	it("by fuzzAgent", async () => {
		const report = await fuzzAgent(stuck, { runs: 3, seed: 1, settleTimeoutMs: 300, restarts: false, ...quiet });
		expect(report.violations.filter((found) => found.rule === "settle").map((found) => found.message)).toEqual([expect.stringMatching(expected)]);
	}, 60_000);
});

describe("an agent that refuses the kit's prompt (a setting no run can use) is a mistake of the test, not a pass", () => {
	// Two tools of one name: every prompt() rejects with a TypeError before the run starts. Before, both reported ok with nothing tested.
	const twice = factory(() => ({ initialState: { model, tools: [lookup(), lookup()] } }));
	const expected = /^agentchart\/testing: your agent refused the kit's prompt, so nothing of it could be tested: Tools: two tools are named "lookup_order" \(tools\[0\] and tools\[1\]\); tool names must be unique$/;

	it("by exploreAgent", async () => {
		expect((await thrownBy(() => exploreAgent(twice, { restores: false, ...quiet })))?.message).toMatch(expected);
	}, 60_000);

	it("by fuzzAgent", async () => {
		expect((await thrownBy(() => fuzzAgent(twice, { runs: 2, seed: 1, ...quiet })))?.message).toMatch(expected);
	}, 60_000);
});
