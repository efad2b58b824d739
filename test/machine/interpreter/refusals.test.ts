/**
 * What the interpreter refuses, and how: a machine outside its subset is refused when the logic
 * is built, with an error naming the state and the feature; what only shows while a chart runs
 * (an unknown actor, a send to a missing child, a loop that never rests) fails the actor, with
 * the same message as XState's where XState fails too.
 */
import { type AnyActorLogic, type AnyStateMachine, type EventObject, assign, createActor, emit, enqueueActions, fromPromise, setup, stateIn } from "xstate";
import { describe, expect, it } from "vitest";
import { chartLogic } from "../../../src/machines/interpreter/chart-logic.js";
import { thrownBy } from "../../agent/helpers.js";

const refusals: [string, () => AnyStateMachine, RegExp][] = [
	["a parallel state", () => setup({}).createMachine({ id: "p", type: "parallel", states: { x: {}, y: {} } }), /a parallel state \(in 'p'\)/],
	["a history state", () => setup({}).createMachine({ id: "h", initial: "x", states: { x: {}, past: { type: "history" } } }), /a history state \(in 'h\.past'\)/],
	["a delayed transition", () => setup({}).createMachine({ id: "d", initial: "x", states: { x: { after: { 10: "y" } }, y: {} } }), /a delayed transition \(after\) \(in 'd\.x'\)/],
	["tags", () => setup({}).createMachine({ id: "t", initial: "x", states: { x: { tags: ["busy"] } } }), /tags \(in 't\.x'\)/],
	["a wildcard event descriptor", () => setup({}).createMachine({ id: "w", initial: "x", states: { x: { on: { "*": "y" } }, y: {} } }), /wildcard event descriptor '\*' \(in 'w\.x'\)/],
	["a partial wildcard", () => setup({}).createMachine({ id: "pw", initial: "x", states: { x: { on: { "tool.*": "y" } }, y: {} } }), /wildcard event descriptor 'tool\.\*' \(in 'pw\.x'\)/],
	["a guard nobody implemented", () => setup({}).createMachine({ id: "g", initial: "x", states: { x: { on: { e: { guard: "nope" as never, target: "y" } } }, y: {} } }), /Guard 'nope' is not implemented/],
	[
		"a guard with params",
		() => setup({ guards: { yes: () => true } }).createMachine({ id: "gp", initial: "x", states: { x: { on: { e: { guard: { type: "yes", params: { a: 1 } }, target: "y" } } }, y: {} } }),
		/a guard with params \(in 'gp\.x'\) is not supported; run this chart with XState's createActor\(machine\)/,
	],
	["a built-in guard other than and/or/not", () => setup({}).createMachine({ id: "s", initial: "x", states: { x: { on: { e: { guard: stateIn("#s.y") as never, target: "y" } } }, y: {} } }), /a built-in guard other than and\/or\/not \(in 's\.x'\)/],
	["an action nobody implemented", () => setup({}).createMachine({ id: "a", initial: "x", states: { x: { entry: "nope" as never } } }), /action 'nope' is not implemented/],
	["an action with params", () => setup({ actions: { say: () => {} } }).createMachine({ id: "ap", initial: "x", states: { x: { entry: { type: "say", params: { a: 1 } } } } }), /an action with params \(in 'ap\.x'\)/],
	["a built-in action other than assign and enqueueActions", () => setup({}).createMachine({ id: "b", initial: "x", states: { x: { entry: emit({ type: "hi" }) } } }), /the built-in action 'xstate\.emit' outside enqueueActions \(assign and enqueueActions are supported\) \(in 'b\.x'\)/],
	["initial actions", () => setup({ actions: { inc: assign({}) } }).createMachine({ id: "i", initial: { target: "x", actions: "inc" } as never, states: { x: {} } }), /initial actions \(in 'i'\)/],
	["an inline invoked actor", () => setup({}).createMachine({ id: "v", initial: "x", states: { x: { invoke: { src: fromPromise(async () => 1) } as never } } }), /an inline invoked actor \(in 'v\.x'\)/],
	[
		// XState names it by its place in the state's list: the eleventh is `xstate.invoke.10.…`.
		"an inline invoked actor after ten named ones",
		() =>
			setup({ actors: { p: fromPromise(async () => 1) } }).createMachine({
				id: "iw",
				initial: "x",
				states: { x: { invoke: [...Array.from({ length: 10 }, () => ({ src: "p" as const })), { src: fromPromise(async () => 1) }] as never } },
			}),
		/an inline invoked actor \(in 'iw\.x'\)/,
	],
	["an invoked actor with a systemId", () => setup({ actors: { p: fromPromise(async () => 1) } }).createMachine({ id: "y", initial: "x", states: { x: { invoke: { src: "p", systemId: "sys" } } } }), /invoke with systemId or onSnapshot \(in 'y\.x'\)/],
	[
		"an invoked actor with onSnapshot",
		() => setup({ actors: { p: fromPromise(async () => 1) }, actions: { inc: assign({}) } }).createMachine({ id: "o", initial: "x", states: { x: { invoke: { src: "p", onSnapshot: { actions: "inc" } } } } }),
		/invoke with systemId or onSnapshot \(in 'o\.x'\)/,
	],
	["a transition with several targets", () => setup({}).createMachine({ id: "m", initial: "x", states: { x: { on: { e: { target: ["y", "z"] } } }, y: {}, z: {} } }), /a transition with several targets \(in 'm\.x'\)/],
];

