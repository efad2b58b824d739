/**
 * One test per XState internal agentchart reads (src/machines/xstate-internals.ts), each on
 * real XState objects. A minor release of XState that renames or reshapes one fails here,
 * with the installed version in the message, before anything subtler fails elsewhere.
 */
import { type EventObject, type InspectionEvent, and, assign, createActor, createMachine, enqueueActions, fromCallback, not, or, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { actionForm, activeNodeIds, checkXStateInternals, guardForm, microstepTransitions, parentOf, relay, sendInspectionEvent, xstateVersion } from "../../src/machines/xstate-internals.js";

const version = `xstate ${xstateVersion()}`;

describe(`the XState internals agentchart reads (${version})`, () => {
	it("tells and/or/not apart, with their parts (`check` and `guards` on the built-in guards)", () => {
		const isA = () => true;
		expect(guardForm(and([isA, "b"]) as never), `${version}: and([...]) is no longer recognised`).toEqual({ kind: "and", guards: [isA, "b"] });
		expect(guardForm(or(["a"]) as never), `${version}: or([...]) is no longer recognised`).toEqual({ kind: "or", guards: ["a"] });
		expect(guardForm(not("a") as never), `${version}: not(...) is no longer recognised`).toEqual({ kind: "not", guards: ["a"] });
		expect(guardForm(isA as never).kind, `${version}: a plain guard is taken for a built-in`).toBe("function");
	});

	it("reads what `assign` and `enqueueActions` carry (`type`, `resolve`, `assignment`, `collect`)", () => {
		const assigner = ({ context }: { context: { n: number } }) => ({ n: context.n + 1 });
		expect(actionForm(assign(assigner) as never), `${version}: assign's shape changed`).toEqual({ kind: "assign", assignment: assigner });
		const collect = () => {};
		expect(actionForm(enqueueActions(collect) as never), `${version}: enqueueActions' shape changed`).toEqual({ kind: "enqueueActions", collect });
		const custom = () => {};
		expect(actionForm(custom as never).kind, `${version}: a custom action is taken for a built-in`).toBe("function");
	});

	it("relays an event between actors through the system (`system._relay`), reported with its source", async () => {
		const inspected: InspectionEvent[] = [];
		const received: string[] = [];
		const child = fromCallback<EventObject>(({ receive }) => {
			receive((event) => received.push(event.type));
		});
		const parent = setup({ actors: { child } }).createMachine({ invoke: { id: "kid", src: "child" } });
		const actor = createActor(parent, { inspect: (event) => inspected.push(event) }).start();
		const kid = actor.getSnapshot().children["kid"];
		if (!kid) throw new Error("no child");
		relay(actor.system, actor, kid, { type: "hello" });
		expect(received, `${version}: system._relay no longer delivers`).toEqual(["hello"]);
		const record = inspected.find((event) => event.type === "@xstate.event" && event.event.type === "hello");
		expect(record && "sourceRef" in record ? record.sourceRef : undefined, `${version}: system._relay no longer reports the source`).toBe(actor);
		actor.stop();
	});

	it("reports inspection records through the system (`system._sendInspectionEvent`), built only for inspectors", () => {
		const seen: string[] = [];
		const actor = createActor(setup({}).createMachine({}), { inspect: (event) => seen.push(event.type) }).start();
		let built = 0;
		sendInspectionEvent(actor.system, {
			type: "@xstate.microstep",
			actorRef: actor,
			get snapshot() {
				built++;
				return actor.getSnapshot();
			},
		});
		expect(seen, `${version}: system._sendInspectionEvent no longer reaches inspectors`).toContain("@xstate.microstep");
		expect(built, `${version}: an inspection record is no longer copied for inspectors`).toBe(1);
		const quiet = createActor(setup({}).createMachine({})).start();
		sendInspectionEvent(quiet.system, {
			type: "@xstate.microstep",
			actorRef: quiet,
			get snapshot() {
				built++;
				return quiet.getSnapshot();
			},
		});
		expect(built, `${version}: inspection records are built with nobody inspecting`).toBe(1);
		actor.stop();
		quiet.stop();
	});

	it("finds an actor's parent (`_parent`)", () => {
		const parent = setup({ actors: { child: fromCallback(() => {}) } }).createMachine({ invoke: { id: "kid", src: "child" } });
		const actor = createActor(parent).start();
		const kid = actor.getSnapshot().children["kid"];
		expect(kid && parentOf(kid), `${version}: an actor's _parent is gone`).toBe(actor);
		expect(parentOf(actor)).toBeUndefined();
		actor.stop();
	});

	it("reads a snapshot's active nodes (`_nodes`) and a microstep's transitions (`_transitions`), as an inspector does", () => {
		const machine = createMachine({ id: "m", initial: "a", states: { a: { on: { go: "b" } }, b: { initial: "inner", states: { inner: {} } } } });
		const microsteps: unknown[][] = [];
		const actor = createActor(machine, { inspect: (event) => void (event.type === "@xstate.microstep" && microsteps.push([...microstepTransitions(event)])) }).start();
		expect(activeNodeIds(actor.getSnapshot()), `${version}: a snapshot's _nodes are gone`).toEqual(["m", "m.a"]);
		actor.send({ type: "go" });
		expect(activeNodeIds(actor.getSnapshot())).toEqual(["m", "m.b", "m.b.inner"]);
		const taken = microsteps.at(-1) as { eventType: string; target?: { id: string }[] }[];
		expect(taken.map((transition) => `${transition.eventType} -> ${transition.target?.map((target) => target.id).join(",")}`), `${version}: a microstep's _transitions are gone`).toEqual(["go -> m.b"]);
		expect(activeNodeIds({})).toBeUndefined();
		actor.stop();
	});

	it("checks every internal once, on a real system, and names the XState version when one is gone", () => {
		const actor = createActor(setup({}).createMachine({})).start();
		expect(() => checkXStateInternals(actor.system)).not.toThrow();
		actor.stop();
		// A system without the internals (what a renaming release would look like) is refused loudly.
		const changed = {} as never;
		let message = "";
		try {
			checkXStateInternals(changed, true);
		} catch (error) {
			message = String(error);
		}
		expect(message).toMatch(new RegExp(`xstate ${xstateVersion().replace(/\./g, "\\.")} no longer has the actor system's \`_relay\``));
	});
});
