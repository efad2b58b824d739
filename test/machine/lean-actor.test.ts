/**
 * The lean actor (src/machines/lean-actor.ts) against XState's `Actor`: the same logic, the same
 * calls, the same observable behaviour. A random sequence of calls (subscribe in its three forms,
 * unsubscribe, `on` for a type or all, send, start, stop, reading the snapshot, waiting for a
 * tick or for a delayed event) runs on `createActor(logic)` and on `new LeanActor(logic)` for callback and promise logic
 * and for a chart run by `chartLogic`; what observers, emitted-event handlers and the process's
 * unhandled errors see must be the same. Then what only a lean root has: its system (inspection
 * only when asked for, delayed events, what it refuses) and the hand-over of its delayed events.
 */
import fc from "fast-check";
import { type AnyActorLogic, type AnyActorRef, type EventObject, createActor, enqueueActions, fromCallback, fromPromise, setup } from "xstate";
import { describe, expect, it, vi } from "vitest";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { chartLogic } from "../../src/machines/chart-logic.js";
import { type HandOverTarget, LeanActor, LeanSystem, spawnChild } from "../../src/machines/lean-actor.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
/** The chart's delayed ping: far from a 1 ms tick, so that only a stall of over 14 ms could make them tie (timers count whole ms). */
const LATER_MS = 15;
/** Long enough for the delayed ping to come due. */
const wait = () => new Promise((resolve) => setTimeout(resolve, 2 * LATER_MS));

/** What both kinds of actor offer, as these tests use it. */
interface ActorLike {
	readonly sessionId: string;
	start(): unknown;
	stop(): unknown;
	send(event: EventObject): void;
	getSnapshot(): { status: string; output?: unknown; error?: unknown };
	subscribe(next: unknown, error?: (error: unknown) => void, complete?: () => void): { unsubscribe(): void };
	on(type: string, handler: (event: EventObject) => void): { unsubscribe(): void };
	getPersistedSnapshot(): unknown;
	toJSON(): unknown;
	system: { inspect(observer: (event: { type: string }) => void): { unsubscribe(): void } };
}

const logics: Record<string, AnyActorLogic> = {
	/** Emits as it starts and on `ping`; `boom` makes it throw; stopping emits nothing more. */
	echo: fromCallback<EventObject, unknown, { type: string }>(({ receive, emit }) => {
		emit({ type: "hello" });
		receive((event) => {
			if (event.type === "ping") emit({ type: "pong" });
			if (event.type === "boom") throw new Error("echo failed");
		});
	}),
	answer: fromPromise(async () => {
		await Promise.resolve();
		return 42;
	}),
	refuse: fromPromise(async () => {
		await Promise.resolve();
		throw new Error("refused");
	}),
	/** A chart on agentchart's interpreter that emits, counts, finishes and fails on command. */
	chart: chartLogic(
		setup({
			types: { context: {} as { count: number }, events: {} as { type: "ping" } | { type: "finish" } | { type: "boom" } | { type: "later" } | { type: "never" } },
			actors: {
				crasher: fromCallback(({ receive }) => {
					receive(() => {
						throw new Error("child crashed");
					});
				}),
			},
			actions: {
				count: enqueueActions(({ context, enqueue }) => {
					enqueue.assign({ count: context.count + 1 });
					enqueue.emit({ type: "pong" });
				}),
				crash: enqueueActions(({ enqueue }) => enqueue.sendTo("crasher", { type: "go" })),
				later: enqueueActions(({ enqueue }) => enqueue.raise({ type: "ping" }, { delay: LATER_MS, id: "later" })),
				never: enqueueActions(({ enqueue }) => enqueue.cancel("later")),
			},
		}).createMachine({
			context: { count: 0 },
			initial: "on",
			invoke: { id: "crasher", src: "crasher" },
			states: {
				on: { on: { ping: { actions: "count" }, finish: "off", boom: { actions: "crash" }, later: { actions: "later" }, never: { actions: "never" } } },
				off: { type: "final" },
			},
			output: ({ context }) => context.count,
		}),
	),
};