/** Starts an actor on the logic, sends the events, and returns how it failed, or its status. */
function failureOf(logic: AnyActorLogic, events: EventObject[] = []): string {
	const errors: string[] = [];
	const actor = createActor(logic);
	actor.subscribe({ error: (error) => errors.push(String(error)) });
	actor.start();
	for (const event of events) actor.send(event);
	actor.stop();
	return errors[0] ?? `no failure (${actor.getSnapshot().status})`;
}

describe("the interpreter's refusals", () => {
	for (const [what, machine, message] of refusals) {
		it(`refuses ${what} when the logic is built, with a message that says so`, () => {
			expect(thrownBy(() => chartLogic(machine()))).toMatch(message);
		});
	}

	it("fails the actor, naming what is missing, when an action spawns an unknown actor or sends to a missing child (as XState does for the send)", () => {
		const spawner = setup({}).createMachine({ initial: "x", states: { x: { on: { spawn: { actions: enqueueActions(({ enqueue }) => enqueue.spawnChild("ghost" as never, { id: "g" } as never)) } } } } });
		expect(failureOf(chartLogic(spawner), [{ type: "spawn" }])).toMatch(/agentchart interpreter: actor 'ghost' is not implemented/);
		const sender = setup({}).createMachine({ id: "sender", initial: "x", states: { x: { on: { send: { actions: enqueueActions(({ enqueue }) => enqueue.sendTo("absent" as never, { type: "hi" } as never)) } } } } });
		expect(failureOf(chartLogic(sender), [{ type: "send" }])).toBe(failureOf(sender, [{ type: "send" }]));
		expect(failureOf(chartLogic(sender), [{ type: "send" }])).toMatch(/Unable to send event to actor 'absent' from machine 'sender'/);
	});

	it("refuses, naming the state, what an enqueueActions body enqueues outside the subset (found only as the body runs: it cannot be read before)", () => {
		const body = (run: (args: { enqueue: (action: never) => void; check: (guard: never) => boolean }) => void) =>
			setup({ actions: { track: () => {} }, guards: { isPage: () => true } }).createMachine({ id: "m", initial: "a", states: { a: { on: { go: { actions: enqueueActions(run as never) } } } } });
		const cases: [string, (args: { enqueue: (action: never) => void; check: (guard: never) => boolean }) => void, RegExp][] = [
			["a built-in action object", ({ enqueue }) => enqueue(emit({ type: "hi" }) as never), /the built-in action 'xstate\.emit' inside enqueueActions \(use enqueue\.emit, .*\(in 'm\.a'\)/],
			["an action with params", ({ enqueue }) => enqueue({ type: "track", params: { page: 1 } } as never), /an action with params inside enqueueActions \('track'\) \(in 'm\.a'\)/],
			["an action not implemented", ({ enqueue }) => enqueue("ghost" as never), /'ghost' is not implemented\) \(in 'm\.a'\)/],
			["check with a built-in guard", ({ check }) => void check(stateIn("#m.a") as never), /check inside enqueueActions with a guard the interpreter cannot take \(not implemented, with params, or a built-in other than and\/or\/not\) \(in 'm\.a'\)/],
			["check with a guard with params", ({ check }) => void check({ type: "isPage", params: { n: 1 } } as never), /check inside enqueueActions .* \(in 'm\.a'\)/],
		];
		for (const [what, run, message] of cases) expect(failureOf(chartLogic(body(run)), [{ type: "go" }]), what).toMatch(message);
		// A named action given as an object without params runs, as in XState.
		expect(failureOf(chartLogic(body(({ enqueue }) => enqueue({ type: "track" } as never))), [{ type: "go" }])).toMatch(/^no failure/);
	});

	it("refuses a spawn without an id while the chart runs (XState would store the child under 'undefined')", () => {
		const spawner = setup({ actors: { p: fromPromise(async () => 1) } }).createMachine({ initial: "x", states: { x: { on: { spawn: { actions: enqueueActions(({ enqueue }) => enqueue.spawnChild("p")) } } } } });
		expect(failureOf(chartLogic(spawner), [{ type: "spawn" }])).toMatch(/spawnChild without an id/);
	});

	it("fails as XState does when eventless transitions never let the chart rest and the machine sets maxIterations", () => {
		const spinning = setup({ types: { context: {} as { n: number } } }).createMachine({
			id: "spin",
			context: { n: 0 },
			options: { maxIterations: 1000 },
			initial: "x",
			states: { x: { on: { go: "y" } }, y: { always: { actions: assign({ n: ({ context }) => context.n + 1 }) } } },
		});
		expect(failureOf(chartLogic(spinning), [{ type: "go" }])).toBe(failureOf(spinning, [{ type: "go" }]));
		expect(failureOf(chartLogic(spinning), [{ type: "go" }])).toMatch(/more than 1000 microsteps/);
	});
});
