/**
 * Every XState internal agentchart relies on, in one place.
 *
 * agentchart runs its chart on XState's `Actor` through public APIs (`createActor`, the actor
 * scope given to actor logic, `system.inspect`, `system.scheduler`). A few things have no
 * public form, and each is read here only:
 *
 * - the shapes of the built-in actions and guards the chart interpreter compiles (`assign`'s
 *   `assignment`, `enqueueActions`' `collect`, `and`/`or`/`not`'s `check` and `guards`);
 * - the system's `_relay` (an event from one actor to another, reported to inspectors with its
 *   source, as XState's `sendTo` does) and `_sendInspectionEvent` (microstep and action
 *   records for inspectors);
 * - an actor's `_parent` (for `sendParent`, and the inspector's actor tree);
 * - what an inspector reads of XState's records: a snapshot's active nodes (`_nodes`) and a
 *   microstep's transitions (`_transitions`).
 *
 * `xstate` is pinned to its minor line (`~5.33`) because of them. {@link checkXStateInternals}
 * runs once, the first time a chart is compiled, and fails loudly, naming the installed XState
 * version, if one of them is not what this module expects; `test/machine/xstate-internals.test.ts`
 * checks each one's behaviour.
 */
import { type AnyActorRef, type AnyActorScope, type EventObject, and, assign, enqueueActions, not, or } from "xstate";
import { nodeBuiltin } from "../util/host.js";

type AnyActorSystem = AnyActorScope["system"];

/** The XState version installed next to agentchart (for error messages). */
export function xstateVersion(): string {
	try {
		// Outside Node (a bundled page) there is no package.json to read.
		const createRequire = nodeBuiltin("node:module")?.createRequire;
		if (!createRequire) return "unknown";
		return (createRequire(import.meta.url)("xstate/package.json") as { version?: string }).version ?? "unknown";
	} catch {
		return "unknown";
	}
}

/** The error thrown when an internal changed shape. */
export function internalChanged(what: string): Error {
	return new Error(`agentchart: xstate ${xstateVersion()} no longer has ${what}; agentchart supports xstate ~5.33 (run \`npm run canary\` to see what changed)`);
}

interface BuiltinGuardShape {
	readonly check?: unknown;
	readonly guards?: readonly unknown[];
}

const AND_CHECK = (and([]) as unknown as BuiltinGuardShape).check;
const OR_CHECK = (or([]) as unknown as BuiltinGuardShape).check;
const NOT_CHECK = (not(() => true) as unknown as BuiltinGuardShape).check;

/** A guard as the interpreter compiles it: a plain function, a combination, or another built-in. */
export type GuardForm =
	| { readonly kind: "function"; readonly check: (args: { context: unknown; event: EventObject }, params: undefined) => boolean }
	| { readonly kind: "and" | "or" | "not"; readonly guards: readonly unknown[] }
	| { readonly kind: "other-builtin" };

/**
 * What a guard implementation is: XState's `and`/`or`/`not` are functions carrying `check`
 * (which of the three) and `guards` (their parts).
 *
 * @example
 * guardForm(and(["a", "b"])); // { kind: "and", guards: ["a", "b"] }
 */
export function guardForm(guard: (...args: never[]) => unknown): GuardForm {
	const shape = guard as unknown as BuiltinGuardShape;
	if (shape.check === undefined) return { kind: "function", check: guard as unknown as (args: { context: unknown; event: EventObject }, params: undefined) => boolean };
	const guards = shape.guards ?? [];
	if (shape.check === AND_CHECK) return { kind: "and", guards };
	if (shape.check === OR_CHECK) return { kind: "or", guards };
	if (shape.check === NOT_CHECK) return { kind: "not", guards };
	return { kind: "other-builtin" };
}

/** What an `assign` carries: a function of the action's arguments, or a map of property assigners. */
export type Assignment = ((args: AssignArgs, params: undefined) => object) | Record<string, unknown>;

/** The arguments XState gives an assigner (and each property assigner). */
export interface AssignArgs {
	context: unknown;
	event: EventObject;
	self: AnyActorRef;
	spawn: (...args: unknown[]) => never;
}

/** The arguments XState gives an `enqueueActions` body. */
export interface EnqueueArgs<TEnqueue> {
	context: unknown;
	event: EventObject;
	enqueue: TEnqueue;
	check: (guard: unknown) => boolean;
	self: AnyActorRef;
	system: AnyActorSystem;
}

/** An action as the interpreter compiles it. */
export type ActionForm =
	| { readonly kind: "assign"; readonly assignment: Assignment }
	| { readonly kind: "enqueueActions"; readonly collect: (args: EnqueueArgs<unknown>, params: undefined) => void }
	| { readonly kind: "other-builtin"; readonly type: string }
	| { readonly kind: "function"; readonly exec: (args: { context: unknown; event: EventObject; self: AnyActorRef; system: AnyActorSystem }, params: undefined) => void };

interface BuiltinActionShape {
	readonly type?: unknown;
	readonly resolve?: unknown;
	readonly assignment?: unknown;
	readonly collect?: unknown;
}

/**
 * What an action implementation is: XState's built-in actions are functions carrying `type`
 * (`"xstate.assign"`, ...), `resolve`, and their parameters (`assignment`, `collect`, ...).
 *
 * @example
 * actionForm(assign({ n: 1 })); // { kind: "assign", assignment: { n: 1 } }
 */
