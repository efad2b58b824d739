/**
 * Runs one machine on both interpreters (XState's `createActor(machine)` and agentchart's
 * `createActor(chartLogic(machine))`) and records what an observer of each sees: emitted
 * events, snapshots (status, value, `matches`, context, children, output, error), errors, and
 * the inspection records (events between actors, microsteps with their transitions, actions).
 * A test compares the two records line for line.
 */
import { type AnyActorLogic, type AnyStateMachine, type EventObject, type InspectionEvent, SimulatedClock, createActor } from "xstate";
import { chartLogic } from "../../../src/machines/interpreter/chart-logic.js";

/** Who runs the machine. */
export type Interpreter = "xstate" | "agentchart";

/** What `play` does between sends. */
export type Step =
	| EventObject
	| { wait: number }
	| { persistAndRestore: Interpreter }
	| { check: (snapshot: SnapshotLike) => string };

/** The snapshot fields both interpreters offer. */
export interface SnapshotLike {
	status: string;
	value: unknown;
	context: unknown;
	children: Record<string, { getSnapshot(): { status: string } } | undefined>;
	output: unknown;
	error: unknown;
	matches(value: unknown): boolean;
	can(event: EventObject): boolean;
}

interface AnyActor {
	start(): void;
	stop(): void;
	send(event: EventObject): void;
	getSnapshot(): SnapshotLike;
	getPersistedSnapshot(): unknown;
	subscribe(observer: { next: (snapshot: SnapshotLike) => void; error: (error: unknown) => void; complete: () => void }): void;
	on(type: string, handler: (event: EventObject) => void): void;
}

/** The logic of `machine` on `interpreter`. */
export function logicOf(machine: AnyStateMachine, interpreter: Interpreter): AnyActorLogic {
	return interpreter === "xstate" ? machine : (chartLogic(machine) as unknown as AnyActorLogic);
}

function describeValue(value: unknown): string {
	if (value instanceof Error) return `Error(${value.message})`;
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
}

function describeSnapshot(snapshot: SnapshotLike): string {
	const children = Object.entries(snapshot.children ?? {})
		.map(([id, child]) => `${id}:${child?.getSnapshot().status ?? "-"}`)
		.sort()
		.join(",");
	const matches = snapshot.value === undefined ? "?" : String(snapshot.matches?.(snapshot.value));
	return `${snapshot.status} ${describeValue(snapshot.value)} matches=${matches} ctx=${describeValue(snapshot.context)} children=[${children}] output=${describeValue(snapshot.output)} error=${describeValue(snapshot.error)}`;
}

function describeInspection(event: InspectionEvent, root: unknown): string | undefined {
	// Session ids (`x:12`) count every actor made in the process: not comparable between runs.
	const who = (actor: unknown) => (actor === root ? "root" : ((actor as { id?: string } | undefined)?.id?.replace(/^x:\d+$/, "x:*") ?? "?"));
	switch (event.type) {
		case "@xstate.event":
			return `event ${who(event.sourceRef)}→${who(event.actorRef)} ${event.event.type}`;
		case "@xstate.microstep": {
			const transitions = (event as unknown as { _transitions: { source: { id: string }; target?: { id: string }[] }[] })._transitions
				.map((t) => `${t.source.id}→${t.target?.map((target) => target.id).join("+") ?? "·"}`)
				.join(" ");
			return `microstep ${who(event.actorRef)} ${event.event.type} [${transitions}] ${describeValue((event.snapshot as { value?: unknown }).value)}`;
		}
		case "@xstate.action": {
			const params = event.action.params as { event?: EventObject } | undefined;
			return `action ${who(event.actorRef)} ${event.action.type}${params?.event ? ` ${params.event.type}` : ""}`;
		}
		default:
			return undefined;
	}
}

/** Options of {@link play}. */
export interface PlayOptions {
	input?: unknown;
	/** The logic agentchart's side runs (default `chartLogic(machine)`), e.g. with a context copier. */
	logic?: AnyActorLogic;
	/** Record inspection events too (default true). */
	inspect?: boolean;
}

/**
 * Runs `steps` on `interpreter` and returns the record. Time is simulated: `{ wait }` advances
 * the clock, and each step lets promises settle.
 *
 * @example
 * expect(await play(machine, "agentchart", steps)).toEqual(await play(machine, "xstate", steps));
 */
export async function play(machine: AnyStateMachine, interpreter: Interpreter, steps: readonly Step[], options: PlayOptions = {}): Promise<string[]> {
	const lines: string[] = [];
	const clock = new SimulatedClock();
	let root: unknown;
	const inspect = options.inspect === false ? undefined : (event: InspectionEvent) => {
		const line = describeInspection(event, root);
		if (line) lines.push(line);
	};
	const watch = (actor: AnyActor) => {
		root = actor;
		actor.on("*", (event) => lines.push(`emit ${describeValue(event)}`));
		actor.subscribe({
			next: (snapshot) => lines.push(`snapshot ${describeSnapshot(snapshot)}`),
			error: (error) => lines.push(`error ${describeValue(error)}`),
			complete: () => lines.push("complete"),
		});
	};
	const settle = async () => {
		for (let i = 0; i < 5; i++) await Promise.resolve();
		await new Promise((resolve) => setImmediate(resolve));
	};
	const logic = interpreter === "agentchart" && options.logic ? options.logic : logicOf(machine, interpreter);
	let actor = createActor(logic, { input: options.input, clock, ...(inspect ? { inspect } : {}) }) as unknown as AnyActor;
	watch(actor);
	actor.start();
	await settle();
	for (const step of steps) {
		if ("wait" in step) {
			clock.increment(step.wait);
			lines.push(`waited ${step.wait}`);
		} else if ("persistAndRestore" in step) {
			const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
			lines.push(`persisted ${describeValue({ ...persisted, children: Object.keys(persisted.children ?? {}) })}`);
			actor.stop();
			actor = createActor(logicOf(machine, step.persistAndRestore), { snapshot: persisted, clock, ...(inspect ? { inspect } : {}) }) as unknown as AnyActor;
			watch(actor);
			actor.start();
			lines.push(`restored ${describeSnapshot(actor.getSnapshot())}`);
		} else if ("check" in step) {
			lines.push(`check ${step.check(actor.getSnapshot())}`);
		} else {
			lines.push(`send ${describeValue(step)}`);
			actor.send(step);
		}
		await settle();
		lines.push(`now ${describeSnapshot(actor.getSnapshot())}`);
	}
	actor.stop();
	await settle();
	return lines;
}

/**
 * The last state a record reached (its last `now` line).
 *
 * @example
 * expect(lastState(lines)).toContain('"b"');
 */
export function lastState(lines: readonly string[]): string {
	return [...lines].reverse().find((line) => line.startsWith("now ")) ?? "";
}

/**
 * The record of both interpreters, for `expect(ours).toEqual(theirs)`.
 *
 * @example
 * const { ours, theirs } = await playBoth(machine, steps);
 */
export async function playBoth(machine: AnyStateMachine, steps: readonly Step[], options: PlayOptions = {}): Promise<{ ours: string[]; theirs: string[] }> {
	const theirs = await play(machine, "xstate", steps, options);
	const ours = await play(machine, "agentchart", steps, options);
	return { ours, theirs };
}
