/**
 * agentchart's callback actor logic (src/actors/callback-logic.ts) against XState's
 * `fromCallback`: the same callback, invoked by the same machine, on XState's interpreter and on
 * agentchart's (a lean actor with `chartLogic`), must receive, send back, emit, stop and persist
 * alike.
 */
import { type AnyActorLogic, type AnyEventObject, assign, createActor, enqueueActions, fromCallback, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { callbackLogic } from "../../src/actors/callback-logic.js";
import { chartLogic } from "../../src/machines/chart-logic.js";
import { LeanActor } from "../../src/machines/lean-actor.js";

type Received = { type: "ping"; n: number } | { type: "quiet" };

/** A callback that answers each ping, emits once, and records its life in `log`; `late` gets its `sendBack`. */
function echoCallback(log: string[], late: { sendBack?: (event: AnyEventObject) => void } = {}) {
	return ({ input, sendBack, receive, emit }: { input: { name: string }; sendBack: (event: AnyEventObject) => void; receive: (listener: (event: Received) => void) => void; emit: (event: AnyEventObject) => void }) => {
		log.push(`start ${input.name}`);
		late.sendBack = sendBack;
		receive((event) => {
			log.push(`got ${event.type}`);
			if (event.type === "ping") sendBack({ type: "pong", n: event.n });
		});
		receive((event) => log.push(`second receiver ${event.type}`));
		emit({ type: "child.emitted" });
		// Sent after the stop: must be dropped.
		return () => {
			log.push("disposed");
			sendBack({ type: "pong", n: -1 });
		};
	};
}

function parentOf(child: AnyActorLogic) {
	return setup({
		types: { context: {} as { pongs: number[] }, events: {} as Received | { type: "pong"; n: number } | { type: "off" } },
		actors: { child },
	}).createMachine({
		context: { pongs: [] },
		// Heard in every state: a pong from the child after it stopped would be counted.
		on: { pong: { actions: assign({ pongs: ({ context, event }) => [...context.pongs, event.n] }) } },
		initial: "on",
		states: {
			on: {
				invoke: { id: "child", src: "child", input: { name: "echo" } },
				on: {
					ping: { actions: enqueueActions(({ enqueue, event }) => enqueue.sendTo("child", event)) },
					quiet: { actions: enqueueActions(({ enqueue, event }) => enqueue.sendTo("child", event)) },
					off: { target: "off" },
				},
			},
			off: {},
		},
	});
}

function drive(kind: "xstate" | "agentchart", logic: AnyActorLogic, late: { sendBack?: (event: AnyEventObject) => void }) {
	const machine = parentOf(logic);
	const actor = kind === "xstate" ? createActor(machine) : (new LeanActor(chartLogic(machine), {}) as unknown as ReturnType<typeof createActor<typeof machine>>);
	actor.start();
	const child = actor.getSnapshot().children["child"];
	const childEmitted: string[] = [];
	child?.on("*", (event: AnyEventObject) => childEmitted.push(event.type));
	const persisted = child?.getPersistedSnapshot();
	actor.send({ type: "ping", n: 1 });
	actor.send({ type: "quiet" });
	actor.send({ type: "ping", n: 2 });
	actor.send({ type: "off" });
	late.sendBack?.({ type: "pong", n: -2 });
	return { pongs: actor.getSnapshot().context.pongs, childStatus: child?.getSnapshot().status, persisted };
}

describe("callbackLogic", () => {
	for (const kind of ["xstate", "agentchart"] as const) {
		it(`behaves as XState's fromCallback in a machine on ${kind === "xstate" ? "XState's" : "agentchart's"} interpreter`, () => {
			const ours: string[] = [];
			const theirs: string[] = [];
			const lateOurs = {};
			const lateTheirs = {};
			const a = drive(kind, callbackLogic(echoCallback(ours, lateOurs)), lateOurs);
			const b = drive(kind, fromCallback(echoCallback(theirs, lateTheirs)), lateTheirs);
			expect(ours).toEqual(theirs);
			expect(ours).toEqual(["start echo", "got ping", "second receiver ping", "got quiet", "second receiver quiet", "got ping", "second receiver ping", "disposed"]);
			expect(a.pongs).toEqual(b.pongs);
			// The teardown's own sendBack still reaches the parent (the actor is stopping, as in XState);
			// one after the stop does not.
			expect(a.pongs).toEqual([1, 2, -1]);
			expect(a.childStatus).toBe("stopped");
			expect(a.childStatus).toBe(b.childStatus);
			expect(a.persisted).toEqual(b.persisted);
			// Plain data: the running instance (receivers, teardown) stays out of a persisted snapshot.
			expect(Object.getOwnPropertySymbols(a.persisted ?? {})).toEqual([]);
		});
	}

	it("delivers what the callback emits to the child's listeners", () => {
		const logic = callbackLogic<AnyEventObject, undefined>(({ emit, receive }) => {
			receive(() => emit({ type: "heard" }));
		});
		const actor = createActor(logic).start();
		const heard: string[] = [];
		actor.on("heard", (event) => heard.push(event.type));
		actor.send({ type: "anything" });
		expect(heard).toEqual(["heard"]);
		actor.stop();
		expect(actor.getSnapshot().status).toBe("stopped");
	});

	it("starts a restored actor's callback afresh", () => {
		const starts: unknown[] = [];
		const logic = callbackLogic<AnyEventObject, { n: number }>(({ input }) => {
			starts.push(input.n);
		});
		const first = createActor(logic, { input: { n: 7 } }).start();
		const persisted = first.getPersistedSnapshot();
		first.stop();
		createActor(logic, { snapshot: persisted, input: { n: 7 } }).start();
		expect(starts).toEqual([7, 7]);
	});
});
