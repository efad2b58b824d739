/**
 * What the random differential of test/machine/chart-logic.test.ts does not reach (a mutation
 * run of src/machines/chart-logic.ts showed which): the charts the interpreter refuses and the
 * message each gets, failures while a chart runs, an eventless loop that never rests, the
 * assign and raise forms the toy chart does not use, transitions to the source state and to a
 * descendant with and without `reenter`, exit actions on reaching the final state, a fixed
 * output, the snapshot as it is persisted, serialized and stopped, and an assign through a context
 * copier (`ChartLogicOptions.copyContext`). Each behaviour is checked
 * against XState's interpreter on the same machine wherever XState runs it.
 */
import { type AnyActorLogic, type AnyStateMachine, type EventObject, assign, createActor, enqueueActions, fromCallback, fromPromise, setup, stateIn } from "xstate";
import { describe, expect, it } from "vitest";
import { thrownBy } from "../agent/helpers.js";
import { chartLogic } from "../../src/machines/chart-logic.js";
import { LeanActor } from "../../src/machines/lean-actor.js";

const refusals: [string, () => AnyStateMachine, RegExp][] = [
	["a guard nobody implemented", () => setup({}).createMachine({ id: "g", initial: "x", states: { x: { on: { e: { guard: "nope" as never, target: "y" } } }, y: {} } }), /Guard 'nope' is not implemented/],
	[
		"a guard with params",
		() => setup({ guards: { yes: () => true } }).createMachine({ id: "p", initial: "x", states: { x: { on: { e: { guard: { type: "yes", params: { a: 1 } }, target: "y" } } }, y: {} } }),
		/a guard with params \(in 'p\.x'\) is not supported; run this chart with XState's createActor\(machine\)/,
	],
	["a built-in guard other than and/or/not", () => setup({}).createMachine({ id: "s", initial: "x", states: { x: { on: { e: { guard: stateIn("#s.y") as never, target: "y" } } }, y: {} } }), /a built-in guard other than and\/or\/not \(in 's\.x'\)/],
	["an action nobody implemented", () => setup({}).createMachine({ id: "a", initial: "x", states: { x: { entry: "nope" as never } } }), /action 'nope' is not implemented/],
	["initial actions", () => setup({ actions: { inc: assign({}) } }).createMachine({ id: "i", initial: { target: "x", actions: "inc" } as never, states: { x: {} } }), /initial actions \(in 'i'\)/],
	["an inline invoked actor", () => setup({}).createMachine({ id: "v", initial: "x", states: { x: { invoke: { src: fromPromise(async () => 1) } as never } } }), /an inline invoked actor \(in 'v\.x'\)/],
	[
		// XState names it by its place in the state's list: the eleventh is `xstate.invoke.10.…`.
		"an inline invoked actor after ten named ones",
		() =>
			setup({ actors: { p: fromPromise(async () => 1) } }).createMachine({
				id: "w",
				initial: "x",
				states: { x: { invoke: [...Array.from({ length: 10 }, () => ({ src: "p" as const })), { src: fromPromise(async () => 1) }] as never } },
			}),
		/an inline invoked actor \(in 'w\.x'\)/,
	],
	["an invoked actor with a systemId", () => setup({ actors: { p: fromPromise(async () => 1) } }).createMachine({ id: "y", initial: "x", states: { x: { invoke: { src: "p", systemId: "sys" } } } }), /invoke with systemId or onSnapshot \(in 'y\.x'\)/],
	[
		"an invoked actor with onSnapshot",
		() => setup({ actors: { p: fromPromise(async () => 1) }, actions: { inc: assign({}) } }).createMachine({ id: "o", initial: "x", states: { x: { invoke: { src: "p", onSnapshot: { actions: "inc" } } } } }),
		/invoke with systemId or onSnapshot \(in 'o\.x'\)/,
	],
	["a transition with several targets", () => setup({}).createMachine({ id: "m", initial: "x", states: { x: { on: { e: { target: ["y", "z"] } } }, y: {}, z: {} } }), /a transition with several targets \(in 'm\.x'\)/],
];

