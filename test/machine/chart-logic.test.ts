/**
 * agentchart's chart interpreter (`chartLogic`) against XState's on the same machines: a toy
 * chart that uses every feature the interpreter supports (nested states, entry and exit
 * actions, reentry, eventless chains, guards combined with and/or/not, invoked promise and
 * callback actors, spawned children, delayed and cancelled events, a final state with output,
 * an unhandled child failure), driven by random event sequences; each step's emitted events,
 * state value, status and context must be the same. The agent chart itself is compared the
 * same way through the Agent in test/agent/pi-timing.property.test.ts and walked by the
 * model-based tests.
 */
import fc from "fast-check";
import { type AnyStateMachine, type EventObject, and, createActor, enqueueActions, fromCallback, fromPromise, not, or, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { thrownBy } from "../agent/helpers.js";
import { chartLogic } from "../../src/machines/chart-logic.js";
import { type HandOverTarget, LeanActor } from "../../src/machines/lean-actor.js";
import { agentMachine } from "../../src/machines/agent-machine.js";

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
	on: {
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

interface Trace {
	lines: string[];
}

/**
 * What runs the chart: XState's interpreter, agentchart's in an XState actor, agentchart's in a
 * lean actor, or a lean actor that hands the run over to an XState actor (see {@link play}).
 */
type Host = "xstate" | "chart" | "lean" | "hand-over";

type ChartActor = ReturnType<typeof createActor<ReturnType<typeof chartLogic<AnyStateMachine>>>>;

/**
 * Runs `events` (with a macrotask between them, so promises and delays land) and records each
 * step. At the `at`-th emitted event the listener sends `inc` (it waits in the mailbox: the
 * step is still being taken) and, on the "hand-over" host, hands the run over to an XState
 * actor right there, in the middle of the step, as `agent.actor` does.
 */
async function play(machine: AnyStateMachine, host: Host, events: readonly ToyEvent[], at = 0): Promise<Trace> {
	const lines: string[] = [];
	// Typed by what all offer: the chart's snapshot fields these tests read.
	const logic = chartLogic(machine);
	let actor = (host === "xstate" ? createActor(machine) : host === "chart" ? createActor(logic) : new LeanActor(logic)) as unknown as ChartActor;
	const record = (target: ChartActor) => {
		target.subscribe({
			next: (snapshot) => {
				const line = `snapshot ${snapshot.status} ${JSON.stringify(snapshot.value)} ${JSON.stringify(snapshot.context)} children ${Object.keys(snapshot.children).sort().join(",")}`;
				// A successor announces the snapshot it starts from: not a step.
				if (lines.at(-1) !== line) lines.push(line);
			},
			error: (error) => lines.push(`error ${String(error)}`),
		});
	};
	let emitted = 0;
	const onEmit = (event: EventObject) => {
		lines.push(`emit ${JSON.stringify(event)}`);
		if (++emitted !== at) return;
		actor.send({ type: "inc" });
		if (host === "hand-over" && actor instanceof LeanActor) {
			const lean = actor as LeanActor;
			const successor = createActor(logic, { snapshot: lean.getSnapshot() as never }) as unknown as ChartActor;
			successor.on("*", (next: EventObject) => lines.push(`emit ${JSON.stringify(next)}`));
			record(successor);
			lean.handOver(successor as unknown as HandOverTarget);
			actor = successor;
		}
	};
	actor.on("*", onEmit);
	record(actor);
	actor.start();
	for (const event of events) {
		if (actor.getSnapshot().status !== "active") break;
		lines.push(`send ${JSON.stringify(event)}`);
		actor.send(event);
		await new Promise((resolve) => setTimeout(resolve, 2));
		const snapshot = actor.getSnapshot();
		lines.push(`after ${snapshot.status} ${JSON.stringify(snapshot.value)} output ${JSON.stringify(snapshot.output)} error ${String(snapshot.error)}`);
	}
	actor.stop();
	return { lines };
}

describe("chartLogic: agentchart's interpreter of an XState chart", () => {
	it("runs a chart exactly as XState does, step by step, for random event sequences", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(eventArb, { maxLength: 14 }), fc.integer({ min: 1, max: 12 }), async (events, at) => {
				const theirs = (await play(toyMachine, "xstate", events, at)).lines;
				for (const host of ["chart", "lean", "hand-over"] as const) expect((await play(toyMachine, host, events, at)).lines).toEqual(theirs);
			}),
			{ numRuns: Number(process.env["PROPERTY_RUNS"] ?? 60) },
		);
	}, 120_000);

	it("takes the branches a random run may miss: reentry, a guarded deep entry, a failing call, a crash, the final state", async () => {
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
		for (const at of [0, 3, 9]) {
			const theirs = (await play(toyMachine, "xstate", script, at)).lines;
			for (const host of ["chart", "lean", "hand-over"] as const) expect((await play(toyMachine, host, script, at)).lines).toEqual(theirs);
			expect(theirs.at(-1)).toContain("after error");
		}
		const finished = await play(toyMachine, "lean", [{ type: "inc" }, { type: "finish" }]);
		expect(finished.lines.at(-1)).toBe('after done "done" output {"count":1} error undefined');
	});

	it("starts the agent chart idle, with XState's context", () => {
		const input = { systemPrompt: "be brief" };
		const ours = createActor(chartLogic(agentMachine), { input }).start();
		const theirs = createActor(agentMachine, { input }).start();
		expect(ours.getSnapshot().value).toBe("idle");
		expect(ours.getSnapshot().matches("idle")).toBe(true);
		expect(ours.getSnapshot().context).toEqual(theirs.getSnapshot().context);
		ours.send({ type: "dispose" });
		expect(ours.getSnapshot().status).toBe("done");
		expect(ours.getSnapshot().output).toEqual({ messages: [] });
		theirs.stop();
	});

	it("refuses a chart outside the subset it runs, naming the state", () => {
		const plain = setup({});
		expect(thrownBy(() => chartLogic(plain.createMachine({ id: "p", type: "parallel", states: { x: {}, y: {} } })))).toMatch(/a parallel state \(in 'p'\)/);
		expect(thrownBy(() => chartLogic(plain.createMachine({ id: "h", initial: "x", states: { x: {}, past: { type: "history" } } })))).toMatch(/a history state \(in 'h.past'\)/);
		expect(thrownBy(() => chartLogic(plain.createMachine({ id: "d", initial: "x", states: { x: { after: { 10: "y" } }, y: {} } })))).toMatch(/a delayed transition \(in 'd.x'\)/);
		expect(thrownBy(() => chartLogic(plain.createMachine({ id: "w", initial: "x", states: { x: { on: { "*": "y" } }, y: {} } })))).toMatch(/wildcard event descriptor '\*' \(in 'w.x'\)/);
		expect(thrownBy(() => chartLogic(plain.createMachine({ id: "f", initial: "x", states: { x: { initial: "y", states: { y: { type: "final" } } } } })))).toMatch(/a final state below the top level \(in 'f.x.y'\)/);
		const inline = setup({ actions: { custom: () => {} } }).createMachine({ id: "c", initial: "x", states: { x: { entry: "custom" } } });
		expect(thrownBy(() => chartLogic(inline))).toMatch(/action 'custom' \(only assign and enqueueActions are\) \(in 'c.x'\)/);
	});

	it("sends the inspector XState's microstep records, with the chart's own transitions", () => {
		const transitions: string[] = [];
		const actor = createActor(chartLogic(toyMachine), {
			inspect: (event) => {
				if (event.type !== "@xstate.microstep") return;
				const taken = (event as unknown as { _transitions: { source: { id: string }; target?: { id: string }[] }[] })._transitions;
				for (const transition of taken) transitions.push(`${transition.source.id} → ${transition.target?.map((target) => target.id).join(",") ?? "(none)"}`);
			},
		}).start();
		actor.send({ type: "go" });
		expect(transitions).toEqual(["toy.a → toy.b", "toy.b.shallow → toy.b.deep"]);
		actor.stop();
	});
});

