/**
 * What an outside probe of the kit found, each held here: your
 * own console.warn is printed, not reported; a queue your code clears on purpose is not a loss; fuzzAgent hears a throwing listener and
 * transformContext as exploreAgent does; a `calls` entry naming no tool, a path the walk cannot
 * follow and nonsensical fuzz options are refused rather than passed.
 */
import { describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import { QueueLedger } from "../../src/testing/queue-ledger.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import { factory, lookup, ok, quiet } from "./user-agent.js";

const model = createScriptedModel([]).model;

describe("your own warning is printed and not reported, whatever its words", () => {
	it("by exploreAgent and fuzzAgent", async () => {
		const warning = "slow backend, retrying with backoff factor 2";
		const printed = vi.spyOn(console, "warn").mockImplementation(() => undefined);
		try {
			const warns = factory(() => ({
				initialState: {
					model,
					tools: [
						lookup(async () => {
							console.warn(warning);
							return ok("ships tomorrow");
						}),
					],
				},
			}));
			const explored = await exploreAgent(warns, { restores: false });
			expect(explored.violations, explored.format()).toEqual([]);
			const fuzzed = await fuzzAgent(warns, { runs: 10, seed: 1, ...quiet });
			expect(fuzzed.violations, fuzzed.format()).toEqual([]);
			expect(printed).toHaveBeenCalledWith(warning);
		} finally {
			printed.mockRestore();
		}
	}, 120_000);
});

describe("a message your code clears from the queues is not lost", () => {
	// A correct agent: when its run is aborted, a listener drops the follow-ups meant for it.
	const dropsFollowUpsOnAbort = factory((self) => ({
		initialState: { model, tools: [lookup()] },
		listeners: [
			(event) => {
				const last = event.type === "agent_end" ? event.messages.at(-1) : undefined;
				if (last?.role === "assistant" && (last as AssistantMessage).stopReason === "aborted") self().clearFollowUpQueue();
			},
		],
	}));

	it("exploreAgent", async () => {
		const report = await exploreAgent(dropsFollowUpsOnAbort, { path: "prompt → followUp → abort" });
		expect(report.steps, report.format()).toBe(3);
		expect(report.violations, report.format()).toEqual([]);
	}, 60_000);

	it("fuzzAgent", async () => {
		const report = await fuzzAgent(dropsFollowUpsOnAbort, { runs: 100, seed: 99, ...quiet });
		expect(report.violations, report.format()).toEqual([]);
	}, 120_000);

	it("a clear of one queue does not excuse a loss from the other", () => {
		const ledger = new QueueLedger();
		ledger.track({ role: "user", content: "steer me", timestamp: 1 }, "steer");
		ledger.cleared(["followUp"]);
		expect(ledger.violations({ steering: [], followUps: [] }).map((each) => each.message)).toEqual(['steer "steer me" lost (given 1, delivered 0, still queued 0)']);
	});
});

describe("a slow listener of yours is not blamed on the engine at a restore", () => {
	// An async listener that throws a moment after each tool's end: its only bug. The walk
	// restored while the toolResult and turn_end events were still on their way to the
	// listeners; the restored agent does not emit them again, so the walk's listener never heard
	// them, and the next turn_start read as "inside a turn" (and the call as never answered).
	it("exploreAgent restores only once the listeners heard what the agent emitted", async () => {
		const slowThrows = factory(() => ({
			initialState: { model, tools: [lookup()] },
			listeners: [
				async (event) => {
					if (event.type !== "tool_execution_end") return;
					await new Promise((resolve) => setTimeout(resolve, 1));
					throw new Error("slow listener bug");
				},
			],
		}));
		const report = await exploreAgent(slowThrows, { shrink: false, settleTimeoutMs: 2_000 });
		expect(report.coverage.restores.taken.length, report.format()).toBeGreaterThan(0);
		expect(report.format()).toContain("[listener-threw] a listener threw at tool_execution_end: slow listener bug");
		expect(
			report.violations.filter((found) => found.rule !== "listener-threw"),
			report.format(),
		).toEqual([]);
	}, 300_000);
});

describe("fuzzAgent hears your listener and hooks throw, as exploreAgent does", () => {
	it("a listener that throws", async () => {
		const throwsOnToolEnd = factory(() => ({
			initialState: { model, tools: [lookup()] },
			listeners: [
				(event) => {
					if (event.type === "tool_execution_end") throw new Error("listener bug");
				},
			],
		}));
		const report = await fuzzAgent(throwsOnToolEnd, { runs: 30, seed: 7, ...quiet });
		expect(report.ok).toBe(false);
		expect(report.format()).toContain("[listener-threw] a listener threw at tool_execution_end: listener bug");
	}, 120_000);

	it("a listener subscribed by the factory that rejects", async () => {
		const rejects: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model, tools: [lookup()] } });
			const agent = kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
			agent.subscribe(async (event) => {
				if (event.type === "tool_execution_end") throw new Error("async listener bug");
			});
			return agent;
		};
		const explored = await exploreAgent(rejects, { restores: false });
		expect(explored.format()).toContain("[listener-threw] a listener threw at tool_execution_end: async listener bug");
		const report = await fuzzAgent(rejects, { runs: 30, seed: 7, ...quiet });
		expect(report.format()).toContain("[listener-threw] a listener threw at tool_execution_end: async listener bug");
	}, 120_000);

	it("a transformContext that throws, and a convertToLlm that throws", async () => {
		const transformThrows = factory(() => ({
			initialState: { model, tools: [lookup()] },
			transformContext: async (messages) => {
				if (messages.length > 2) throw new Error("transform bug");
				return messages;
			},
		}));
		const transformed = await fuzzAgent(transformThrows, { runs: 30, seed: 7, ...quiet });
		expect(transformed.format()).toMatch(/\[hook-threw\] transformContext threw on its \d+\w+ call \(\d+ messages\): transform bug/);
		const convertThrows = factory(() => ({
			initialState: { model, tools: [lookup()] },
			convertToLlm: (messages) => {
				if (messages.some((message) => message.role === "toolResult")) throw new Error("convert bug");
				return messages.filter((message) => message.role === "user" || message.role === "assistant" || message.role === "toolResult");
			},
		}));
		const converted = await fuzzAgent(convertThrows, { runs: 30, seed: 7, ...quiet });
		expect(converted.format()).toMatch(/\[hook-threw\] convertToLlm threw on its \d+\w+ call \(\d+ messages\): convert bug/);
	}, 120_000);
});