/** Starts an actor on the logic and returns how it failed, or its status when it did not. */
function failureOf(logic: AnyActorLogic, events: EventObject[] = []): string {
	const errors: string[] = [];
	const actor = createActor(logic);
	actor.subscribe({ error: (error) => errors.push(String(error)) });
	actor.start();
	for (const event of events) actor.send(event);
	actor.stop();
	return errors[0] ?? `no failure (${actor.getSnapshot().status})`;
}

interface EdgeContext {
	n: number;
	items: string[];
}

const edges = setup({
	types: { context: {} as EdgeContext, emitted: {} as { type: "seen"; what: string } },
	actors: {
		idle: fromCallback(() => () => {}),
	},
	actions: {
		/** The property-map form of assign, a function and a plain value. */
		bump: assign({ n: ({ context }) => context.n + 1, items: ["bumped"] }),
		/** enqueue.assign with a function of the context, not a patch object. */
		bumpMore: enqueueActions(({ enqueue }) => enqueue.assign(({ context }) => ({ n: context.n + 100 }))),
		/** assign with a function of the context. */
		bumpFn: assign(({ context }) => ({ n: context.n + 1000 })),
		/** Raises an event no state handles: it is taken and nothing happens. */
		raiseUnhandled: enqueueActions(({ enqueue }) => enqueue.raise({ type: "nobody" })),
		/** A raise without a delay: taken in the same macrostep. */
		raiseBump: enqueueActions(({ enqueue }) => enqueue.raise({ type: "bump" })),
	},
});

/** An action that emits what it says (typed loosely: XState infers an action's types from the machine it is written in). */
const said = (what: string): never => enqueueActions(({ enqueue }) => enqueue.emit({ type: "seen", what } as never)) as never;

const edgeMachine = edges.createMachine({
	id: "edges",
	context: { n: 0, items: [] },
	// A fixed output, not a function of the context.
	output: { finished: true },
	initial: "idle",
	entry: said("enter root"),
	exit: said("exit root"),
	on: { bump: { actions: "bump" }, bumpMore: { actions: "bumpMore" }, bumpFn: { actions: "bumpFn" }, raise: { actions: "raiseBump" }, raiseUnhandled: { actions: ["raiseUnhandled", "bump"] }, end: ".done" },
	states: {
		idle: {
			entry: said("enter idle"),
			exit: said("exit idle"),
			on: { self: { target: "idle", actions: said("self") }, selfAgain: { target: "idle", reenter: true }, down: "outer" },
		},
		outer: {
			entry: said("enter outer"),
			exit: said("exit outer"),
			initial: "a",
			invoke: { id: "helper", src: "idle" },
			on: { toB: ".b", toBAgain: { target: ".b", reenter: true }, up: "idle", stay: "outer" },
			states: {
				a: { entry: said("enter a"), exit: said("exit a") },
				b: { entry: said("enter b"), exit: said("exit b") },
			},
		},
		done: { type: "final", entry: said("enter done"), exit: said("exit done") },
	},
});

type Host = "xstate" | "chart" | "lean" | "copier";
type MachineActor = ReturnType<typeof createActor<AnyStateMachine>>;

/** How often the "copier" host's context copier ran. */
let contextCopies = 0;
/** The edge chart's context, every field written out (the "copier" host's `copyContext`). */
const copyEdgeContext = (context: EdgeContext): EdgeContext => {
	contextCopies++;
	return { n: context.n, items: context.items };
};

/**
 * An actor running `machine` on XState's interpreter, on `chartLogic` in XState's actor, on a
 * lean actor, or on `chartLogic` with a context copier in a lean actor.
 */
function actorOn(host: Host, machine: AnyStateMachine): MachineActor {
	if (host === "xstate") return createActor(machine);
	if (host === "copier") return new LeanActor(chartLogic(machine, { copyContext: copyEdgeContext as never })) as unknown as MachineActor;
	const logic = chartLogic(machine);
	return (host === "chart" ? createActor(logic) : new LeanActor(logic)) as unknown as MachineActor;
}