type Command =
	| { kind: "subscribe"; form: "function" | "observer" | "observer without error" }
	| { kind: "unsubscribe"; index: number }
	| { kind: "on"; type: "*" | "pong" | "hello" }
	| { kind: "off"; index: number }
	| { kind: "send"; type: "ping" | "boom" | "finish" | "later" | "never" | "unknown" }
	| { kind: "start" }
	| { kind: "stop" }
	| { kind: "read" }
	| { kind: "tick" }
	| { kind: "wait" };

const commonCommands: fc.Arbitrary<Command>[] = [
	fc.constantFrom("function" as const, "observer" as const, "observer without error" as const).map((form): Command => ({ kind: "subscribe", form })),
	fc.nat(4).map((index): Command => ({ kind: "unsubscribe", index })),
	fc.constantFrom("*" as const, "pong" as const, "hello" as const).map((type): Command => ({ kind: "on", type })),
	fc.nat(4).map((index): Command => ({ kind: "off", index })),
	fc.constantFrom("ping" as const, "boom" as const, "finish" as const, "later" as const, "never" as const, "unknown" as const).map((type): Command => ({ kind: "send", type })),
	fc.constant<Command>({ kind: "start" }),
	fc.constant<Command>({ kind: "stop" }),
	fc.constant<Command>({ kind: "read" }),
	fc.constant<Command>({ kind: "tick" }),
];
/** Waiting for a delayed event only matters to the chart (the only logic that delays one), and costs time. */
const commandArb = (name: string): fc.Arbitrary<Command> => fc.oneof(...commonCommands, ...(name === "chart" ? [fc.constant<Command>({ kind: "wait" })] : []));

/** Errors reported as uncaught (XState's way with an error nobody handles), caught for the test. */
function catchUncaught(): { errors: string[]; restore(): void } {
	const errors: string[] = [];
	const runners = process.rawListeners("uncaughtException") as ((error: unknown) => void)[];
	process.removeAllListeners("uncaughtException");
	const onError = (error: unknown) => errors.push(String(error));
	process.on("uncaughtException", onError);
	return {
		errors,
		restore() {
			process.off("uncaughtException", onError);
			for (const runner of runners) process.on("uncaughtException", runner);
		},
	};
}

/**
 * Runs `script` on a lean actor and on XState's actor for the same logic, catching what either
 * reports as uncaught; returns, lean first, what the script noted followed by those errors.
 */
async function onBoth(logic: AnyActorLogic, script: (actor: ActorLike, seen: string[]) => Promise<void> | void): Promise<string[][]> {
	const outcomes: string[][] = [];
	for (const lean of [true, false]) {
		const actor = (lean ? new LeanActor(logic) : createActor(logic)) as unknown as ActorLike;
		const seen: string[] = [];
		const uncaught = catchUncaught();
		try {
			await script(actor, seen);
		} finally {
			uncaught.restore();
		}
		outcomes.push([...seen, ...uncaught.errors]);
	}
	return outcomes;
}

const describeSnapshot = (snapshot: { status: string; output?: unknown; error?: unknown }) => `${snapshot.status} ${JSON.stringify(snapshot.output)} ${String(snapshot.error)}`;