describe("a call naming no tool of the agent is refused", () => {
	let ran = 0;
	const throwsWhenRun = factory(() => ({
		initialState: {
			model,
			tools: [
				lookup(async () => {
					ran++;
					throw new TypeError("Cannot read properties of undefined (reading 'status')");
				}),
			],
		},
	}));
	const typo = [{ name: "lookup_ordr", arguments: { id: "A-17" } }];
	const expected = 'agentchart/testing: calls name "lookup_ordr", which is not a tool of the agent your factory made (its tools are "lookup_order")';

	it("by exploreAgent", async () => {
		await expect(exploreAgent(throwsWhenRun, { calls: typo })).rejects.toThrow(expected);
		expect(ran).toBe(0);
	});

	it("by fuzzAgent", async () => {
		await expect(fuzzAgent(throwsWhenRun, { calls: typo, seed: 3, runs: 5, ...quiet })).rejects.toThrow(expected);
		expect(ran).toBe(0);
	});

	it("names an agent without tools as such, and takes calls that name its tools", async () => {
		const noTools = factory(() => ({ initialState: { model } }));
		await expect(exploreAgent(noTools, { calls: typo })).rejects.toThrow('calls name "lookup_ordr", which is not a tool of the agent your factory made (it has no tools)');
		const report = await exploreAgent(throwsWhenRun, { calls: [{ name: "lookup_order", arguments: { id: "A-17" } }], restores: false });
		expect(ran).toBeGreaterThan(0);
		expect(report.configuration).toContain("lookup_order");
	}, 60_000);
});

describe("a path to replay that the walk cannot follow throws", () => {
	const agent = factory(() => ({ initialState: { model, tools: [lookup()] } }));
	const path = "prompt → delivered → delivered → stream.start → stream.done(text) → delivered";

	it("follows a path it can, as before", async () => {
		const report = await exploreAgent(agent, { path });
		expect(report.steps).toBe(6);
		expect(report.ok, report.format()).toBe(true);
	}, 60_000);

	it("says so of a path typed with ASCII arrows", async () => {
		await expect(exploreAgent(agent, { path: path.replaceAll(" → ", " -> ") })).rejects.toThrow(/cannot follow the path "prompt -> delivered.*" \(steps are separated by " → ", as the report prints them, not "->"\):\n {2}at step 1 /);
	}, 60_000);

	it("says so of a mistyped step, with the steps the model has there", async () => {
		const error = await exploreAgent(agent, { path: "prompt → delivered → delivered → stream.start → stream.done(tool1)" }).then(
			() => undefined,
			(thrown: unknown) => thrown as Error,
		);
		expect(error?.message).toContain('at step 5 ("stream.done(tool1)"): the model has no step "stream.done(tool1)" from where the agent is (it has ');
		expect(error?.message).toContain('"stream.done(tools1)"');
		expect(error?.message).toContain("followed before it: prompt → delivered → delivered → stream.start");
	}, 60_000);
});

describe("fuzzAgent refuses options that would test nothing", () => {
	const agent = factory(() => ({ initialState: { model, tools: [lookup()] } }));

	it.each([
		[{ runs: 0 }, RangeError, "fuzzAgent's runs must be an integer of at least 1, got 0"],
		[{ runs: Number.NaN }, RangeError, "fuzzAgent's runs must be an integer of at least 1, got NaN"],
		[{ runs: -5 }, RangeError, "fuzzAgent's runs must be an integer of at least 1, got -5"],
		[{ runs: 2.5 }, RangeError, "fuzzAgent's runs must be an integer of at least 1, got 2.5"],
		[{ settleTimeoutMs: 0 }, RangeError, "fuzzAgent's settleTimeoutMs must be a finite number of at least 1, got 0"],
		[{ seed: 1.5 }, TypeError, "fuzzAgent's seed must be an integer"],
		[{ path: "0:0:1" }, TypeError, 'fuzzAgent\'s path "0:0:1" replays only with the seed it was printed with'],
		[{ seed: 1, path: "0 -> 1" }, TypeError, "fuzzAgent's path must be the one a report printed"],
	])("%o", async (options, type, message) => {
		const thrown = await fuzzAgent(agent, { ...options, ...quiet }).then(
			() => undefined,
			(error: unknown) => error,
		);
		expect(thrown).toBeInstanceOf(type);
		expect((thrown as Error).message).toContain(message);
	});
});
