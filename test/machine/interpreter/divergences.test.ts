/**
 * The interpreter against XState's on small machines, one per behaviour an earlier version of
 * the interpreter got wrong (issue 33's list) and per feature of the subset it runs: for each,
 * both interpreters run the same machine and what an observer sees (emitted events, snapshots,
 * errors, inspection records) must be the same, line for line.
 */
import { type AnyActorLogic, type AnyActorRef, type EventObject, type SnapshotFrom, assign, createActor, enqueueActions, fromCallback, fromObservable, fromPromise, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { chartLogic } from "../../../src/machines/interpreter/chart-logic.js";
import { type Step, lastState, playBoth } from "./harness.js";

type Emitted = { type: string; [key: string]: unknown };

/** A callback child that answers `ping` with `pong` and reports what it received. */
const echo = fromCallback<EventObject, { tag: string }>(({ input, sendBack, receive }) => {
	receive((event) => sendBack({ type: "pong", from: input.tag, got: event.type }));
	return () => {};
});

async function expectSame(machine: Parameters<typeof playBoth>[0], steps: readonly Step[], input?: unknown): Promise<string[]> {
	const { ours, theirs } = await playBoth(machine, steps, { input });
	expect(ours).toEqual(theirs);
	return theirs;
}

describe("the interpreter and XState's, on the behaviours that once differed", () => {
	it("rests after an eventless transition to its own state (it is not taken again and again)", async () => {
		const machine = setup({ types: { context: {} as { n: number } } }).createMachine({
			id: "self",
			context: { n: 0 },
			initial: "a",
			states: { a: { always: { target: "a" }, on: { bump: { actions: assign({ n: ({ context }) => context.n + 1 }) } } } },
		});
		const lines = await expectSame(machine, [{ type: "bump" }, { type: "bump" }]);
		expect(lastState(lines)).toContain('active "a"');
	});

	it("gives the machine its output from a final state's own output, and a nested final state's output to its parent's onDone", async () => {
		const machine = setup({ types: { context: {} as { got: unknown }, output: {} as { final: unknown; got: unknown } } }).createMachine({
			id: "out",
			context: { got: undefined },
			initial: "work",
			output: ({ context, event }) => ({ final: (event as { output?: unknown }).output, got: context.got }),
			states: {
				work: {
					initial: "step",
					states: { step: { on: { next: "finished" } }, finished: { type: "final", output: () => ({ inner: 1 }) } },
					onDone: { target: "end", actions: assign({ got: ({ event }) => (event as { output?: unknown }).output }) },
				},
				end: { type: "final", output: ({ context }) => ({ outer: context.got }) },
			},
		});
		const lines = await expectSame(machine, [{ type: "next" }]);
		expect(lines.join("\n")).toContain('output={"final":{"outer":{"inner":1}},"got":{"inner":1}}');
	});

	it("delivers an entry action's send to the state's own invoked child", async () => {
		const machine = setup({ actors: { echo }, types: { emitted: {} as Emitted } }).createMachine({
			id: "entrysend",
			initial: "idle",
			states: {
				idle: { on: { go: "busy" } },
				busy: {
					invoke: { id: "child", src: "echo", input: { tag: "child" } },
					entry: enqueueActions(({ enqueue }) => enqueue.sendTo("child", { type: "hello" })),
					on: { pong: { actions: enqueueActions(({ event, enqueue }) => enqueue.emit({ type: "heard", got: (event as { got?: string }).got })) } },
				},
			},
		});
		const lines = await expectSame(machine, [{ type: "go" }]);
		expect(lines).toContain('emit {"type":"heard","got":"hello"}');
	});

	it("delays a raise by a named delay and a send by a number or a named delay, and cancels one", async () => {
		const machine = setup({ actors: { echo }, delays: { short: 100, computed: ({ context }: { context: { ms: number } }) => context.ms }, types: { context: {} as { ms: number }, emitted: {} as Emitted } }).createMachine({
			id: "delays",
			context: { ms: 250 },
			invoke: { id: "child", src: "echo", input: { tag: "child" } },
			on: {
				start: {
					actions: enqueueActions(({ enqueue }) => {
						enqueue.raise({ type: "tick" }, { delay: "short", id: "t1" });
						enqueue.raise({ type: "tock" }, { delay: "computed", id: "t2" });
						enqueue.sendTo("child", { type: "later" }, { delay: 50, id: "s1" });
						enqueue.sendTo("child", { type: "muchLater" }, { delay: "computed", id: "s2" });
					}),
				},
				stopTock: { actions: enqueueActions(({ enqueue }) => enqueue.cancel("t2")) },
				tick: { actions: enqueueActions(({ enqueue }) => enqueue.emit({ type: "ticked" })) },
				tock: { actions: enqueueActions(({ enqueue }) => enqueue.emit({ type: "tocked" })) },
				pong: { actions: enqueueActions(({ event, enqueue }) => enqueue.emit({ type: "heard", got: (event as { got?: string }).got })) },
			},
		});
		const lines = await expectSame(machine, [{ type: "start" }, { wait: 60 }, { wait: 60 }, { type: "stopTock" }, { wait: 200 }]);
		expect(lines).toContain('emit {"type":"ticked"}');
		expect(lines).not.toContain('emit {"type":"tocked"}');
		expect(lines).toContain('emit {"type":"heard","got":"muchLater"}');
	});

	it("stops a child given by its ref, and by its id", async () => {
		const machine = setup({ actors: { echo }, types: { context: {} as { ref: AnyActorRef | undefined } } }).createMachine({
			id: "stopref",
			context: { ref: undefined },
			on: {
				spawn: { actions: enqueueActions(({ enqueue }) => enqueue.spawnChild("echo", { id: "kid", input: { tag: "kid" } })) },
				keep: { actions: assign({ ref: ({ self }) => self.getSnapshot().children["kid"] }) },
				stopRef: { actions: enqueueActions(({ context, enqueue }) => enqueue.stopChild(context.ref as AnyActorRef)) },
				spawn2: { actions: enqueueActions(({ enqueue }) => enqueue.spawnChild("echo", { id: "other", input: { tag: "other" } })) },
				stopId: { actions: enqueueActions(({ enqueue }) => enqueue.stopChild("other")) },
			},
		});
		const lines = await expectSame(machine, [{ type: "spawn" }, { type: "keep" }, { type: "stopRef" }, { type: "spawn2" }, { type: "stopId" }]);
		expect(lastState(lines)).toContain("children=[]");
	});

	it("gives an assigner `self` (and `system`)", async () => {
		const machine = setup({ types: { context: {} as { me: string; system: boolean } } }).createMachine({
			id: "selfy",
			context: { me: "", system: false },
			on: { who: { actions: assign(({ self, system }) => ({ me: typeof self.send, system: typeof system.get === "function" })) } },
		});
		const lines = await expectSame(machine, [{ type: "who" }]);
		expect(lastState(lines)).toContain('{"me":"function","system":true}');
	});

	it("offers `check` in enqueueActions, against the context the body started with", async () => {
		const machine = setup({
			types: { context: {} as { n: number }, emitted: {} as Emitted },
			guards: { positive: ({ context }) => context.n > 0 },
		}).createMachine({
			id: "check",
			context: { n: 0 },
			on: {
				go: {
					actions: enqueueActions(({ check, enqueue }) => {
						enqueue.assign({ n: 5 });
						enqueue.emit({ type: "positive", now: check("positive") });
					}),
				},
			},
		});
		const lines = await expectSame(machine, [{ type: "go" }, { type: "go" }]);
		expect(lines).toContain('emit {"type":"positive","now":false}');
		expect(lines).toContain('emit {"type":"positive","now":true}');
	});

	it("wraps a failing guard's error as XState does, naming the guard, the event and the state", async () => {
		const machine = setup({
			guards: {
				broken: () => {
					throw new Error("guard blew up");
				},
			},
		}).createMachine({ id: "guards", initial: "a", states: { a: { on: { go: { guard: "broken", target: "b" } } }, b: {} } });
		const lines = await expectSame(machine, [{ type: "go" }]);
		expect(lines.join("\n")).toContain("Unable to evaluate guard 'broken' in transition for event 'go' in state node 'guards.a'");
	});

	it("keeps value and matches() in the snapshot of a machine that failed", async () => {
		const machine = setup({
			actions: {
				explode: () => {
					throw new Error("action blew up");
				},
			},
		}).createMachine({ id: "fails", initial: "a", states: { a: { on: { go: "b" } }, b: { on: { boom: { actions: "explode" } } } } });
		const lines = await expectSame(machine, [{ type: "go" }, { type: "boom" }, { check: (snapshot) => `${JSON.stringify(snapshot.value)} ${snapshot.matches("b")}` }]);
		expect(lines).toContain('check "b" true');
	});

	it("takes every later event after a restore from a persisted snapshot, across interpreters", async () => {
		const machine = setup({ actors: { echo }, types: { context: {} as { n: number }, emitted: {} as Emitted } }).createMachine({
			id: "restore",
			context: { n: 0 },
			initial: "a",
			states: {
				a: { on: { go: "b", inc: { actions: assign({ n: ({ context }) => context.n + 1 }) } } },
				b: {
					invoke: { id: "child", src: "echo", input: { tag: "child" } },
					on: {
						ping: { actions: enqueueActions(({ enqueue }) => enqueue.sendTo("child", { type: "ping" })) },
						pong: { actions: enqueueActions(({ event, enqueue }) => enqueue.emit({ type: "heard", got: (event as { got?: string }).got })) },
						back: "a",
					},
				},
			},
		});
		for (const target of ["xstate", "agentchart"] as const) {
			const lines = await expectSame(machine, [{ type: "inc" }, { type: "go" }, { persistAndRestore: target }, { type: "ping" }, { type: "back" }, { type: "inc" }]);
			expect(lines).toContain('emit {"type":"heard","got":"ping"}');
			expect(lastState(lines)).toContain('ctx={"n":2}');
		}
	});

	it("skips a persisted child without a logic's name as XState does, and persists the rest the same", () => {
		const machine = setup({ actors: { echo } }).createMachine({ id: "skip", initial: "a", states: { a: { invoke: { id: "child", src: "echo", input: { tag: "c" } } } } });
		const persisted = JSON.parse(JSON.stringify(createActor(machine).start().getPersistedSnapshot())) as { children: Record<string, unknown> };
		// A damaged entry beside the real child: no src (XState resolves nothing, and skips it).
		persisted.children["stray"] = { snapshot: {} };
		const after = (logic: AnyActorLogic) => {
			const actor = createActor(logic, { snapshot: persisted as never }).start();
			const json = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as unknown;
			actor.stop();
			return json;
		};
		const theirs = after(machine);
		expect(Object.keys((theirs as { children: object }).children)).toEqual(["child"]);
		expect(after(chartLogic(machine))).toEqual(theirs);
	});

	it("restores a persisted child named \"__proto__\" as XState does: made, in no list of children", () => {
		const machine = setup({ actors: { echo } }).createMachine({ id: "proto", initial: "a", states: { a: { invoke: { id: "child", src: "echo", input: { tag: "c" } } } } });
		const text = JSON.stringify(createActor(machine).start().getPersistedSnapshot());
		// Parsed JSON holds "__proto__" as an own key (a damaged or edited snapshot).
		const persisted = JSON.parse(text.replace('"children":{', '"children":{"__proto__":{"src":"echo","snapshot":{"status":"active","input":{"tag":"p"}}},')) as { children: Record<string, unknown> };
		expect(Object.keys(persisted.children)).toEqual(["__proto__", "child"]);
		// The actors each made, by id (the root's id is the system's count, which differs).
		const made: string[] = [];
		const after = (logic: AnyActorLogic) => {
			const actor = createActor(logic, { snapshot: persisted as never, inspect: (event) => void (event.type === "@xstate.actor" && made.push((event.actorRef as AnyActorRef).id)) }).start();
			const children = Object.keys(actor.getSnapshot().children);
			let json: unknown;
			try {
				json = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
			} catch (error) {
				json = String(error);
			}
			actor.stop();
			return { children, json, made: made.splice(0).filter((id) => !id.startsWith("x:")) };
		};
		const theirs = after(machine);
		expect(theirs.children).toEqual(["child"]);
		const ours = after(chartLogic(machine));
		expect(theirs.made).toEqual(["__proto__", "child"]);
		expect({ children: ours.children, made: ours.made }).toEqual({ children: theirs.children, made: theirs.made });
		// XState's persist then walks the children with for-in, which reaches the actor set as their
		// prototype, and throws; ours persists the children it has (it never set the prototype).
		expect(theirs.json).toBe("Error: An inline child actor cannot be persisted.");
		expect(ours.json).toEqual(JSON.parse(text));
	});

	it("persists in XState's format: the same JSON from both", () => {
		const machine = setup({ actors: { echo } }).createMachine({ id: "fmt", initial: "a", context: { list: [1] }, states: { a: { invoke: { id: "child", src: "echo", input: { tag: "c" } } } } });
		const theirs = createActor(machine).start();
		const ours = createActor(chartLogic(machine)).start();
		expect(JSON.parse(JSON.stringify(ours.getPersistedSnapshot()))).toEqual(JSON.parse(JSON.stringify(theirs.getPersistedSnapshot())));
		theirs.stop();
		ours.stop();
	});
});

describe("the interpreter and XState's, on what a review of the interpreter found (second round)", () => {
	const said = (what: string): never => enqueueActions(({ enqueue }) => enqueue.emit({ type: "said", what } as never)) as never;

	it("ends a machine whose initial state is a top-level final state with every exit action run, as it starts", async () => {
		const machine = setup({ types: { emitted: {} as Emitted } }).createMachine({
			id: "ends",
			entry: said("enter root"),
			exit: said("exit root"),
			initial: "f",
			output: { ok: 1 },
			states: { f: { type: "final", entry: said("enter f"), exit: said("exit f") } },
		});
		const lines = await expectSame(machine, []);
		expect(lines.join("\n")).toContain('"exit root"');
	});

	it("gives a machine that failed as it started its initial states (value, matches, can, the persisted value), wherever it failed", async () => {
		const check: Step = { check: (snapshot) => `${snapshot.status} ${JSON.stringify(snapshot.value)} ${snapshot.matches("p")} ${snapshot.can({ type: "go" })}` };
		const inContext = setup({}).createMachine({ id: "ctx", context: () => { throw new Error("context blew up"); }, initial: "p", states: { p: { initial: "a", states: { a: { on: { go: "b" } }, b: {} } } } });
		const inEntry = setup({}).createMachine({ id: "entry", context: {}, initial: "p", states: { p: { initial: "a", states: { a: { entry: assign(() => { throw new Error("entry blew up"); }), on: { go: "b" } }, b: {} } } } });
		const afterMove = setup({ guards: { broken: () => { throw new Error("guard blew up"); } } }).createMachine({ id: "moved", context: {}, initial: "p", states: { p: { initial: "a", states: { a: { always: "b", on: { go: "b" } }, b: { always: { guard: "broken", target: "a" } } } } } });
		for (const machine of [inContext, inEntry, afterMove]) {
			const lines = await expectSame(machine, [check, { persistAndRestore: "xstate" }, check]);
			expect(lines).toContain('check error {"p":"a"} true true');
		}
	});

	it("starts a child that ends or fails as it starts once, when the state the parent starts in invokes it", async () => {
		const quick = setup({}).createMachine({ id: "quick", initial: "done", output: { ok: true }, states: { done: { type: "final" } } });
		const failsAtOnce = fromCallback(() => {
			throw new Error("fails at once");
		});
		const completesAtOnce = fromObservable(() => ({ subscribe: (observer: { next: (value: number) => void; complete: () => void }) => (observer.next(1), observer.complete(), { unsubscribe: () => {} }) }) as never);
		const machine = setup({ actors: { quick, failsAtOnce, completesAtOnce }, types: { context: {} as { done: number; errors: number; completed: number } } }).createMachine({
			id: "parent",
			context: { done: 0, errors: 0, completed: 0 },
			invoke: [{ id: "q", src: "quick" }, { id: "f", src: "failsAtOnce" }, { id: "o", src: "completesAtOnce" }],
			on: {
				"xstate.done.actor.q": { actions: assign({ done: ({ context }) => context.done + 1 }) },
				"xstate.done.actor.o": { actions: assign({ completed: ({ context }) => context.completed + 1 }) },
				"xstate.error.actor.f": { actions: assign({ errors: ({ context }) => context.errors + 1 }) },
			},
		});
		const lines = await expectSame(machine, [{ wait: 10 }, { check: (snapshot) => JSON.stringify(snapshot.context) }]);
		expect(lines).toContain('check {"done":1,"errors":1,"completed":1}');
	});

	it("runs the custom actions an enqueueActions body enqueued after the body returns, in order with what it enqueued after them", async () => {
		const order: string[] = [];
		const machine = setup({
			types: { emitted: {} as Emitted, context: {} as { n: number } },
			actions: {
				track: ({ context }) => void order.push(`track sees n=${context.n}`),
				boom: () => {
					throw new Error("enqueued action blew up");
				},
			},
		}).createMachine({
			id: "body",
			context: { n: 0 },
			initial: "a",
			states: {
				a: {
					on: {
						go: {
							actions: enqueueActions(({ enqueue }) => {
								enqueue.assign({ n: 1 });
								enqueue("track");
								enqueue.assign({ n: 2 });
								enqueue({ type: "track" });
								order.push("body goes on");
							}),
						},
						fail: {
							actions: enqueueActions(({ enqueue }) => {
								try {
									enqueue("boom");
								} catch {
									order.push("the body caught it");
								}
							}),
						},
					},
				},
			},
		});
		await expectSame(machine, [{ type: "go" }, { type: "fail" }]);
		// Both runs logged the same, in XState's order: the body first, the enqueued actions after it.
		expect(order).toEqual(["body goes on", "track sees n=1", "track sees n=2", "body goes on", "track sees n=1", "track sees n=2"]);
	});
});

describe("the interpreter and XState's, on what an enqueueActions body enqueues (acted on once it returns)", () => {
	it("a built-in action's failure is not the body's to catch, its functions run after the body, and a body that throws enqueues nothing", async () => {
		const order: string[] = [];
		const machine = setup({ types: { emitted: {} as Emitted, context: {} as { n: number } } }).createMachine({
			id: "body",
			context: { n: 0 },
			initial: "a",
			states: {
				a: {
					on: {
						order: {
							actions: enqueueActions(({ enqueue }) => {
								enqueue.assign(({ context }) => (order.push("assigner runs"), { n: context.n + 1 }));
								order.push("body goes on");
							}),
						},
						halfway: {
							actions: enqueueActions(({ enqueue }) => {
								enqueue.emit({ type: "never seen" });
								throw new Error("body blew up");
							}),
						},
					},
				},
				b: {
					on: {
						caught: {
							actions: enqueueActions(({ enqueue }) => {
								try {
									enqueue.assign(() => {
										throw new Error("assigner blew up");
									});
								} catch {
									order.push("the body caught it");
								}
							}),
						},
					},
				},
			},
			on: { next: ".b" },
		});
		await expectSame(machine, [{ type: "order" }, { type: "halfway" }]);
		const lines = await expectSame(machine, [{ type: "next" }, { type: "caught" }]);
		expect(lastState(lines)).toMatch(/error/);
		expect(order).toEqual(["body goes on", "assigner runs", "body goes on", "assigner runs"]);
	});
});

describe("the interpreter and XState's, restoring a snapshot of a state the chart does not have", () => {
	it("fail the same, with XState's words", () => {
		const machine = setup({}).createMachine({ id: "m", initial: "p", states: { p: { initial: "a", states: { a: {}, b: {} } } } });
		const persisted = createActor(machine).start().getPersistedSnapshot() as unknown as { value: unknown };
		const errorOf = (logic: Parameters<typeof createActor>[0], value: unknown) => {
			const actor = createActor(logic, { snapshot: { ...persisted, value } as never });
			return String((actor.getSnapshot() as { error?: unknown }).error);
		};
		for (const value of [{ p: "nowhere" }, "nowhere", { q: "a" }, { p: { x: "z" } }]) expect(errorOf(chartLogic(machine), value)).toBe(errorOf(machine, value));
		expect(errorOf(machine, { p: "nowhere" })).toContain("State 'nowhere' does not exist on 'm.p'");
		expect(errorOf(machine, { q: "a" })).toContain("Child state 'q' does not exist on 'm'");
	});
});

describe("the interpreter and XState's, on the rest of the subset", () => {
	it("runs custom actions (deferred while the actor starts) and sendParent from a child chart", async () => {
		const log: string[] = [];
		const child = setup({ actions: { hi: () => log.push("child hi") } }).createMachine({
			id: "kid",
			entry: ["hi", enqueueActions(({ enqueue }) => enqueue.sendParent({ type: "fromKid" }))],
		});
		const machine = setup({ actors: { child }, actions: { note: ({ event }) => log.push(`parent ${event.type}`) }, types: { emitted: {} as Emitted } }).createMachine({
			id: "parent",
			entry: "note",
			invoke: { id: "kid", src: "child" },
			on: { fromKid: { actions: ["note", enqueueActions(({ enqueue }) => enqueue.emit({ type: "kidSaidHi" }))] } },
		});
		await expectSame(machine, [{ type: "anything" }]);
		// Both runs logged the same, in the same order.
		expect(log.slice(0, log.length / 2)).toEqual(log.slice(log.length / 2));
	});

	it("handles a promise child's done and error, and fails on an unhandled child error", async () => {
		const machine = setup({
			actors: { answer: fromPromise<number, { fail: boolean }>(async ({ input }) => (input.fail ? Promise.reject(new Error("nope")) : 42)) },
			types: { context: {} as { got: unknown } },
		}).createMachine({
			id: "promises",
			context: { got: undefined },
			initial: "idle",
			states: {
				idle: { on: { ok: "ok", bad: "bad", unhandled: "unhandled" } },
				ok: { invoke: { id: "p", src: "answer", input: { fail: false }, onDone: { target: "idle", actions: assign({ got: ({ event }) => event.output }) } } },
				bad: { invoke: { id: "p", src: "answer", input: { fail: true }, onError: { target: "idle", actions: assign({ got: ({ event }) => String(event.error) }) } } },
				unhandled: { invoke: { id: "p", src: "answer", input: { fail: true } } },
			},
		});
		const lines = await expectSame(machine, [{ type: "ok" }, { type: "bad" }, { type: "unhandled" }]);
		expect(lines.join("\n")).toContain("error");
	});

	it("exits and enters as XState does: reentry, a target inside the source, a target that is the source's parent", async () => {
		const said = (what: string): never => enqueueActions(({ enqueue }) => enqueue.emit({ type: "said", what } as never)) as never;
		const machine = setup({ types: { emitted: {} as Emitted } }).createMachine({
			id: "moves",
			initial: "p",
			states: {
				p: {
					entry: said("enter p"),
					exit: said("exit p"),
					initial: "a",
					on: { toParent: ".a", reenterP: { target: "p", reenter: true } },
					states: {
						a: { entry: said("enter a"), exit: said("exit a"), on: { inner: "b", same: { target: "a" }, again: { target: "a", reenter: true }, up: "#moves.p" } },
						b: { entry: said("enter b"), exit: said("exit b"), on: { back: "a" } },
					},
				},
			},
		});
		await expectSame(machine, [{ type: "inner" }, { type: "back" }, { type: "same" }, { type: "again" }, { type: "up" }, { type: "toParent" }, { type: "reenterP" }]);
	});

	it("follows a chain of eventless transitions, and takes raised events in the order they were raised", async () => {
		const said = (what: string): never => enqueueActions(({ enqueue }) => enqueue.emit({ type: "said", what } as never)) as never;
		const machine = setup({ types: { context: {} as { n: number }, emitted: {} as Emitted }, guards: { counted: ({ context }) => context.n > 0 } }).createMachine({
			id: "chain",
			context: { n: 0 },
			initial: "a",
			states: {
				a: { on: { go: "b" } },
				b: { always: { target: "c", actions: assign({ n: 1 }) } },
				c: { always: { guard: "counted", target: "d" } },
				d: {
					entry: enqueueActions(({ enqueue }) => {
						enqueue.raise({ type: "first" });
						enqueue.raise({ type: "second" });
					}),
					on: { first: { actions: said("first") }, second: { target: "e", actions: said("second") } },
				},
				e: {},
			},
		});
		const lines = await expectSame(machine, [{ type: "go" }]);
		expect(lastState(lines)).toContain('"e"');
	});

	it("compares the snapshot's can() with XState's", async () => {
		const machine = setup({ guards: { no: () => false } }).createMachine({ id: "can", initial: "a", states: { a: { on: { go: "b", blocked: { guard: "no", target: "b" } } }, b: {} } });
		const canAll = (snapshot: { can(event: EventObject): boolean }) => ["go", "blocked", "other"].map((type) => `${type}:${snapshot.can({ type })}`).join(" ");
		const lines = await expectSame(machine, [{ check: canAll }, { type: "go" }, { check: canAll }]);
		expect(lines).toContain("check go:true blocked:false other:false");
	});

	it("types its snapshots as XState's machine snapshots for what agentchart reads", () => {
		const machine = setup({}).createMachine({ id: "t", initial: "a", states: { a: {} } });
		const snapshot = createActor(chartLogic(machine)).getSnapshot() as unknown as SnapshotFrom<typeof machine>;
		expect(snapshot.matches("a")).toBe(true);
	});
});