async function play(lean: boolean, name: string, commands: readonly Command[]): Promise<string[]> {
	const logic = logics[name] as AnyActorLogic;
	const actor = (lean ? new LeanActor(logic) : createActor(logic)) as unknown as ActorLike;
	const log: string[] = [];
	const subscriptions: { unsubscribe(): void }[] = [];
	const handlers: { unsubscribe(): void }[] = [];
	const uncaught = catchUncaught();
	try {
		for (const [index, command] of commands.entries()) {
			const at = `#${index}`;
			try {
				switch (command.kind) {
					case "subscribe": {
						const next = (snapshot: { status: string; output?: unknown; error?: unknown }) => log.push(`${at} next ${describeSnapshot(snapshot)}`);
						const error = (error: unknown) => log.push(`${at} error ${String(error)}`);
						const complete = () => log.push(`${at} complete`);
						if (command.form === "function") subscriptions.push(actor.subscribe(next, error, complete));
						else if (command.form === "observer") subscriptions.push(actor.subscribe({ next, error, complete }));
						else subscriptions.push(actor.subscribe({ next, complete }));
						break;
					}
					case "unsubscribe":
						subscriptions[command.index]?.unsubscribe();
						break;
					case "on":
						handlers.push(actor.on(command.type, (event) => log.push(`${at} emitted ${event.type}`)));
						break;
					case "off":
						handlers[command.index]?.unsubscribe();
						break;
					case "send":
						actor.send({ type: command.type });
						break;
					case "start":
						actor.start();
						break;
					case "stop":
						actor.stop();
						break;
					case "read":
						log.push(`${at} snapshot ${describeSnapshot(actor.getSnapshot())}`);
						break;
					case "tick":
						await tick();
						break;
					case "wait":
						await wait();
						break;
				}
			} catch (error) {
				log.push(`${at} threw ${String(error)}`);
			}
		}
		await tick();
		// Session ids differ by design (XState numbers its actors, a lean system its own).
		const json = actor.toJSON() as { xstate$$type: number; id: string };
		log.push(`end ${describeSnapshot(actor.getSnapshot())} ${json.xstate$$type} ${typeof json.id}`);
		// Nothing of this run may reach the next one's log.
		actor.stop();
		await tick();
		await tick();
	} finally {
		uncaught.restore();
	}
	for (const error of uncaught.errors) log.push(`uncaught ${error}`);
	return log;
}

