/**
 * What the statechart engine itself costs for one turn, apart from everything agentchart does
 * in its actions: the steps the agent's chart takes for a prompt are counted on a real run, then
 * a synthetic XState machine takes the same number of steps (each microstep with one `assign`
 * and one `emit`, the same child actors invoked, the machine created, started and stopped once
 * per prompt) and is timed. No chart of that shape can run a turn faster on this engine, so the
 * figure says how far a turn-overhead target is reachable at all.
 */
import { createActor, enqueueActions, fromCallback, setup } from "xstate";
import { loadAgentchart } from "./library.js";
import type { StreamFn } from "../../src/types/stream.js";
import type { AnyAgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { Model } from "../../src/types/model.js";

/** The chart's work for one prompt. */
export interface ChartSteps {
	/** Events the agent actor processed (macrosteps), including the `update` a pinned agent gets. */
	events: number;
	/** Transitions taken (microsteps). */
	microsteps: number;
	/** Child actors started (stream calls, tool batches). */
	actors: number;
}

/**
 * Runs one prompt on an agentchart agent with an inspector on its actor and counts the chart's
 * steps. Reading `agent.actor` pins the machine, which adds one `update` event per run.
 *
 * @example
 * const steps = await countChartSteps({ model, streamFn, tools: [tool], toolExecution: "parallel" });
 * steps.microsteps; // 28
 */
export async function countChartSteps(options: { model: Model; streamFn: StreamFn; tools: AnyAgentTool[]; toolExecution: ToolExecutionMode }): Promise<ChartSteps> {
	const { Agent } = await loadAgentchart();
	const agent = new Agent({ initialState: { model: options.model, tools: options.tools }, streamFn: options.streamFn, toolExecution: options.toolExecution });
	agent.subscribe(() => {});
	const actor = agent.actor;
	const steps: ChartSteps = { events: 0, microsteps: 0, actors: 0 };
	const { unsubscribe } = actor.system.inspect((event) => {
		if (event.type === "@xstate.event" && event.actorRef === actor && event.event?.type !== "xstate.init") steps.events++;
		if (event.type === "@xstate.microstep" && event.actorRef === actor) steps.microsteps++;
		if (event.type === "@xstate.actor" && event.actorRef !== actor) steps.actors++;
	});
	await agent.prompt("go");
	unsubscribe();
	agent.dispose();
	return steps;
}

/** A do-nothing child, as cheap as an invoked actor gets. */
const idleChild = fromCallback(() => () => {});

/** One state of the synthetic chain. */
interface FloorState {
	entry?: "step";
	invoke?: { src: "idleChild" };
	on?: { next: string };
	always?: string;
	type?: "final";
}

/**
 * A machine that takes `steps.microsteps` transitions over `steps.events` events (the rest
 * eventless), each entering a state whose entry assigns to the context and emits an event (our
 * chart's actions are `enqueueActions` doing the same), invoking `steps.actors` children along
 * the way. Returns the machine and how many `next` events walk it to its final state.
 *
 * @example
 * const { machine, events } = chartFloorMachine({ events: 16, microsteps: 28, actors: 3 });
 */
export function chartFloorMachine(steps: ChartSteps) {
	const eventful = new Set<number>();
	// Spread the event-triggered transitions evenly over the chain; the first one starts it.
	for (let i = 0; i < steps.events; i++) eventful.add(Math.floor((i * steps.microsteps) / Math.max(1, steps.events)));
	const invoking = new Set<number>();
	for (let i = 0; i < steps.actors; i++) invoking.add(Math.floor(((i + 0.5) * steps.microsteps) / Math.max(1, steps.actors)));
	const states: Record<string, FloorState> = { start: { on: { next: "s0" } } };
	for (let i = 0; i < steps.microsteps; i++) {
		const target = i === steps.microsteps - 1 ? "done" : `s${i + 1}`;
		const state: FloorState = { entry: "step" };
		if (invoking.has(i)) state.invoke = { src: "idleChild" };
		if (eventful.has(i + 1)) state.on = { next: target };
		else state.always = target;
		states[`s${i}`] = state;
	}
	states["done"] = { type: "final" };
	const machine = setup({
		types: { context: {} as { n: number; turn: number; messages: readonly string[] }, events: {} as { type: "next" }, emitted: {} as { type: "step"; n: number } },
		actors: { idleChild },
		actions: {
			step: enqueueActions(({ context, enqueue }) => {
				enqueue.assign({ n: context.n + 1 });
				enqueue.emit({ type: "step", n: context.n });
			}),
		},
	}).createMachine({ context: { n: 0, turn: 0, messages: [] }, initial: "start", states });
	return { machine, events: eventful.size };
}

/**
 * Walks the synthetic chart `prompts` times (created, started, walked, stopped; an emitted-event
 * listener attached as the agent's facade has); the caller times it as it times the others.
 *
 * @example
 * walkChartFloor(chartFloorMachine(steps), 500);
 */
export function walkChartFloor(floor: ReturnType<typeof chartFloorMachine>, prompts: number): void {
	let seen = 0;
	for (let i = 0; i < prompts; i++) {
		const actor = createActor(floor.machine);
		actor.on("*", () => {
			seen++;
		});
		actor.start();
		for (let e = 0; e < floor.events; e++) actor.send({ type: "next" });
		if (actor.getSnapshot().status !== "done") throw new Error("chart floor: the synthetic chart did not reach its final state");
		actor.stop();
	}
	if (seen === 0 && prompts > 0) throw new Error("chart floor: no emitted event was seen");
}
