/**
 * Edges a random run of the toy chart may not reach, each against XState's interpreter: the
 * forms of assign, a raise without delay and one nobody handles, transitions to the source
 * state and to a descendant with and without `reenter`, the final state's exits and a fixed
 * output, the children stopped at the end, and contexts left as they were.
 */
import { assign, createActor, enqueueActions, fromCallback, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { chartLogic } from "../../../src/machines/interpreter/chart-logic.js";
import { type Step, lastState, play, playBoth } from "./harness.js";

interface EdgeContext {
	n: number;
	items: string[];
}

const edges = setup({
	types: { context: {} as EdgeContext, emitted: {} as { type: "seen"; what: string } },
	actors: { idle: fromCallback(() => () => {}) },
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
	invoke: { id: "rootHelper", src: "idle" },
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

const scripts: Step[][] = [
	[{ type: "bump" }, { type: "bumpMore" }, { type: "bumpFn" }, { type: "raiseUnhandled" }, { type: "raise" }, { type: "self" }, { type: "selfAgain" }, { type: "down" }, { type: "toB" }, { type: "toBAgain" }, { type: "toB" }, { type: "up" }, { type: "end" }],
	[{ type: "down" }, { type: "toBAgain" }, { type: "end" }],
	[{ type: "down" }, { type: "up" }, { type: "raise" }],
	// To its own source without reenter, from a child and at the top level: no ancestor is entered again.
	[{ type: "down" }, { type: "toB" }, { type: "stay" }, { type: "stay" }, { type: "up" }, { type: "self" }],
];

describe("the interpreter at its edges, against XState's", () => {
	it("takes each edge as XState does: assign's forms, raises, self and descendant targets, the final state's exits and output, the children stopped at the end", async () => {
		for (const script of scripts) {
			const { ours, theirs } = await playBoth(edgeMachine, script);
			expect(ours).toEqual(theirs);
		}
		const first = await play(edgeMachine, "agentchart", scripts[0] as Step[]);
		const saids = first.filter((line) => line.startsWith("emit")).map((line) => (JSON.parse(line.slice(5)) as { what: string }).what);
		expect(saids.slice(-3)).toEqual(["enter done", "exit done", "exit root"]);
		expect(lastState(first)).toContain('done "done" matches=true');
		expect(lastState(first)).toContain('output={"finished":true}');
		// The children are stopped, and still listed, as XState leaves them.
		expect(lastState(first)).toContain("children=[rootHelper:stopped]");
	});

	it("makes a new context on every assign and leaves every earlier snapshot's context as it was", () => {
		const actor = createActor(chartLogic(edgeMachine));
		actor.start();
		const seen: { context: EdgeContext; json: string }[] = [];
		const record = () => {
			const { context } = actor.getSnapshot();
			seen.push({ context, json: JSON.stringify(context) });
		};
		record();
		// bump assigns once (a property map), bumpMore once (enqueue.assign), bumpFn once (a function).
		for (const type of ["bump", "bumpMore", "bumpFn", "bump"]) {
			actor.send({ type } as never);
			record();
		}
		expect(seen.map((entry) => entry.context.n)).toEqual([0, 1, 101, 1101, 1102]);
		expect(new Set(seen.map((entry) => entry.context)).size).toBe(seen.length);
		for (const entry of seen) expect(JSON.stringify(entry.context)).toBe(entry.json);
		actor.stop();
	});

	it("leaves an earlier snapshot as it was: a step that spawns or stops a child changes only its own", () => {
		const actor = createActor(chartLogic(edgeMachine));
		actor.start();
		const idle = actor.getSnapshot();
		actor.send({ type: "down" } as never);
		const outer = actor.getSnapshot();
		actor.send({ type: "up" } as never);
		expect(Object.keys(idle.children)).toEqual(["rootHelper"]);
		expect(Object.keys(outer.children).sort()).toEqual(["helper", "rootHelper"]);
		expect(Object.keys(actor.getSnapshot().children)).toEqual(["rootHelper"]);
		actor.stop();
	});
});