describe("a lean actor behaves as XState's actor", () => {
	for (const name of Object.keys(logics)) {
		it(`for random calls on ${name} logic`, async () => {
			await fc.assert(
				fc.asyncProperty(fc.array(commandArb(name), { maxLength: 12 }), async (commands) => {
					expect(await play(true, name, commands)).toEqual(await play(false, name, commands));
				}),
				// Fast enough to keep many runs even where PROPERTY_RUNS is cut down (the mutation run).
				{ numRuns: Math.max(150, Number(process.env["PROPERTY_RUNS"] ?? 60)) },
			);
		}, 60_000);
	}

	it("calls every emitted-event handler of the moment, even one another removes, and reports one that throws", async () => {
		const outcomes = await onBoth(logics["echo"] as AnyActorLogic, async (actor, seen) => {
			const second = actor.on("pong", () => seen.push("second"));
			actor.on("pong", () => {
				seen.push("first");
				second.unsubscribe();
				throw new Error("handler failed");
			});
			actor.on("*", (event) => seen.push(`any ${event.type}`));
			actor.start();
			actor.send({ type: "ping" });
			actor.send({ type: "ping" });
			await tick();
		});
		expect(outcomes[0]).toEqual(outcomes[1]);
		expect(outcomes[0]).toContain("Error: handler failed");
	});

	it("keeps a lone '*' handler when more handlers come, and each unsubscribe removes its own, as XState does", async () => {
		// A lean actor keeps a lone "*" handler (an agent's machine has only its facade's) outside its table.
		const outcomes = await onBoth(logics["echo"] as AnyActorLogic, async (actor, seen) => {
			const lone = actor.on("*", (event) => seen.push(`lone ${event.type}`));
			actor.start();
			actor.send({ type: "ping" });
			const typed = actor.on("pong", () => seen.push("typed"));
			const another = actor.on("*", (event) => seen.push(`another ${event.type}`));
			actor.send({ type: "ping" });
			lone.unsubscribe();
			actor.send({ type: "ping" });
			another.unsubscribe();
			typed.unsubscribe();
			actor.send({ type: "ping" });
			// Alone again: a new "*" handler after all were removed, then removed while still alone.
			const again = actor.on("*", (event) => seen.push(`again ${event.type}`));
			actor.send({ type: "ping" });
			again.unsubscribe();
			actor.send({ type: "ping" });
			await tick();
		});
		expect(outcomes[0]).toEqual(outcomes[1]);
		expect(outcomes[0]).toEqual(["lone hello", "lone pong", "typed", "lone pong", "another pong", "typed", "another pong", "again pong"]);
		// A lone handler removed while still alone hears nothing more.
		const alone = await onBoth(logics["echo"] as AnyActorLogic, async (actor, seen) => {
			const only = actor.on("*", (event) => seen.push(`only ${event.type}`));
			actor.start();
			actor.send({ type: "ping" });
			only.unsubscribe();
			actor.send({ type: "ping" });
			await tick();
		});
		expect(alone[0]).toEqual(alone[1]);
		expect(alone[0]).toEqual(["only hello", "only pong"]);
	});

	it("reports an observer that throws, and still tells the others", async () => {
		const outcomes = await onBoth(logics["answer"] as AnyActorLogic, async (actor, seen) => {
			actor.subscribe({
				next: () => {
					throw new Error("next failed");
				},
				complete: () => {
					throw new Error("complete failed");
				},
			});
			actor.subscribe({ next: (snapshot: { status: string }) => seen.push(`next ${snapshot.status}`), complete: () => seen.push("complete") });
			actor.start();
			await tick();
			await tick();
		});
		expect(outcomes[0]).toEqual(outcomes[1]);
		expect(outcomes[0]).toEqual(expect.arrayContaining(["Error: next failed", "Error: complete failed", "complete"]));
	});

	it("reports a failure to an observer with an error handler, and as uncaught to one without", async () => {
		const outcomes = await onBoth(logics["refuse"] as AnyActorLogic, async (actor, seen) => {
			actor.subscribe({ error: (error: unknown) => seen.push(`told ${String(error)}`) });
			actor.subscribe({ next: () => seen.push("next") });
			actor.start();
			await tick();
			await tick();
			// After the end: a late observer without an error handler gets it as uncaught too.
			actor.subscribe({ next: () => seen.push("late next") });
			actor.subscribe({
				error: () => {
					throw new Error("error handler failed");
				},
			});
			await tick();
		});
		expect(outcomes[0]).toEqual(outcomes[1]);
		expect(outcomes[0]?.filter((line) => line === "Error: refused")).toHaveLength(2);
	});

	it("reports a logic that fails to build its first snapshot, or to start, as XState does", async () => {
		const failing = (where: "getInitialSnapshot" | "start"): AnyActorLogic => ({
			...(logics["echo"] as AnyActorLogic),
			[where]: () => {
				throw new Error(`${where} failed`);
			},
		});
		for (const where of ["getInitialSnapshot", "start"] as const) {
			const outcomes = await onBoth(failing(where), (actor, seen) => {
				actor.subscribe({ error: (error: unknown) => seen.push(String(error)) });
				actor.start();
				seen.push(describeSnapshot(actor.getSnapshot()));
				// A stopped actor tells a late observer how it ended.
				actor.subscribe({ error: (error: unknown) => seen.push(`late ${String(error)}`) });
			});
			expect(outcomes[0]).toEqual(outcomes[1]);
			expect(outcomes[0]?.join(" ")).toContain(`${where} failed`);
		}
	});

	it("tells an observer that subscribes after the end how it ended", async () => {
		const outcomes = await onBoth(logics["answer"] as AnyActorLogic, async (actor, seen) => {
			actor.start();
			await tick();
			actor.subscribe({ next: () => seen.push("next"), complete: () => seen.push("complete") });
		});
		expect(outcomes).toEqual([["complete"], ["complete"]]);
	});

	it("is an interop observable, as XState's actors are", () => {
		const actor = new LeanActor(logics["echo"] as AnyActorLogic);
		const key = (typeof Symbol === "function" && (Symbol as { observable?: symbol }).observable) || "@@observable";
		expect((actor as unknown as Record<string | symbol, () => unknown>)[key]?.()).toBe(actor);
		expect(actor.getPersistedSnapshot()).toEqual({ status: "active", output: undefined, error: undefined, input: undefined });
	});

	it("sends with `send` taken off the actor (a root's is bound)", () => {
		const actor = new LeanActor(logics["chart"] as AnyActorLogic).start();
		const { send } = actor;
		send({ type: "finish" });
		expect(actor.getSnapshot().status).toBe("done");
	});
});

