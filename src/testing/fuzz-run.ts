/**
 * One run of `fuzzAgent`: a random scenario (the model's replies and faults, your tools'
 * latencies and failures, commands at chosen events, restarts) played against an agent from your
 * factory, with the invariants checked on every event and once the run has settled.
 */
import { type Agent, type AgentOptions, LISTENER_EVENT_TYPES } from "../agent.js";
import type { AgentSnapshot } from "../durable/snapshot.js";
import { AssistantMessageEventStream } from "../providers/event-stream.js";
import type { ScriptedBlock, ScriptedReply } from "../providers/scripted.js";
import type { StreamFn } from "../types/stream.js";
import type { AgentEvent, AgentToolResult, AnyAgentTool, BeforeToolCallHook } from "../types/agent.js";
import { idleViolations, queuesOf, stillWaitingOn, watchQueueClears } from "./agent-checks.js";
import { EventInvariants } from "./event-invariants.js";
import { callFactory, isFactoryMistake, refusedPrompt, withoutKitOptions } from "./factory-calls.js";
import { createFaultyModel, type Fault, type FaultKind } from "./faulty-model.js";
import { disposedRunViolations, OpenRuns, refusalViolation } from "./fuzz-dispose.js";
import { beforeToolCallAnswer, checkedCompaction, checkedHooks, checkedNeedsApproval, reportThrows, runToolChecked, watchMachine } from "./instrument/checked-calls.js";
import { type SampleCall, userMessage } from "./model/fixtures.js";
import { QueueLedger } from "./queue-ledger.js";
import { writtenSnapshot } from "./json-check.js";
import { describeError } from "../util/describe-error.js";
import type { RunGuards } from "./run-guards.js";
import { checkTranscript, sentRequestViolations } from "./transcript-checks.js";
import { type AgentViolation, customViolations, violation } from "./violations.js";
import type { AgentFactory } from "./walk/cast.js";
import { settleRun } from "./walk/run-path.js";

/**
 * What a command does to the agent under test. `restart`: at the next quiet point (idle, or
 * waiting for approval), snapshot → JSON → your factory restores it (the old process is gone).
 * `dispose`: `agent.dispose()` wherever the agent is; the run in progress must settle once its
 * `agent_end` reached the listeners, and later commands must throw `Agent has been disposed`
 * (a `restart` after it goes on from the disposed agent's snapshot, as a new process would).
 *
 * @example
 * const commands: FuzzCommand[] = report.counterexample?.commands.map((entry) => entry.command) ?? [];
 */
export type FuzzCommand = "steer" | "followUp" | "abort" | "continue" | "prompt" | "approve" | "reject" | "restart" | "dispose";

/**
 * One random scenario of {@link fuzzAgent}, as its counterexample prints it.
 *
 * @example
 * const scenario: FuzzScenario = { replies: [{ calls: [0], fault: { kind: "reset", afterDeltas: 1 } }, { calls: [] }], tools: [{ latencyMs: 3, fails: false }], commands: [{ atEvent: 4, command: "abort" }] };
 */
export interface FuzzScenario {
	/** The model's replies in order: the sample calls each makes (none: text), and the fault it breaks with. */
	replies: { calls: number[]; fault?: Fault | undefined }[];
	/** Your tools' behaviour, cycled over the calls: a latency before your `execute` runs, or a failure instead of it. */
	tools: { latencyMs: number; fails: boolean }[];
	/** Commands, each issued once the agent has emitted `atEvent` events (those left at the end run then, in order). */
	commands: { atEvent: number; command: FuzzCommand }[];
}

