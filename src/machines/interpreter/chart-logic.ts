/**
 * agentchart's interpreter of an XState chart, as actor logic for XState's `createActor`:
 * the same chart, guards, actions and actors as `createActor(machine)`, with a step that costs
 * what the chart's own work costs (no snapshot rebuilt per `assign`, no action object resolved
 * per step). The agent runs its chart with it; it is not a public API. `docs/performance.md`
 * says what it buys; `test/machine/interpreter/` runs every behaviour it supports on both
 * interpreters and compares what an observer sees.
 *
 * It runs the subset of SCXML the agent chart uses, and refuses anything else when the logic
 * is built, naming the state and the feature: compound, atomic and final states (a final
 * state's `output`, a parent's done event, the machine's output), entry and exit actions,
 * `invoke` by name (with `input`, `onDone`, `onError`), event and eventless (`always`)
 * transitions with named, inline, `and`/`or`/`not` guards, and `assign`, `enqueueActions` and
 * custom actions. Inside `enqueueActions`: assign, emit, raise and sendTo (with a number or a
 * named delay), sendParent, cancel, spawnChild, stopChild (by id or ref), check, and custom
 * actions (by name, as `{ type }`, or as a function), acted on once the body returns, in order,
 * as XState does (nothing, if it threw). Refused: parallel and history states, `after`, tags,
 * guards or actions with params, initial actions, inline invoked actors, invoke with `systemId`
 * or `onSnapshot`, wildcard event descriptors, several targets, spawning inside `assign`. What a
 * body enqueues is known only as it runs: there the actor fails, naming the state, on a built-in
 * action object (use the `enqueue` methods), an action with params, or a `check` of a guard with
 * params or of a built-in guard other than `and`/`or`/`not`.
 *
 * Persisted snapshots are XState's format: `getPersistedSnapshot()` of either interpreter
 * restores on the other (`createActor(logic, { snapshot })`).
 */
import type { ActorLogic, AnyActorRef, AnyActorScope, AnyStateMachine, ContextFrom, EmittedFrom, EventFromLogic, EventObject, InputFrom, OutputFrom } from "xstate";
import { checkXStateInternals } from "../xstate-internals.js";
import { type Chart, actorLogicOf, compileChart } from "./compile.js";
import { selectTransition } from "./select.js";
import { ChartSnapshot, type ChartSnapshotOf, type PersistedChartSnapshot, leafOf, persistSnapshot, reviveContext } from "./snapshot.js";
import { Step, compileActionForm, createChild, enterNode, exitAllWhenDone, inspectMicrostep, microstep, settle, startChild } from "./step.js";

type AnyActorSystem = AnyActorScope["system"];

/** Options of {@link chartLogic}. */
export interface ChartLogicOptions<C> {
	/**
	 * The context as a persisted snapshot keeps it, for a chart that knows its context holds no
	 * actor refs (XState's format writes a ref as `{ xstate$$type: 1, id }`, and finding them takes
	 * a walk through the whole context, the transcript included). By default, that walk.
	 *
	 * @example
	 * chartLogic(machine, { persistContext: (context) => ({ ...context, cache: undefined }) });
	 */
	persistContext?: ((context: C) => unknown) | undefined;
	/**
	 * Asked with the snapshot as the actor starts, for a machine whose own `start` checks it (XState
	 * calls the machine's `start`; this interpreter starts the chart itself, so the check is given
	 * here). A throw fails the actor as it would on XState's interpreter.
	 *
	 * @example
	 * chartLogic(machine, { checkStart: (snapshot) => void assertUsable(snapshot.context) });
	 */
	checkStart?: ((snapshot: { status: string; context: C }) => void) | undefined;
}

/** The actor logic {@link chartLogic} returns. */
export type ChartLogic<C, E extends EventObject, I, O, Emitted extends EventObject> = ActorLogic<ChartSnapshotOf<C, O>, E, I, AnyActorSystem, Emitted>;

const charts = new WeakMap<AnyStateMachine, Chart<unknown>>();

/** The compiled chart of a machine (compiled once per machine). */
function chartOf<C>(machine: AnyStateMachine): Chart<C> {
	let chart = charts.get(machine);
	if (!chart) {
		chart = compileChart<unknown>(machine, compileActionForm);
		charts.set(machine, chart);
	}
	return chart as Chart<C>;
}

/**
 * The actor logic that runs `machine`'s chart with agentchart's interpreter: give it to
 * XState's `createActor` where you would give the machine. Throws when the machine uses a
 * feature outside the supported subset (see the module comment).
 *
 * @example
 * const actor = createActor(chartLogic(machine), { input }).start();
 */
