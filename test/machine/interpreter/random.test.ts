/**
 * The interpreter against XState's for random event sequences on a toy chart that uses every
 * feature the interpreter supports at once (nested states, entry and exit actions, reentry,
 * eventless chains, guards combined with and/or/not, invoked promise and callback actors,
 * spawned children, delayed and cancelled events, a final state with output, an unhandled child
 * failure, a child that ends as the chart starts, a restore from a persisted snapshot midway,
 * onto either interpreter): each step's
 * emitted events, snapshots, errors and inspection records must be the same. The agent chart
 * itself runs the whole behaviour suite on both interpreters (`npm test` runs it twice).
 */
import fc from "fast-check";
import { type EventObject, and, enqueueActions, fromCallback, fromObservable, fromPromise, not, or, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { type Step, lastState, play } from "./harness.js";

interface ToyContext {
	count: number;
	log: string[];
}
type ToyEvent =
	| { type: "go" }
	| { type: "back" }
	| { type: "inc" }
	| { type: "again" }
	| { type: "ping" }
	| { type: "call"; fail: boolean }
	| { type: "spawn" }
	| { type: "kill" }
	| { type: "later" }
	| { type: "never" }
	| { type: "tick" }
	| { type: "pong" }
	| { type: "crash" }
	| { type: "finish" }
	| { type: "stay" };

const toy = setup({
	types: { context: {} as ToyContext, events: {} as ToyEvent, emitted: {} as { type: string; detail?: unknown } },
	actors: {
		// Ends as it starts (its initial state is final): the chart starts it once, and hears it end once.
		quick: fromObservable(() => ({ subscribe: (observer: { next: (value: number) => void; complete: () => void }) => (observer.next(1), observer.complete(), { unsubscribe: () => {} }) }) as never),
		answer: fromPromise<string, { fail: boolean }>(async ({ input }) => {
			if (input.fail) throw new Error("no answer");
			return "answer";
		}),
		echo: fromCallback<EventObject, { tag: string }>(({ input, sendBack, receive }) => {
			receive((event) => {
				if (event.type === "ping") sendBack({ type: "pong" });
				if (event.type === "crash") throw new Error(`${input.tag} crashed`);
			});
			return () => {};
		}),
	},
	guards: {
		even: ({ context }) => context.count % 2 === 0,
		big: ({ context }) => context.count > 3,
	},
	actions: {
		note: enqueueActions(({ context, event, enqueue }) => {
			enqueue.assign({ log: [...context.log, event.type] });
			enqueue.emit({ type: "noted", detail: event.type });
		}),
		enterA: enqueueActions(({ enqueue }) => enqueue.emit({ type: "enter", detail: "a" })),
		exitA: enqueueActions(({ enqueue }) => enqueue.emit({ type: "exit", detail: "a" })),
		enterB: enqueueActions(({ context, enqueue }) => {
			enqueue.emit({ type: "enter", detail: "b" });
			enqueue.assign({ count: context.count + 10 });
			enqueue.emit({ type: "count", detail: context.count });
		}),
		exitB: enqueueActions(({ enqueue }) => enqueue.emit({ type: "exit", detail: "b" })),
		inc: enqueueActions(({ context, enqueue }) => enqueue.assign({ count: context.count + 1 })),
		ping: enqueueActions(({ enqueue }) => enqueue.sendTo("pinger", { type: "ping" })),
		spawn: enqueueActions(({ enqueue }) => enqueue.spawnChild("echo", { id: "spawned", input: { tag: "spawned" } })),
		kill: enqueueActions(({ enqueue }) => enqueue.stopChild("spawned")),
		later: enqueueActions(({ enqueue }) => enqueue.raise({ type: "tick" }, { delay: 1, id: "tick" })),
		never: enqueueActions(({ enqueue }) => enqueue.cancel("tick")),
		crash: enqueueActions(({ enqueue }) => enqueue.sendTo("pinger", { type: "crash" })),
		report: enqueueActions(({ event, enqueue }) => enqueue.emit({ type: "report", detail: (event as { output?: unknown; error?: unknown }).output ?? String((event as { error?: unknown }).error) })),
	},
});

const toyMachine = toy.createMachine({
	id: "toy",
	context: { count: 0, log: [] },
	output: ({ context }) => ({ count: context.count }),
	initial: "a",
	invoke: { id: "quick", src: "quick" },
	on: {
		"xstate.done.actor.quick": { actions: "report" },
		inc: { actions: ["inc", "note"] },
		later: { actions: "later" },
		never: { actions: "never" },
		tick: { actions: "note" },
		finish: { target: ".done", actions: "note" },
	},
	states: {
		a: {
			entry: "enterA",
			exit: "exitA",
			on: {
				go: [
					{ guard: and(["even", not("big")]), target: "b", actions: "note" },
					{ guard: or(["big", "even"]), target: "b.deep" },
					{ target: "a", reenter: true, actions: "note" },
				],
			},
		},
		b: {
			entry: "enterB",
			exit: "exitB",
			initial: "shallow",
			invoke: { id: "pinger", src: "echo", input: ({ context }) => ({ tag: `pinger${context.count}` }) },
			on: {
				back: { target: "a", actions: "note" },
				ping: { actions: "ping" },
				pong: { actions: "note" },
				crash: { actions: "crash" },
				spawn: { actions: "spawn" },
				kill: { actions: "kill" },
				again: { target: "b", reenter: true },
			},
			states: {
				shallow: {
					entry: "note",
					always: { guard: "big", target: "deep" },
					on: { call: { target: "calling" } },
				},
				deep: {
					entry: "note",
					// To itself without reenter: nothing is exited or entered (b above it least of all).
					on: { go: { target: "#toy.a" }, call: { target: "calling" }, stay: { target: "deep", actions: "note" } },
				},
				calling: {
					invoke: {
						id: "answer",
						src: "answer",
						input: ({ event }) => ({ fail: event.type === "call" && event.fail }),
						onDone: { target: "deep", actions: "report" },
						onError: { target: "shallow", actions: "report" },
					},
				},
			},
		},
		done: { type: "final" },
	},
});

const eventArb: fc.Arbitrary<ToyEvent> = fc.oneof(
	...(["go", "back", "inc", "again", "ping", "spawn", "kill", "later", "never", "crash", "finish", "stay"] as const).map((type) => fc.constant({ type } as ToyEvent)),
	fc.boolean().map((fail): ToyEvent => ({ type: "call", fail })),
);


const stepArb: fc.Arbitrary<Step> = fc.oneof(
	{ weight: 8, arbitrary: eventArb },
	{ weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((wait): Step => ({ wait })) },
	{ weight: 1, arbitrary: fc.constantFrom<Step>({ persistAndRestore: "xstate" }, { persistAndRestore: "agentchart" }) },
);

/** Runs of the property: `PROPERTY_RUNS` (default 60). */
const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 60);