/** What an observer and an emitted-event handler see of a script, with the persisted snapshot after each event. */
function trace(host: Host, machine: AnyStateMachine, events: EventObject[]): string[] {
	const lines: string[] = [];
	const actor = actorOn(host, machine);
	actor.on("*", (event) => lines.push(`emit ${JSON.stringify(event)}`));
	actor.subscribe((snapshot) => lines.push(`snapshot ${snapshot.status} ${JSON.stringify(snapshot.value)} ${JSON.stringify(snapshot.context)} ${Object.keys(snapshot.children).join(",")}`));
	actor.start();
	for (const event of events) {
		actor.send(event);
		const persisted = actor.getPersistedSnapshot() as { status: string; value: unknown; context: unknown; children: Record<string, { src: unknown }>; output: unknown; error: unknown };
		const children = Object.entries(persisted.children).map(([id, child]) => `${id}:${String(child.src)}`);
		lines.push(`persisted ${persisted.status} ${JSON.stringify(persisted.value)} ${JSON.stringify(persisted.context)} ${children.join(",")} ${JSON.stringify(persisted.output)} ${String(persisted.error)}`);
		const json = (actor.getSnapshot() as unknown as { toJSON(): { status: string; value: unknown; context: unknown; output: unknown } }).toJSON();
		lines.push(`json ${json.status} ${JSON.stringify(json.value)} ${JSON.stringify(json.context)} ${JSON.stringify(json.output)}`);
	}
	actor.stop();
	const stopped = actor.getSnapshot();
	lines.push(`stopped ${stopped.status} ${JSON.stringify(stopped.context)}`);
	return lines;
}