export function chartLogic<TMachine extends AnyStateMachine>(
	machine: TMachine,
	options: ChartLogicOptions<ContextFrom<TMachine>> = {},
): ChartLogic<ContextFrom<TMachine>, EventFromLogic<TMachine>, InputFrom<TMachine>, OutputFrom<TMachine>, EmittedFrom<TMachine>> {
	type C = ContextFrom<TMachine>;
	const chart = chartOf<C>(machine);
	const logic = {
		config: machine.config,
		getInitialSnapshot(scope: AnyActorScope, input: unknown): ChartSnapshot<C> {
			checkXStateInternals(scope.system);
			const init = { type: "xstate.init", input };
			const contextConfig = machine.config.context as unknown;
			let context: C = (typeof contextConfig === "function" ? {} : (contextConfig ?? {})) as C;
			const step = new Step<C>(chart, scope, context, {}, chart.root, init);
			step.starting = true;
			try {
				if (typeof contextConfig === "function") {
					// XState computes a context function's result as an assign of the initial event.
					step.assign(({ event }: { event: { input: unknown } }) =>
						(contextConfig as (args: { input: unknown; self: AnyActorRef; spawn: () => never }) => C)({ input: event.input, self: scope.self, spawn: unsupportedSpawn }),
					);
					context = step.context;
				}
				// The root is entered, then its initial states, down to a leaf.
				enterNode(step, chart.root);
				for (let node = chart.root.initial; node; node = node.initial) {
					step.leaf = node;
					enterNode(step, node);
				}
				// Its initial state is final: the machine ends as it starts.
				exitAllWhenDone(step);
				settle(step);
				step.flush();
				return step.snapshot();
			} catch (error) {
				// XState's snapshot of a machine that failed as it started is in its initial states, wherever it failed.
				return new ChartSnapshot("error", context, {}, leafOf(chart.root, chart.nodes, {}), undefined, error, machine, scope.emit);
			}
		},
		transition(snapshot: ChartSnapshot<C>, event: EventObject, scope: AnyActorScope): ChartSnapshot<C> {
			const step = new Step<C>(chart, scope, snapshot.context, snapshot.children, snapshot.leaf, event);
			if (event.type === "xstate.stop") {
				for (const id of Object.keys(step.children)) step.stopChild(id);
				step.status = "stopped";
				inspectMicrostep(step, event, undefined);
				step.flush();
				return step.snapshot();
			}
			const transition = selectTransition(step.leaf, step.context, event);
			if (!transition && event.type.startsWith("xstate.error.actor")) {
				// A child failed and nothing handles it: the chart fails with its error (as XState's does).
				for (const id of Object.keys(step.children)) step.stopChild(id);
				inspectMicrostep(step, event, undefined);
				step.flush();
				return new ChartSnapshot("error", step.context, step.children, step.leaf, undefined, (event as { error?: unknown }).error, machine, scope.emit);
			}
			if (transition) microstep(step, transition);
			inspectMicrostep(step, event, transition);
			settle(step);
			step.flush();
			if (step.status === "active" && step.context === snapshot.context && step.children === snapshot.children && step.leaf === snapshot.leaf) return snapshot;
			return step.snapshot();
		},
		start(snapshot: ChartSnapshot<C>): void {
			options.checkStart?.(snapshot);
			for (const id in snapshot.children) {
				const child = snapshot.children[id];
				// Started once: XState's start of a running actor does nothing, and the spawn's own start is skipped then.
				if (child?.getSnapshot().status === "active") startChild(child);
			}
		},
		getPersistedSnapshot(snapshot: ChartSnapshot<C>, persistOptions?: unknown): PersistedChartSnapshot {
			return persistSnapshot(snapshot, persistOptions, options.persistContext);
		},
		restoreSnapshot(persisted: PersistedChartSnapshot, scope: AnyActorScope): ChartSnapshot<C> {
			checkXStateInternals(scope.system);
			const children: Record<string, AnyActorRef | undefined> = {};
			for (const [id, data] of Object.entries(persisted.children ?? {})) {
				// XState skips a child without a logic's name (a persisted snapshot never holds the logic itself).
				if (typeof data.src !== "string") continue;
				let logic;
				try {
					logic = actorLogicOf(chart, data.src);
				} catch {
					// XState skips a child whose logic it cannot find.
					continue;
				}
				const child = createChild(logic, { id, parent: scope.self, snapshot: data.snapshot, src: data.src as string, systemId: data.systemId, syncSnapshot: data.syncSnapshot });
				// XState assigns a child named "__proto__" too, which sets the children's prototype: made, it is in no list of them and never starts.
				if (id !== "__proto__") children[id] = child;
			}
			reviveContext(persisted.context, children);
			const leaf = leafOf(chart.root, chart.nodes, persisted.value);
			return new ChartSnapshot(persisted.status, persisted.context as C, children, leaf, persisted.output, persisted.error, machine, scope.emit);
		},
	};
	return logic as unknown as ChartLogic<C, EventFromLogic<TMachine>, InputFrom<TMachine>, OutputFrom<TMachine>, EmittedFrom<TMachine>>;
}

function unsupportedSpawn(): never {
	throw new Error("agentchart interpreter: spawn in the initial context is not supported; run this chart with XState's createActor(machine)");
}
