/**
 * util/keep-shape.ts keeps one instance of each class a run makes, so that V8 keeps those
 * classes' hidden classes (maps) through a full collection while no run is in progress: a dead
 * map takes every function optimized against it down with it, and the next runs compile them
 * again (1,000 concurrent runs after an idle full collection took about 1.5 times as long).
 * A kept instance only helps if it has the very map the run's instances have (same fields, in
 * the same order, no field representation that forces a new map), which only V8 can tell: its
 * natives syntax (`%HaveSameMap`) and `gc` are turned on at run time, as retention.test.ts does.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createMachine, enqueueActions } from "xstate";
import { StreamReader } from "../../src/actors/stream-actor.js";
import type { StreamActorInput } from "../../src/actors/stream-protocol.js";
import { Agent } from "../../src/agent.js";
import { chartLogic } from "../../src/machines/chart-logic.js";
import { LeanActor } from "../../src/machines/lean-actor.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { keptShapes } from "../../src/util/keep-shape.js";
import { echoTool } from "../agent/helpers.js";

setFlagsFromString("--allow-natives-syntax");
setFlagsFromString("--expose_gc");
// Made at run time, after the flag: a TypeScript transform cannot parse natives syntax.
const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
const gc = runInNewContext("gc") as () => void;

/** Live instances seen during a run, by name. */
type Seen = Map<string, object>;

/** Records, as a run's lean actors take their steps, the actors, snapshots, scopes, system and cancellation. */
function watchLeanActors(seen: Seen): () => void {
	const prototype = LeanActor.prototype as unknown as { update(this: LeanActor, snapshot: unknown, event: unknown): void };
	const update = prototype.update;
	prototype.update = function (this: LeanActor, snapshot: unknown, event: unknown) {
		const self = this as unknown as { _parent?: unknown; system: object; _actorScope: object };
		const role = self._parent ? "child" : "root";
		if (!seen.has(`LeanActor ${role}`)) {
			seen.set(`LeanActor ${role}`, this);
			seen.set(`snapshot of a ${role}`, snapshot as object);
			seen.set("LeanScope", self._actorScope);
			seen.set("LeanSystem", self.system);
		}
		const run = (snapshot as { context?: { run?: { controller?: object } } }).context?.run;
		if (run?.controller && !seen.has("RunAbort")) seen.set("RunAbort", run.controller);
		update.call(this, snapshot, event);
	};
	return () => {
		prototype.update = update;
	};
}

/** A step and its enqueue, from a chart of one state whose entry is an `enqueueActions` body. */
function stepOfAChart(seen: Seen): void {
	const machine = createMachine({
		entry: enqueueActions(({ enqueue }) => {
			seen.set("StepEnqueue", enqueue);
			seen.set("Step", (enqueue as unknown as { step: object }).step);
		}),
	});
	new LeanActor(chartLogic(machine)).start();
}

/** A run with a tool call (so a stream actor and a tool batch), its objects recorded in `seen`. */
async function oneRun(seen: Seen): Promise<void> {
	const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "x" }, "t1")] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool()] }, streamFn: scripted.streamFn });
	agent.subscribe(() => {});
	seen.set("Agent", agent);
	seen.set("MutableAgentState", agent.state);
	const unwatch = watchLeanActors(seen);
	try {
		await agent.prompt("go");
	} finally {
		unwatch();
	}
	stepOfAChart(seen);
}

/** For each live instance: is there a kept instance of its class, and does it share its map? */
function compare(seen: Seen): Record<string, string> {
	const report: Record<string, string> = {};
	for (const [name, live] of seen) {
		const kept = keptShapes().filter((instance) => instance.constructor === live.constructor);
		report[name] = kept.length === 0 ? "none kept" : kept.some((instance) => sameMap(instance, live)) ? "same map" : "other map";
	}
	return report;
}

/**
 * Instances of classes found by walking the properties of what a run made (to a few levels):
 * a class added to a run later is found here without being named.
 */
function classInstancesAround(roots: Iterable<object>): Seen {
	const found: Seen = new Map();
	const visited = new Set<object>();
	let layer = [...roots];
	for (let depth = 0; depth < 4 && layer.length > 0; depth++) {
		const next: object[] = [];
		for (const value of layer) {
			if (visited.has(value)) continue;
			visited.add(value);
			const maker = (Object.getPrototypeOf(value) as { constructor?: unknown } | null)?.constructor;
			if (typeof maker === "function" && isOurs(maker) && !found.has(maker.name)) found.set(maker.name, value);
			for (const key of Object.getOwnPropertyNames(value)) {
				const property = Object.getOwnPropertyDescriptor(value, key);
				const child: unknown = property && "value" in property ? property.value : undefined;
				if (typeof child === "object" && child !== null) next.push(child);
			}
		}
		layer = next;
	}
	return found;
}

/** Node's and XState's classes a run's objects refer to: not ours to keep. */
const NOT_OURS = new Set(["AbortController", "AbortSignal", "EventTarget", "Actor", "StateMachine", "StateNode", "Mailbox"]);

/** A class of agentchart's own: a JavaScript class (not a built-in) that is not Node's or XState's. */
function isOurs(maker: Function): boolean {
	const source = Function.prototype.toString.call(maker);
	return source.startsWith("class ") && !source.includes("[native code]") && !NOT_OURS.has(maker.name);
}

const CLASSES = ["Agent", "MutableAgentState", "LeanActor root", "LeanActor child", "snapshot of a root", "snapshot of a child", "LeanScope", "LeanSystem", "RunAbort", "Step", "StepEnqueue"];

describe("keepShape", () => {
	it("keeps an instance with the run's own map for each class a run makes, before and after full collections", async () => {
		const expected = Object.fromEntries(CLASSES.map((name) => [name, "same map"]));
		const seen: Seen = new Map();
		await oneRun(seen);
		expect(compare(seen)).toEqual(expected);
		// Every class of ours found by walking what the run made, named or not: a class added to
		// a run later fails here until it has its kept instance.
		const found = compare(classInstancesAround(seen.values()));
		expect(Object.keys(found)).toEqual(expect.arrayContaining(["Agent", "ChartState", "LeanActor", "RunAbort", "CallbackState"]));
		expect(Object.entries(found).filter(([, verdict]) => verdict !== "same map")).toEqual([]);
		seen.clear();
		// Full collections with no run in progress (V8 lets an unused map live through two), then a run.
		for (let i = 0; i < 3; i++) gc();
		await oneRun(seen);
		expect(compare(seen)).toEqual(expected);
	});

	// A run's stream reader is reachable only from the promise reactions of its read, where the
	// walk above does not look: one is built here from a scripted model's stream, with a run's
	// kinds of arguments, and must share the kept instance's map, also after full collections.
	it("keeps an instance with the stream reader's map", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const reader = async () => {
			const stream = await scripted.streamFn(scripted.model, { systemPrompt: "", messages: [] }, {});
			const reading = { stopped: false, events: 0 };
			const input = { attempt: 0, announceToolCalls: false } as unknown as StreamActorInput;
			const noop = () => {};
			return new StreamReader(stream, stream[Symbol.asyncIterator](), reading, input, noop, noop, noop, noop);
		};
		expect(compare(new Map([["StreamReader", await reader()]]))).toEqual({ StreamReader: "same map" });
		for (let i = 0; i < 3; i++) gc();
		expect(compare(new Map([["StreamReader", await reader()]]))).toEqual({ StreamReader: "same map" });
	});
});