describe("chartLogic at its edges", () => {
	for (const [what, machine, message] of refusals) {
		it(`refuses ${what} when the logic is built, with a message that says so`, () => {
			expect(thrownBy(() => chartLogic(machine()))).toMatch(message);
		});
	}

	it("fails the actor, naming what is missing, when an action spawns an unknown actor or sends to a missing child", () => {
		const spawner = setup({}).createMachine({ initial: "x", states: { x: { on: { spawn: { actions: enqueueActions(({ enqueue }) => enqueue.spawnChild("ghost" as never, { id: "g" } as never)) } } } } });
		expect(failureOf(chartLogic(spawner), [{ type: "spawn" }])).toMatch(/agentchart interpreter: actor 'ghost' is not implemented/);
		const sender = setup({}).createMachine({ id: "sender", initial: "x", states: { x: { on: { send: { actions: enqueueActions(({ enqueue }) => enqueue.sendTo("absent" as never, { type: "hi" } as never)) } } } } });
		expect(failureOf(chartLogic(sender), [{ type: "send" }])).toMatch(/Unable to send event to actor 'absent' from machine 'sender'/);
	});

	it("fails the actor instead of hanging when eventless transitions never let the chart rest", () => {
		const spinning = setup({ types: { context: {} as { n: number } } }).createMachine({ id: "spin", context: { n: 0 }, initial: "x", states: { x: { always: { actions: assign({ n: ({ context }) => context.n + 1 }) } } } });
		expect(failureOf(chartLogic(spinning))).toMatch(/more than 10,000 microsteps without the chart coming to rest \(in 'spin\.x'\)/);
	});

	it("leaves an earlier snapshot as it was: a step that spawns or stops a child changes only its own", () => {
		for (const host of ["chart", "lean"] as const) {
			const actor = actorOn(host, edgeMachine);
			actor.start();
			const idle = actor.getSnapshot();
			actor.send({ type: "down" }); // spawns the helper
			const outer = actor.getSnapshot();
			actor.send({ type: "up" }); // stops it
			expect(Object.keys(idle.children)).toEqual([]);
			expect(Object.keys(outer.children)).toEqual(["helper"]);
			expect(Object.keys(actor.getSnapshot().children)).toEqual([]);
			actor.stop();
		}
	});

	it("with a context copier, patches a fresh copy on every assign and leaves every earlier snapshot's context as it was", () => {
		const actor = actorOn("copier", edgeMachine);
		actor.start();
		const seen: { context: EdgeContext; json: string }[] = [];
		const record = () => {
			const { context } = actor.getSnapshot();
			seen.push({ context, json: JSON.stringify(context) });
		};
		record();
		contextCopies = 0;
		// bump assigns once (a property map), bumpMore once (enqueue.assign), bumpFn once (a function).
		for (const type of ["bump", "bumpMore", "bumpFn", "bump"]) {
			actor.send({ type });
			record();
		}
		expect(contextCopies).toBe(4);
		expect(seen.map((entry) => entry.context.n)).toEqual([0, 1, 101, 1101, 1102]);
		// Each step made a new context and wrote nothing into an earlier one.
		expect(new Set(seen.map((entry) => entry.context)).size).toBe(seen.length);
		for (const entry of seen) expect(JSON.stringify(entry.context)).toBe(entry.json);
		actor.stop();
	});

	it("stops every child when it reaches the final state, those of the states it leaves and the root's, as XState does", () => {
		const keeper = edges.createMachine({
			id: "keeper",
			context: { n: 0, items: [] },
			initial: "working",
			invoke: { id: "rootHelper", src: "idle" },
			states: { working: { invoke: { id: "stateHelper", src: "idle" }, on: { end: "done" } }, done: { type: "final" } },
		});
		const outcomes: string[] = [];
		for (const host of ["xstate", "chart", "lean"] as const) {
			const actor = actorOn(host, keeper);
			actor.start();
			const children = { ...actor.getSnapshot().children } as Record<string, { getSnapshot(): { status: string } }>;
			actor.send({ type: "end" });
			const statuses = Object.entries(children).map(([id, child]) => `${id} ${child.getSnapshot().status}`);
			outcomes.push(`${actor.getSnapshot().status}; listed: ${Object.keys(actor.getSnapshot().children).join(",")}; ${statuses.join(", ")}`);
		}
		expect(outcomes[0]).toBe("done; listed: rootHelper; rootHelper stopped, stateHelper stopped");
		expect(outcomes[1]).toBe(outcomes[0]);
		expect(outcomes[2]).toBe(outcomes[0]);
	});

	it("rests after an eventless transition that changed nothing, as XState does (it is not taken again)", () => {
		const quiet = setup({}).createMachine({ id: "quiet", initial: "x", states: { x: { always: { actions: said("once") }, on: { poke: { actions: said("poked") } } } } });
		const theirs = trace("xstate", quiet, [{ type: "poke" }]);
		expect(theirs.filter((line) => line.startsWith("emit"))).toHaveLength(3);
		expect(trace("chart", quiet, [{ type: "poke" }])).toEqual(theirs);
		expect(trace("lean", quiet, [{ type: "poke" }])).toEqual(theirs);
	});

	it("takes each edge as XState does: assign's property map, a raise without delay, self and descendant targets, the final state's exits, a fixed output, persisted and stopped snapshots", () => {
		const scripts: EventObject[][] = [
			[{ type: "bump" }, { type: "bumpMore" }, { type: "bumpFn" }, { type: "raiseUnhandled" }, { type: "raise" }, { type: "self" }, { type: "selfAgain" }, { type: "down" }, { type: "toB" }, { type: "toBAgain" }, { type: "toB" }, { type: "up" }, { type: "end" }],
			[{ type: "down" }, { type: "toBAgain" }, { type: "end" }],
			[{ type: "down" }, { type: "up" }, { type: "raise" }],
			// To its own source without reenter, from a child and at the top level: no ancestor is entered again.
			[{ type: "down" }, { type: "toB" }, { type: "stay" }, { type: "stay" }, { type: "up" }, { type: "self" }],
		];
		for (const script of scripts) {
			const theirs = trace("xstate", edgeMachine, script);
			expect(trace("chart", edgeMachine, script)).toEqual(theirs);
			expect(trace("lean", edgeMachine, script)).toEqual(theirs);
			expect(trace("copier", edgeMachine, script)).toEqual(theirs);
		}
		// The first script ends in the final state: entered, then every active state exited, the root last.
		const first = trace("chart", edgeMachine, scripts[0] as EventObject[]);
		const said = first.filter((line) => line.startsWith("emit")).map((line) => (JSON.parse(line.slice(5)) as { what: string }).what);
		expect(said.slice(-3)).toEqual(["enter done", "exit done", "exit root"]);
		expect(first.at(-3)).toContain('{"finished":true}');
	});
});