/** What a run needs besides its scenario. */
export interface FuzzRunSetup {
	factory: AgentFactory;
	samples: readonly SampleCall[];
	prompt: string;
	settleTimeoutMs: number;
	guards: RunGuards;
	check?: ((agent: Agent) => readonly (string | AgentViolation)[]) | undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function replyOf(reply: FuzzScenario["replies"][number], samples: readonly SampleCall[], n: number): ScriptedReply {
	const calls: ScriptedBlock[] = reply.calls.flatMap((index) => {
		const sample = samples[index % Math.max(samples.length, 1)];
		return sample ? [{ type: "toolCall" as const, name: sample.name, arguments: { ...sample.arguments } }] : [];
	});
	return { content: [{ type: "text", text: `reply ${n}` }, ...calls] };
}

/** Plays one scenario; returns every violation (empty: all held). */
export async function runFuzzScenario(scenario: FuzzScenario, setup: FuzzRunSetup): Promise<AgentViolation[]> {
	const found: AgentViolation[] = [];
	const report = (each: AgentViolation) => void found.push(each);
	setup.guards.reset();
	const model = createFaultyModel(
		scenario.replies.map((reply, n) => replyOf(reply, setup.samples, n)),
		{ chunkSize: 6, faults: (call) => scenario.replies[call]?.fault, whenExhausted: { content: "nothing more to say" } },
	);
	// Each reply begins after a macrotask, as a provider's (network I/O) does: a run your code keeps
	// going (a listener that steers on every turn) then lets the kit's timers fire and is reported
	// as not settling, instead of holding the process on microtasks forever.
	const streamFn: StreamFn = (...args) => {
		if (args[2]?.signal?.aborted) report(violation("after-abort", `the model was called for a run that was already aborted${disposed ? " (the agent was disposed)" : ""}`));
		for (const found of sentRequestViolations(args[1].messages)) report(found);
		const out = new AssistantMessageEventStream();
		setImmediate(() => {
			void (async () => {
				for await (const event of model.streamFn(...args) as AssistantMessageEventStream) out.push(event);
			})().finally(() => out.end());
		});
		return out;
	};
	const invariants = new EventInvariants();
	const ledger = new QueueLedger();
	let toolCalls = 0;
	const executions = new Map<string, number>();
	let events = 0;
	let generation = 0;
	const pending = [...scenario.commands].sort((a, b) => a.atEvent - b.atEvent);
	let agent: Agent;
	let issuing = Promise.resolve();
	/** Why the run could not go on (your factory failed to restore it): its end is not checked. */
	let lost: string | undefined;
	/** Your factory is written wrong (it did not restore the snapshot it was given): thrown at fuzzAgent's caller once the run is cleaned up. */
	let mistake: unknown;
	/** The current agent was disposed by a `dispose` command (a restart makes a new one). */
	let disposed = false;
	let lastHeardAt = Date.now();
	/** Events for the listeners (deltas aside) the current agent's machine emitted, and those the kit's listener heard. */
	let emitted = 0;
	let heard = 0;
	const runs = new OpenRuns(() => invariants.running, () => lastHeardAt);
	/** Your tools' calls of each agent that have not returned, with the signal each was given. */
	const executing = new Map<string, { generation: number; signal: AbortSignal | undefined }>();

	const wrapTool = (tool: AnyAgentTool, mine: number): AnyAgentTool => ({
		...tool,
		...(typeof tool.needsApproval === "function" ? { needsApproval: checkedNeedsApproval(tool, report) } : {}),
		execute: async (id, params, signal, onUpdate) => {
			// Ids are unique in a fuzzed session (the model numbers its calls), restarts included.
			const ran = executions.get(id) ?? 0;
			executions.set(id, ran + 1);
			if (ran > 0 && tool.replay !== "safe") report(violation("replay", `tool "${tool.name}" (call ${id}) ran ${ran + 1} times although it is not replay: "safe"`));
			if (signal?.aborted) report(violation("after-abort", `tool "${tool.name}" (call ${id}) started for a run that was already aborted${mine === generation && disposed ? " (the agent was disposed)" : ""}`));
			executing.set(id, { generation: mine, signal });
			try {
				const behaviour = scenario.tools[toolCalls++ % Math.max(scenario.tools.length, 1)] ?? { latencyMs: 0, fails: false };
				if (behaviour.latencyMs) await sleep(behaviour.latencyMs);
				if (behaviour.fails) throw new Error(`agentchart/testing: ${tool.name} failed (simulated by fuzzAgent)`);
				invariants.executing(id, tool.name, params);
				const outcome = await runToolChecked(tool, id, params, signal, onUpdate as ((partial: AgentToolResult<unknown>) => void) | undefined, report);
				if (!outcome.ok) throw outcome.error;
				return outcome.value;
			} finally {
				executing.delete(id);
			}
		},
	});
	const listener = (mine: number) => (event: AgentEvent) => {
		if (mine !== generation) return;
		invariants.onEvent(event);
		ledger.onEvent(event);
		events++;
		lastHeardAt = Date.now();
		if (event.type !== "message_update") heard++;
		// Commands go after the listener returns, as your code's would from elsewhere.
		while (pending[0] && pending[0].atEvent <= events) {
			const { command } = pending.shift() as FuzzScenario["commands"][number];
			issuing = issuing.then(() => issue(command));
		}
	};
	let passedOptions = false;
	const options = (given: AgentOptions): AgentOptions => {
		passedOptions = true;
		return heldOptions(given);
	};
	const heldOptions = (given: AgentOptions): AgentOptions => ({
		...given,
		listeners: [listener(generation), ...(given.listeners ?? [])],
		streamFn,
		...(given.initialState ? { initialState: { ...given.initialState, ...(given.initialState.tools ? { tools: given.initialState.tools.map((tool) => wrapTool(tool, generation)) } : {}) } } : {}),
		...(given.beforeToolCall ? { beforeToolCall: reportThrows<Parameters<BeforeToolCallHook>, ReturnType<BeforeToolCallHook>>("beforeToolCall", given.beforeToolCall, (input) => `tool "${input.toolCall.name}", call ${input.toolCall.id}`, report, beforeToolCallAnswer) } : {}),
		...checkedHooks(given, report),
		...(given.compaction?.summarize ? { compaction: checkedCompaction(given.compaction, report) } : {}),
	});
	const make = (snapshot: AgentSnapshot | undefined) => {
		passedOptions = false;
		const made = callFactory(setup.factory, { streamFn, snapshot, options });
		if (!passedOptions || made.streamFn !== streamFn) {
			made.dispose();
			throw withoutKitOptions(setup.factory);
		}
		const mine = generation;
		emitted = 0;
		heard = 0;
		// What the machine emitted for the listeners (token deltas aside), counted as it emits: a
		// restart waits until the kit's listener, the first, has heard as many.
		for (const type of LISTENER_EVENT_TYPES) made.actor.on(type, () => void (mine === generation && emitted++));
		// Your code may clear the queues itself (a listener that drops follow-ups on abort): not a loss.
		watchQueueClears(made, (kinds) => ledger.cleared(kinds));
		// As the walk does: a listener that threw, wherever it was subscribed, is heard by the machine.
		watchMachine(made, report);
		return made;
	};

	async function issue(command: FuzzCommand): Promise<void> {
		if (command === "restart") return restart();
		if (command === "dispose") return dispose();
		if (disposed) return afterDispose(command);
		try {
			switch (command) {
				case "steer":
				case "followUp": {
					const message = userMessage(`${command} ${events}`, Date.now() + events);
					ledger.track(message, command);
					agent[command](message);
					break;
				}
				case "abort":
					agent.abort();
					break;
				case "prompt":
					if (!agent.state.isStreaming) runs.track(agent.prompt(`${setup.prompt} (${events})`));
					break;
				case "continue":
					if (!agent.state.isStreaming && agent.state.messages.at(-1)?.role !== "assistant") runs.track(agent.continue());
					break;
				case "approve":
				case "reject": {
					const waiting = agent.pendingApprovals[0];
					if (waiting) void (command === "approve" ? agent.approve(waiting.toolCallId) : agent.reject(waiting.toolCallId, "rejected by fuzzAgent"));
					break;
				}
			}
		} catch (error) {
			// A command the agent refuses where it is now (continue after an assistant reply): not a violation.
			void error;
		}
	}

	/**
	 * Disposes the agent wherever it is, then holds the commands after it until the run that was
	 * in progress has settled (see fuzz-dispose.ts for what must hold).
	 */
	async function dispose(): Promise<void> {
		if (lost) return;
		const subject = agent;
		const first = !disposed;
		disposed = true;
		const inProgress = runs.pending();
		try {
			subject.dispose();
		} catch (error) {
			report(violation("command", `dispose() threw${first ? "" : " when called again"}: ${describeError(error)}`));
			return;
		}
		if (!first) return;
		for (const each of await disposedRunViolations(subject, inProgress, () => !invariants.running, setup.settleTimeoutMs)) report(each);
		// What the disposed agent started and has not returned must have been told to stop.
		for (const [id, call] of executing) {
			if (call.generation === generation && subject === agent && call.signal?.aborted === false) report(violation("after-abort", `a tool call (${id}) still runs after dispose() settled its run, its signal not aborted`));
		}
	}

	/** A command to a disposed agent: refused as documented, or harmless (abort, a decision on nothing). */
	async function afterDispose(command: Exclude<FuzzCommand, "restart" | "dispose">): Promise<void> {
		switch (command) {
			case "steer":
			case "followUp": {
				const message = userMessage(`${command} ${events}`, Date.now() + events);
				const found = await refusalViolation(command, () => agent[command](message), setup.settleTimeoutMs);
				if (found) {
					// Taken after all: the ledger must account for it like any other.
					ledger.track(message, command);
					report(found);
				}
				return;
			}
			case "prompt":
			case "continue": {
				const found = await refusalViolation(command, () => (command === "prompt" ? agent.prompt(`${setup.prompt} (${events})`) : agent.continue()), setup.settleTimeoutMs);
				if (found) report(found);
				return;
			}
			case "abort":
				try {
					agent.abort();
				} catch (error) {
					report(violation("command", `abort() after dispose() threw: ${describeError(error)}`));
				}
				return;
			case "approve":
			case "reject":
				// Nothing waits for a person once the agent is disposed (dispose's check says so if something does).
				return;
		}
	}

	/**
	 * At a quiet point (idle, or waiting for a person): the walk of exploreAgent restores from
	 * every state, with the deliveries held; here the listeners have heard everything. What keeps
	 * the agent from being stored or restored is the finding, not a command refused.
	 */
	async function restart(): Promise<void> {
		if (lost) return;
		const deadline = Date.now() + setup.settleTimeoutMs;
		while (agent.state.isStreaming && agent.pendingApprovals.length === 0 && Date.now() < deadline) await sleep(1);
		// A call waits in the machine before its last events reached a listener that returns a
		// promise: the snapshot would restore a run whose events the listeners never hear. The
		// settling loop may decide the call meanwhile (a snapshot right after a decision is a state
		// worth restoring): the count is checked again after the last wait, with no wait between
		// that check and the snapshot.
		do {
			while (heard < emitted && Date.now() < deadline) await sleep(1);
			await sleep(0);
		} while (heard < emitted && Date.now() < deadline);
		let stored: AgentSnapshot;
		try {
			stored = agent.snapshot();
		} catch (error) {
			report(violation("snapshot", `agent.snapshot() threw at a quiet point: ${describeError(error)}`));
			return;
		}
		const written = writtenSnapshot(stored);
		if ("unwritable" in written) {
			report(violation("snapshot", written.unwritable));
			return;
		}
		generation++;
		agent.dispose();
		invariants.restored();
		runs.clear();
		disposed = false;
		try {
			agent = make(JSON.parse(written.json) as AgentSnapshot);
		} catch (error) {
			// The run cannot go on, and what follows (a queued message never delivered) would only be its echo.
			lost = `your factory threw when given kit.snapshot to restore (a restart at event ${events}): ${describeError(error)}`;
			if (isFactoryMistake(error)) mistake = error;
			else report(violation("snapshot", lost));
		}
	}

	agent = make(undefined);
	const prompted = agent.prompt(setup.prompt);
	runs.track(prompted);
	const refused = await refusedPrompt(agent, prompted);
	if (refused) {
		lost = refused.message;
		mistake = refused;
	}
	// Everything scheduled, then the run must settle: the commands left run at the end, in order.
	for (let round = 0; round < 50 && !lost; round++) {
		await issuing;
		await settleRun(agent, setup.settleTimeoutMs);
		await issuing;
		const next = pending.shift();
		if (!next) break;
		await issue(next.command);
	}
	if (lost) {
		await issuing;
		generation++;
		agent.dispose();
		await sleep(0);
		if (mistake) throw mistake;
		return [...found, ...setup.guards.take()];
	}
	const before = events;
	const idle = await settleRun(agent, setup.settleTimeoutMs);
	if (!idle) report(violation("settle", `waitForIdle did not settle within ${setup.settleTimeoutMs} ms; the machine is in ${JSON.stringify(agent.actor.getSnapshot().value)}${stillWaitingOn(agent, events - before)}`));
	await sleep(0);
	found.push(...invariants.violations);
	if (idle) {
		if (invariants.running) report(violation("settle", "a run never ended (agent_start without agent_end) although the agent is idle"));
		found.push(...idleViolations(agent));
	}
	// A run still going has calls not answered yet: its transcript is checked once it ends (the settle violation says why it did not).
	found.push(...(idle ? checkTranscript(agent.state.messages) : []), ...ledger.violations(queuesOf(agent)));
	for (const each of customViolations(setup.check, agent)) report(each);
	generation++;
	agent.dispose();
	await sleep(0);
	found.push(...setup.guards.take());
	return found;
}

/** The faults a reply may break with. */
export const FUZZ_FAULTS: readonly FaultKind[] = ["reset", "error", "output-limit", "overflow", "stall"];