describe("a lean root's system", () => {
	it("builds inspection records only while someone inspects, and sends them with the root's id", () => {
		const actor = new LeanActor(logics["chart"] as AnyActorLogic);
		const system = actor.system as unknown as LeanSystem;
		expect(system.inspecting).toBe(false);
		const seen: string[] = [];
		const subscription = actor.system.inspect((event: { type: string; rootId?: unknown }) => seen.push(`${event.type} ${event.rootId === actor.sessionId}`));
		expect(system.inspecting).toBe(true);
		actor.start();
		actor.send({ type: "ping" });
		expect(seen).toContain("@xstate.event true");
		expect(seen).toContain("@xstate.snapshot true");
		expect(seen).toContain("@xstate.microstep true");
		subscription.unsubscribe();
		expect(system.inspecting).toBe(false);
		const count = seen.length;
		actor.send({ type: "ping" });
		expect(seen).toHaveLength(count);
		actor.stop();
	});

	it("keeps sending records to the inspectors left when one of two unsubscribes", () => {
		const actor = new LeanActor(logics["chart"] as AnyActorLogic).start();
		const first: string[] = [];
		const second: string[] = [];
		const one = actor.system.inspect((event: { type: string }) => void first.push(event.type));
		actor.system.inspect((event: { type: string }) => void second.push(event.type));
		one.unsubscribe();
		actor.send({ type: "ping" });
		expect(first).toEqual([]);
		expect(second).toContain("@xstate.event");
		expect(second).toContain("@xstate.snapshot");
		actor.stop();
	});

	it("tells an inspector what XState's system tells it, record for record, with the same actors named", async () => {
		const outcomes = await onBoth(logics["chart"] as AnyActorLogic, async (actor, seen) => {
			const names = new Map<unknown, string>([[actor, "root"]]);
			const name = (ref: unknown) => (ref === undefined ? "-" : (names.get(ref) ?? `child:${String((ref as { id?: unknown }).id)}`));
			const subscription = actor.system.inspect((record: { type: string; actorRef?: unknown; sourceRef?: unknown; event?: { type: string }; snapshot?: { status: string }; rootId?: unknown }) => {
				const detail = record.type === "@xstate.snapshot" ? record.snapshot?.status : record.type === "@xstate.actor" ? "" : record.event?.type;
				seen.push(`${record.type} ${name(record.sourceRef)} → ${name(record.actorRef)} ${detail ?? ""} root:${record.rootId === actor.sessionId}`);
			});
			actor.start();
			actor.send({ type: "ping" });
			actor.send({ type: "later" });
			await wait();
			subscription.unsubscribe();
			actor.send({ type: "ping" });
			actor.send({ type: "finish" });
		});
		expect(outcomes[0]).toEqual(outcomes[1]);
		expect(outcomes[0]).toContain("@xstate.event - → root ping root:true");
		expect(outcomes[0]).toContain("@xstate.event root → root ping root:true");
		expect(outcomes[0]).toContain("@xstate.event root → child:crasher xstate.init root:true");
	});

	it("offers XState's clock and logger, and refuses what it does not keep (system ids)", () => {
		const system = new LeanActor(logics["echo"] as AnyActorLogic).system as unknown as LeanSystem;
		expect(typeof system._clock.setTimeout).toBe("function");
		expect(typeof system._logger).toBe("function");
		expect(system.get()).toBeUndefined();
		expect(system.getAll()).toEqual({});
		expect(() => system._set()).toThrow(/systemId need XState's createActor/);
		expect(system._register("x")).toBe("x");
	});

	it("delays an event, cancels it by id, replaces one scheduled again under its id, and lists what is pending", async () => {
		const received: string[] = [];
		const target = { sessionId: "t", _send: (event: EventObject) => received.push(event.type) } as unknown as AnyActorRef;
		const source = { sessionId: "s" } as unknown as AnyActorRef;
		const actor = new LeanActor(logics["echo"] as AnyActorLogic);
		const system = actor.system as unknown as LeanSystem;
		expect(system.hasScheduler).toBe(false);
		system.scheduler.schedule(source, target, { type: "first" }, 5, "a");
		system.scheduler.schedule(source, target, { type: "second" }, 5, "a"); // replaces the first
		system.scheduler.schedule(source, target, { type: "cancelled" }, 5, "b");
		system.scheduler.schedule(source, target, { type: "other source" }, 5, "c");
		system.scheduler.cancel(source, "b");
		expect(Object.keys(system.getSnapshot()._scheduledEvents).sort()).toEqual(["s.a", "s.c"]);
		system.scheduler.cancelAll({ sessionId: "nobody" } as unknown as AnyActorRef);
		await new Promise((resolve) => setTimeout(resolve, 15));
		expect(received.sort()).toEqual(["other source", "second"]);
		expect(system._snapshot._scheduledEvents).toEqual({});
		system.scheduler.schedule(source, target, { type: "all cancelled" }, 5, "d");
		system.scheduler.cancelAll(source);
		await new Promise((resolve) => setTimeout(resolve, 15));
		expect(received).not.toContain("all cancelled");
	});

	it("hands its delayed events over with the time they have left, under the successor's name", async () => {
		const count = (actor: { getSnapshot(): unknown }) => (actor.getSnapshot() as { context: { count: number } }).context.count;
		const handedOver = () => {
			const lean = new LeanActor(logics["chart"] as AnyActorLogic).start();
			lean.send({ type: "later" }); // a ping in LATER_MS
			const successor = createActor(logics["chart"] as AnyActorLogic, { snapshot: lean.getSnapshot() as never });
			lean.handOver(successor as unknown as HandOverTarget);
			return { lean, successor };
		};
		const moved = handedOver();
		await wait();
		expect(count(moved.successor)).toBe(1);
		// Events sent to the lean root after the hand-over reach the successor.
		moved.lean.send({ type: "ping" });
		expect(count(moved.successor)).toBe(2);
		moved.successor.stop();
		// Cancelled by the successor's chart: the moved event is its own now.
		const cancelled = handedOver();
		cancelled.successor.send({ type: "never" });
		await wait();
		expect(count(cancelled.successor)).toBe(0);
		cancelled.successor.stop();
	});
});

describe("a delayed event handed over part way", () => {
	// The successor gets what is left of the delay, not all of it again, and not none of it.
	it("fires at its first deadline, not earlier and not a whole delay later", () => {
		vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
		try {
			const count = (actor: { getSnapshot(): unknown }) => (actor.getSnapshot() as { context: { count: number } }).context.count;
			const lean = new LeanActor(logics["chart"] as AnyActorLogic).start();
			lean.send({ type: "later" }); // a ping in LATER_MS (15 ms)
			vi.advanceTimersByTime(10);
			const successor = createActor(logics["chart"] as AnyActorLogic, { snapshot: lean.getSnapshot() as never });
			lean.handOver(successor as unknown as HandOverTarget);
			vi.advanceTimersByTime(4);
			expect(count(successor)).toBe(0);
			vi.advanceTimersByTime(2);
			expect(count(successor)).toBe(1);
			successor.stop();
		} finally {
			vi.useRealTimers();
		}
	});
});

describe("a lean actor's limits and children", () => {
	it("refuses to stop a child directly, and a child that is not its own", () => {
		const root = new LeanActor(logics["chart"] as AnyActorLogic).start();
		const child = spawnChild(logics["echo"] as AnyActorLogic, { id: "echo", src: "echo", parent: root as unknown as AnyActorRef, input: undefined });
		expect(child).toBeInstanceOf(LeanActor);
		expect(() => (child as unknown as LeanActor).stop()).toThrow(/non-root actor cannot be stopped directly/);
		const stranger = new LeanActor(logics["echo"] as AnyActorLogic);
		expect(() => root._actorScope.stopChild(stranger as unknown as AnyActorRef)).toThrow(/is not a child/);
		root.stop();
	});

	it("gives a state machine child XState's actor, and refuses to run a state machine itself", async () => {
		const root = new LeanActor(logics["chart"] as AnyActorLogic).start();
		const child = spawnChild(agentMachine, { id: "agent", src: "agent", parent: root as unknown as AnyActorRef, input: {} });
		expect(child).not.toBeInstanceOf(LeanActor);
		root.stop();
		// XState's machine interpreter executes its actions through the scope, which a lean actor leaves to XState.
		const uncaught = catchUncaught();
		const machine = new LeanActor(setup({ actions: { greet: () => {} } }).createMachine({ entry: "greet" }));
		machine.start();
		await tick();
		uncaught.restore();
		expect(uncaught.errors.join(" ")).toContain("XState's built-in actions need XState's createActor");
		expect(machine.getSnapshot().status).toBe("error");
		expect(String(machine.getSnapshot().error)).toContain("XState's built-in actions need XState's createActor");
	});
});