export function actionForm(action: (...args: never[]) => unknown): ActionForm {
	const shape = action as unknown as BuiltinActionShape;
	if (typeof shape.resolve !== "function") return { kind: "function", exec: action as unknown as (args: { context: unknown; event: EventObject; self: AnyActorRef; system: AnyActorSystem }, params: undefined) => void };
	if (shape.type === "xstate.assign") return { kind: "assign", assignment: shape.assignment as Assignment };
	if (shape.type === "xstate.enqueueActions") return { kind: "enqueueActions", collect: shape.collect as (args: EnqueueArgs<unknown>, params: undefined) => void };
	return { kind: "other-builtin", type: String(shape.type) };
}

interface SystemInternals {
	_relay?: (source: AnyActorRef | undefined, target: AnyActorRef, event: EventObject) => void;
	_sendInspectionEvent?: (event: object) => void;
}

/**
 * Sends `event` from `source` to `target` as XState's `sendTo` does: through the system, which
 * reports it to inspectors with its source before delivering it.
 *
 * @example
 * relay(scope.system, scope.self, child, { type: "execute" });
 */
export function relay(system: AnyActorSystem, source: AnyActorRef, target: AnyActorRef, event: EventObject): void {
	(system as unknown as SystemInternals)._relay!(source, target, event);
}

/**
 * Reports an inspection event (`@xstate.microstep`, `@xstate.action`) to the system's
 * inspectors. XState builds the record it hands them from `event` only when someone inspects:
 * a getter on `event` (a microstep's snapshot) costs nothing otherwise.
 *
 * @example
 * sendInspectionEvent(scope.system, { type: "@xstate.action", actorRef: scope.self, action: { type: "xstate.emit", params: { event } } });
 */
export function sendInspectionEvent(system: AnyActorSystem, event: object): void {
	(system as unknown as SystemInternals)._sendInspectionEvent!(event);
}

/**
 * The actor's parent, if it has one (what XState's `sendParent` sends to).
 *
 * @example
 * const parent = parentOf(scope.self);
 */
export function parentOf(actor: AnyActorRef): AnyActorRef | undefined {
	return (actor as { _parent?: AnyActorRef })._parent;
}

/**
 * The field of a machine snapshot that holds its active state nodes, root first: the chart
 * interpreter's snapshots carry it too, for tools made for XState's (`xstate/graph`, inspectors).
 */
export const ACTIVE_NODES = "_nodes";

/**
 * The field of a microstep inspection event that holds the transitions it took: the chart
 * interpreter's records carry it too.
 */
export const MICROSTEP_TRANSITIONS = "_transitions";

/**
 * The ids of a machine snapshot's active state nodes, root first (XState's `_nodes`; the chart
 * interpreter's snapshots carry the same field), or undefined for a snapshot without them.
 *
 * @example
 * const ids = activeNodeIds(actor.getSnapshot()); // ["agent", "agent.idle"]
 */
export function activeNodeIds(snapshot: unknown): string[] | undefined {
	const nodes = (snapshot as { [ACTIVE_NODES]?: readonly { id: string }[] } | undefined)?.[ACTIVE_NODES];
	return Array.isArray(nodes) ? nodes.map((node) => node.id) : undefined;
}

/**
 * The transitions a microstep inspection event took (XState's `_transitions`), as XState's
 * transition definitions.
 *
 * @example
 * inspect: (event) => { if (event.type === "@xstate.microstep") console.log(microstepTransitions(event).length); }
 */
export function microstepTransitions(event: object): readonly unknown[] {
	return ((event as { [MICROSTEP_TRANSITIONS]?: readonly unknown[] })[MICROSTEP_TRANSITIONS] ?? []) as readonly unknown[];
}

let checked = false;

/**
 * Checks, once per process (or again, with `recheck`), that every internal above has the shape
 * this module reads, on a system of a real actor (`system`) and on freshly made built-ins.
 * Throws {@link internalChanged} naming the first that does not.
 *
 * @example
 * checkXStateInternals(scope.system);
 */
export function checkXStateInternals(system: AnyActorSystem, recheck = false): void {
	if (checked && !recheck) return;
	const internals = system as unknown as SystemInternals;
	if (typeof internals._relay !== "function") throw internalChanged("the actor system's `_relay`");
	if (typeof internals._sendInspectionEvent !== "function") throw internalChanged("the actor system's `_sendInspectionEvent`");
	if (typeof AND_CHECK !== "function" || typeof OR_CHECK !== "function" || typeof NOT_CHECK !== "function" || AND_CHECK === OR_CHECK) {
		throw internalChanged("`check` on the built-in guards `and`, `or`, `not`");
	}
	if (!Array.isArray((and(["a"]) as unknown as BuiltinGuardShape).guards)) throw internalChanged("`guards` on the built-in guard `and`");
	const assigned = actionForm(assign({}) as never);
	if (assigned.kind !== "assign" || typeof assigned.assignment !== "object") throw internalChanged("`type` and `assignment` on the built-in action `assign`");
	const enqueued = actionForm(enqueueActions(() => {}) as never);
	if (enqueued.kind !== "enqueueActions" || typeof enqueued.collect !== "function") throw internalChanged("`type` and `collect` on the built-in action `enqueueActions`");
	checked = true;
}