describe("the interpreter and XState's on random runs of a chart with every supported feature", () => {
	it("see the same, step by step", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(stepArb, { maxLength: 14 }), async (steps) => {
				const theirs = await play(toyMachine, "xstate", steps);
				expect(await play(toyMachine, "agentchart", steps)).toEqual(theirs);
			}),
			{ numRuns: PROPERTY_RUNS },
		);
	}, Math.max(120_000, PROPERTY_RUNS * 1_000));

	it("take the branches a random run may miss: reentry, a guarded deep entry, a failing call, a crash, the final state", async () => {
		const script: ToyEvent[] = [
			{ type: "go" }, // count 0: even and not big → b (count 10 on entry) → shallow → always → deep
			{ type: "stay" }, // deep to itself without reenter: nothing exited or entered
			{ type: "go" }, // deep → #toy.a
			{ type: "inc" }, // 11: odd, big
			{ type: "go" }, // or(big, even) → b.deep
			{ type: "call", fail: true }, // → calling → onError → shallow → always → deep
			{ type: "spawn" },
			{ type: "ping" },
			{ type: "again" }, // reenters b: exit and entry actions, pinger restarted
			{ type: "kill" },
			{ type: "later" },
			{ type: "crash" }, // the pinger throws: nothing handles its error, the chart fails
		];
		const theirs = await play(toyMachine, "xstate", script);
		expect(await play(toyMachine, "agentchart", script)).toEqual(theirs);
		expect(lastState(theirs)).toMatch(/^now error/);
		const finish: ToyEvent[] = [{ type: "inc" }, { type: "finish" }];
		const finished = await play(toyMachine, "agentchart", finish);
		expect(finished).toEqual(await play(toyMachine, "xstate", finish));
		expect(lastState(finished)).toContain('done "done" matches=true');
		expect(lastState(finished)).toContain('output={"count":1}');
	});
});
