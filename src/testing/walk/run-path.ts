/**
 * Runs one path of the walk against a fresh agent from your factory. Every asynchronous part
 * waits for the path: the model (a puppet stream), your tools, hooks and summariser (held by the
 * cast), and the agent's delivery acknowledgements (held, as a slow listener would). After each
 * step the real chart must be where the model says: agentchart's own walk (`strict`) reports a
 * difference as a violation; yours plans the rest of the path again from where the agent is (your
 * code answered otherwise than planned). The invariants are checked on every event and at the end.
 */
import type { AnyMachineSnapshot } from "xstate";
import type { Agent } from "../../agent.js";
import { JournalIndex, toolEffectId } from "../../durable/journal.js";
import type { AgentSnapshot } from "../../durable/snapshot.js";
import type { AgentMachineEvent } from "../../machines/types.js";
import type { AgentEvent } from "../../types/agent.js";
import type { AgentMessage } from "../../types/messages.js";
import { idleViolations, queuesOf, stillWaitingOn, watchQueueClears } from "../agent-checks.js";
import { EventInvariants } from "../event-invariants.js";
import { toolCallIdsOf } from "../id-counts.js";
import { compactionFailsAtOnce, isRestore, settlesAtOnce } from "../model/alphabet.js";
import { describeDifference, project } from "../model/projection.js";
import { definitions, restoreKind, type WalkPath, type WalkPlan, type WalkStep } from "../model/plan.js";
import { watchMachine } from "../instrument/checked-calls.js";
import { QueueLedger } from "../queue-ledger.js";
import { checkTranscript } from "../transcript-checks.js";
import { writtenSnapshot } from "../json-check.js";
import { callFactory, isFactoryMistake } from "../factory-calls.js";
import { type AgentViolation, customViolations, violation } from "../violations.js";
import { describeError } from "../../util/describe-error.js";
import { type AgentFactory, WalkCast } from "./cast.js";
import { performStep } from "./perform.js";
import { plannedReply } from "./planned-reply.js";
import { microstepTransitions } from "../../machines/xstate-internals.js";

/** How a path runs. */
export interface PathRunOptions {
	/** A difference between the real chart and the model is a violation (agentchart's own walk) rather than a reason to plan again. */
	strict: boolean;
	/** How long your code may take to answer a held call, or a listener to take an event (ms). */
	stepTimeoutMs: number;
	/** How long the run may take to settle once the path is over (ms). */
	settleTimeoutMs: number;
	/** Times a path may be planned again from where the agent is before the walk gives it up. */
	maxReplans: number;
	/**
	 * Steps your code answered otherwise than the model planned (`fromKey + "\n" + label`), shared
	 * by the paths of a walk so that no path plans through them again.
	 */
	refused?: Set<string> | undefined;
	/** Step labels your code has answered otherwise at least once: the walk no longer waits for it to answer as planned. */
	refusedLabels?: Set<string> | undefined;
	/** Transitions the walk's runs took so far (shared): a path whose goal others took is not planned again. */
	takenSoFar?: Set<string> | undefined;
	/** Your own checks, after the run settled. */
	check?: ((agent: Agent) => readonly (string | AgentViolation)[]) | undefined;
}

/** A violation and the step (index into the performed steps) at which it was seen. */
export interface FoundViolation {
	violation: AgentViolation;
	step: number;
}

/** Your factory threw when given a snapshot to restore (its error the cause). */
class UnrestoredSnapshot extends Error {
	constructor(cause: unknown) {
		super("agentchart/testing: the factory threw when given kit.snapshot", { cause });
	}
}

/** What one path's run did. */
export interface PathRun {
	/** Definition transitions the real chart took. */
	taken: Set<string>;
	violations: FoundViolation[];
	/** The steps performed, in order (the plan as followed, replanned parts included). */
	performed: WalkStep[];
	/** Times the rest of the path was planned again. */
	replans: number;
	/** Why the walk stopped following the path before its end, if it did. */
	leftAt: { step: number; label: string; reason: string } | undefined;
	/** The path took the edge it was planned for. */
	goalReached: boolean;
	/** The kinds of state the path restored from (see `restoreKind`). */
	restoredFrom: Set<string>;
}

export async function settle(rounds = 8): Promise<void> {
	for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Waits for the agent's run to end, approving what waits for approval (nobody else will once the
 * path is over); false when it does not end within `timeoutMs`.
 */
export async function settleRun(agent: Agent, timeoutMs: number): Promise<boolean> {
	let idle = false;
	void agent.waitForIdle().then(() => (idle = true));
	const deadline = Date.now() + timeoutMs;
	while (!idle && Date.now() < deadline) {
		for (const call of agent.pendingApprovals) {
			try {
				void agent.approve(call.callKey);
			} catch {
				// Answered meanwhile (a listener of yours, or the approval timeout).
			}
		}
		await new Promise((resolve) => setTimeout(resolve, 1));
	}
	return idle;
}

/** Events a listener failure simulated by the walk carries (told apart from your listeners' failures). */
export const SIMULATED_LISTENER_FAILURE = "agentchart/testing: a listener failed (simulated by the walk)";

/**
 * What a run follows: a planned path (planned again from where the agent is when your code
 * answers otherwise), or step labels, each taken from wherever the agent is (a replay, or a
 * shrunk counterexample).
 */
export type Route = { path: WalkPath } | { labels: readonly string[] };

/** The state of one path's run: the agent (it changes at a restore), what is held, what was found. */
export class PathRunner {
	readonly found: FoundViolation[] = [];
	readonly taken = new Set<string>();
	readonly performed: WalkStep[] = [];
	readonly restoredFrom = new Set<string>();
	readonly invariants: EventInvariants;
	readonly ledger = new QueueLedger();
	readonly cast: WalkCast;
	steps: WalkStep[];
	index = -1;
	agent!: Agent;
	/** The machine's raw `send` (the held acknowledgements go through it). */
	send!: (event: AgentMachineEvent) => void;
	/** The last barrier the agent acknowledged while the walk held it. */
	heldAck: number | undefined;
	private detach: (() => void) | undefined;
	/** A restore failed in your factory: the run ended there, its agent disposed. */
	private unrestored = false;
	private stamp = 0;

	private readonly labels: readonly string[] | undefined;
	private goal: WalkPath["goal"] | undefined;

	constructor(
		readonly plan: WalkPlan,
		route: Route,
		readonly factory: AgentFactory,
		readonly options: PathRunOptions,
	) {
		this.steps = "path" in route ? [...route.path.steps] : [];
		this.goal = "path" in route ? route.path.goal : undefined;
		this.labels = "labels" in route ? route.labels : undefined;
		// Not while an agent is being restored: it emits before the walk has it in hand.
		this.invariants = new EventInvariants(() => (this.making ? undefined : this.agent.state.pendingToolCalls));
		this.cast = new WalkCast(plan.config.outcomes, { plannedReply: () => plannedReply(this.lookahead(), this.index, this.cast.auto), summary: plan.config.summary, executing: (id, name, args) => this.invariants.executing(id, name, args) }, (found) =>
			this.found.push({ violation: found, step: Math.max(this.index, 0) }),
		);
	}

	report(found: AgentViolation): void {
		this.found.push({ violation: found, step: Math.max(this.index, 0) });
	}

	/** A unique timestamp for a message the walk sends (the queue ledger tells messages apart by it). */
	nextStamp(): number {
		return ++this.stamp;
	}

	/** Makes the agent (or restores it) through your factory, and takes hold of it. */
	makeAgent(snapshot?: AgentSnapshot): void {
		const cast = this.cast;
		const generation = ++this.generation;
		// Events of an agent a restore replaced are its own business: the walk hears the current one.
		const listener = (event: AgentEvent) => {
			if (generation === this.generation) this.onEvent(event);
		};
		cast.listener = listener;
		cast.listening = false;
		this.making = true;
		let agent: Agent;
		try {
			agent = callFactory(this.factory, { streamFn: cast.streamFn, snapshot, options: (options) => cast.options(options) });
		} catch (error) {
			// Your factory cannot restore what your agent stored: a finding of the run (as fuzzAgent reports it), not the walk's failure.
			if (snapshot && !isFactoryMistake(error)) throw new UnrestoredSnapshot(error);
			throw error;
		} finally {
			cast.listener = undefined;
			this.making = false;
		}
		if (snapshot && (agent.streamFn !== cast.streamFn || !cast.listening)) {
			throw new Error("agentchart/testing: the factory restored the agent without kit.options(...): build it as Agent.restore(kit.snapshot, kit.options(yourOptions)) so the walk keeps hold of its model, tools and hooks");
		}
		if (!snapshot) cast.instrument(agent);
		const unsubscribe = cast.listening ? undefined : agent.subscribe(listener);
		this.agent = agent;
		this.attach(agent, unsubscribe);
	}

	/** The walk's listener: the invariants and the queue ledger hear every event. */
	private onEvent(event: AgentEvent): void {
		this.invariants.onEvent(event);
		this.ledger.onEvent(event);
		if (event.type === "approval_requested") this.asked.add(event.toolCallId);
		if (event.type === "message_end" && event.message.role === "assistant" && this.mustReplay) {
			const closedWith = new Set(toolCallIdsOf(event.message));
			const missing = this.mustReplay.filter((id) => !closedWith.has(id));
			this.mustReplay = undefined;
			if (missing.length) this.report(violation("tool-answered", `tool calls ${missing.join(", ")} had started (ran, or were asked about) while their reply streamed when the agent was stored; the restored agent's reply does not close with them, so what they did is never answered (does your restore keep the snapshot's journal?)`));
		}
		if (event.type === "agent_end") for (const found of checkTranscript(this.agent.state.messages)) this.report({ ...found, message: `at agent_end: ${found.message}` });
	}

	private generation = 0;
	/** Tool call ids asked about (approval_requested) so far. */
	private readonly asked = new Set<string>();
	/**
	 * The calls of the reply streaming at the last restore that had started (ran, or were asked
	 * about): the restored agent's next reply is that reply, closed with them from the journal.
	 */
	private mustReplay: string[] | undefined;
	/** True while the factory makes (or restores) an agent. */
	private making = false;

	private attach(agent: Agent, unsubscribe: (() => void) | undefined): void {
		const actor = agent.actor;
		this.heldAck = undefined;
		this.send = watchMachine(agent, (found) => this.report(found), {
			ignore: SIMULATED_LISTENER_FAILURE,
			// Hold the agent's delivery acknowledgements until the path delivers.
			hold: (event) => {
				if (event.type !== "delivered" || this.cast.auto) return false;
				this.heldAck = Math.max(this.heldAck ?? 0, event.barrier);
				return true;
			},
		});
		const inspection = actor.system.inspect({
			next: (event) => {
				if (event.type !== "@xstate.microstep" || event.actorRef !== actor) return;
				for (const t of microstepTransitions(event) as object[]) {
					const definition = definitions.get(t);
					if (definition) this.taken.add(definition.key);
				}
			},
		});
		// Your code may clear the queues itself (a listener that drops follow-ups on abort): not a loss.
		const unwatch = watchQueueClears(agent, (kinds) => this.ledger.cleared(kinds));
		this.detach = () => {
			this.generation++;
			unsubscribe?.();
			inspection.unsubscribe();
			unwatch();
		};
	}

	/** The real chart's state, projected as the model's is. */
	realKey(): string {
		const snapshot = this.agent.actor.getSnapshot() as unknown as AnyMachineSnapshot;
		// While idle the facade owns the transcript (it hands it to the machine with the next command).
		const idle = snapshot.status !== "active" || snapshot.matches("idle" as never);
		return project(this.plan.config, snapshot, idle ? (this.agent.state.messages as AgentMessage[]) : undefined);
	}

	/**
	 * A real restore: the agent as JSON, its process gone (disposed, unheard), an agent restored
	 * from the JSON through your factory, held as the first one was.
	 */
	async restore(): Promise<string | undefined> {
		// A restore continues from the agent's state, and the restored agent does not emit again
		// what the first one emitted before it: stored while its listeners still had some of it
		// on its way (a slow, async listener of yours), the walk's listener would never hear it,
		// and the events after the restore would read as the engine's mistakes.
		const config = this.agent.actor.getSnapshot().context.config;
		if (!(await this.until(() => config.deliveryPending?.() === undefined))) return "the agent's listeners still had its events on their way, so it cannot be stored where they heard everything";
		const written = writtenSnapshot(this.agent.snapshot());
		if ("unwritable" in written) {
			// What your code put in the agent (a BigInt in a tool's details) makes it unstorable: reported, not thrown at the walk's caller.
			this.report(violation("snapshot", written.unwritable));
			return "the agent's snapshot is not JSON, so the walk cannot restore it";
		}
		this.restoredFrom.add(restoreKind(this.plan.config, this.agent.actor.getSnapshot() as unknown as AnyMachineSnapshot));
		const snapshot = JSON.parse(written.json) as AgentSnapshot;
		const machine = this.agent.actor.getSnapshot();
		const running = machine.context.run?.batch?.calls.filter((call) => call.status === "running") ?? [];
		const streaming = machine.matches({ running: "streaming" }) && !machine.context.run?.aborted ? (machine.context.run?.batch?.calls ?? []) : [];
		const started = streaming.map((call) => call.toolCall.id).filter((id) => this.cast.executions.has(id) || this.asked.has(id));
		this.mustReplay = started.length ? started : undefined;
		this.detach?.();
		this.agent.dispose();
		this.cast.forgetHeld();
		// In flight is what the journal says had started (its intent stored, no outcome): a call still
		// waiting for its beforeToolCall is "running" in the chart but has not run, and runs after the restore.
		const journal = new JournalIndex(snapshot.journal);
		const run = machine.context.run;
		const inFlight = running.filter((call) => {
			const record = run && journal.lookup(toolEffectId(run.id, run.turn, call.key));
			return record?.intent !== undefined && record.outcome === undefined;
		});
		this.cast.restoredInFlight = new Set(inFlight.map((call) => call.toolCall.id));
		this.invariants.restored();
		try {
			this.makeAgent(snapshot);
		} catch (error) {
			if (!(error instanceof UnrestoredSnapshot)) throw error;
			this.unrestored = true;
			this.report(violation("snapshot", `your factory threw when given kit.snapshot to restore: ${describeError(error.cause)}`));
			return "your factory threw when given kit.snapshot, so the run cannot go on";
		}
		return undefined;
	}

	/** The real tool call id of an abstract one, in the state a step starts from (calls are matched by position). */
	realCallId(abstractKey: string, from: AnyMachineSnapshot): string | undefined {
		const position = from.context.run?.batch?.calls.findIndex((call: { key: string }) => call.key === abstractKey) ?? -1;
		return this.agent.actor.getSnapshot().context.run?.batch?.calls[position]?.toolCall.id;
	}

	/** Waits until `ready` holds (your code answers, a listener finishes), at most the step timeout. */
	async until(ready: () => boolean): Promise<boolean> {
		const deadline = Date.now() + this.options.stepTimeoutMs;
		for (let round = 0; !ready(); round++) {
			if (Date.now() > deadline) return false;
			if (round < 20) await settle(1);
			else await new Promise((resolve) => setTimeout(resolve, 2));
		}
		return true;
	}

	/** Runs the path; returns what happened. */
	async run(): Promise<PathRun> {
		const config = this.plan.config;
		let replans = 0;
		let leftAt: PathRun["leftAt"];
		let goalReached = false;
		this.makeAgent();
		await settle();
		const leave = (reason: string, label: string) => {
			leftAt = { step: this.index, label, reason };
			if (this.options.strict) this.report(violation("model-conformance", `step ${this.index} ${label}: ${reason}`));
		};
		if (this.realKey() !== this.plan.initialKey) leave(`the agent does not start where the model does:\n    real  ${this.realKey()}\n    model ${this.plan.initialKey}`, "start");
		for (this.index = 0; !leftAt; this.index++) {
			const step = this.nextStep();
			if (typeof step === "string") {
				leftAt = { step: this.index, label: this.labels?.[this.index] ?? "", reason: step };
				break;
			}
			if (!step) break;
			this.markStep();
			const problem = isRestore(step.event) ? await this.restore() : await performStep(this, step);
			if (problem) {
				// The restore that failed is the last step of the path that shows it.
				if (this.unrestored) this.performed.push(step);
				leave(problem, step.label);
				break;
			}
			await settle();
			this.performed.push(step);
			let real = this.realKey();
			// Your code may answer on its own clock: give the agent a moment to get where the model is.
			const onItsOwn = compactionFailsAtOnce(config, step.to) || settlesAtOnce(step.to) !== undefined;
			if (real !== step.toKey && !this.options.strict && !onItsOwn && !this.options.refusedLabels?.has(step.label)) {
				await this.until(() => this.realKey() === step.toKey);
				real = this.realKey();
			}
			if (real === step.toKey || onItsOwn) {
				if (step.fromKey === this.goal?.fromKey && step.label === this.goal.label) goalReached = true;
				continue;
			}
			// Following labels, the next step is taken from wherever the agent is.
			if (this.labels && !this.options.strict) continue;
			if (this.options.strict || replans >= this.options.maxReplans || !this.goal) {
				// In words for a report; agentchart's own strict walks keep the projections for their tests' readers.
				const raw = this.options.strict ? `\n    real  ${real}\n    model ${step.toKey}` : "";
				leave(`after this step the agent is not where the model is: ${describeDifference(real, step.toKey)}${raw}`, step.label);
				break;
			}
			// Your code decides this step otherwise (a hook that never asks approval for this tool): plan around it.
			const refused = (this.options.refused ??= new Set());
			refused.add(`${step.fromKey}\n${step.label}`);
			this.options.refusedLabels?.add(step.label);
			const goalTakes = this.plan.nodes.get(this.goal.fromKey)?.edges.get(this.goal.label)?.takes ?? [];
			// What this path was for, other paths (or this one) took already: no need to chase it.
			if (goalTakes.every((t) => this.taken.has(t) || this.options.takenSoFar?.has(t))) break;
			const rest = goalReached ? [] : this.plan.replan(real, this.goal, refused);
			if (!rest) {
				leftAt = { step: this.index, label: step.label, reason: "the agent went where the model has no way on to the planned edge" };
				break;
			}
			replans++;
			const goal = rest.at(-1);
			if (goal) this.goal = { fromKey: goal.fromKey, label: goal.label };
			this.steps.splice(this.index + 1, this.steps.length, ...rest);
		}
		await this.finish();
		for (const key of this.taken) this.options.takenSoFar?.add(key);
		return { taken: this.taken, violations: this.found, performed: this.performed, replans, leftAt, goalReached, restoredFrom: this.restoredFrom };
	}

	/** The events of the route, past and planned (following labels: each label's event, wherever it is taken from). */
	private lookahead(): AgentMachineEvent[] {
		if (!this.labels) return this.steps.map((step) => step.event);
		return this.labels.map((label) => this.plan.eventOf(label) ?? ({ type: label } as unknown as AgentMachineEvent));
	}

	/** The next step: the plan's, or the one with the next label from where the agent is (a reason when there is none). */
	private nextStep(): WalkStep | string | undefined {
		if (!this.labels) return this.steps[this.index];
		const label = this.labels[this.index];
		if (label === undefined) return undefined;
		const key = this.realKey();
		const step = this.plan.stepFrom(key, label);
		if (step) this.steps.push(step);
		// What it could have taken: a mistyped label is then plain to see.
		const offered = [...(this.plan.nodes.get(key)?.edges.keys() ?? [])];
		return step ?? `the model has no step "${label}" from where the agent is (it has ${offered.length ? offered.map((each) => `"${each}"`).join(", ") : "none"})`;
	}

	/** Lets everything finish on its own: the run must settle, and leave nothing behind. */
	private async finish(): Promise<void> {
		const agent = this.agent;
		this.cast.finish();
		if (this.unrestored) {
			// The agent was stored and disposed, and none came back: nothing is left to settle or check but what it emitted.
			this.index = Math.max(this.performed.length - 1, 0);
			for (const found of this.invariants.violations) this.found.push({ violation: found, step: this.stepOfEvent(found.event) });
			return;
		}
		if (this.heldAck !== undefined && agent.actor.getSnapshot().status === "active") this.send({ type: "delivered", barrier: this.heldAck });
		const before = this.invariants.count;
		const idle = await settleRun(agent, this.options.settleTimeoutMs);
		if (!idle) this.report(violation("settle", `waitForIdle did not settle within ${this.options.settleTimeoutMs} ms after the path; the machine is in ${JSON.stringify(agent.actor.getSnapshot().value)}${stillWaitingOn(agent, this.invariants.count - before)}`));
		await settle();
		this.index = Math.max(this.performed.length - 1, 0);
		if (idle) {
			if (this.invariants.running) this.report(violation("settle", "a run never ended (agent_start without agent_end) although the agent is idle"));
			for (const found of idleViolations(agent)) this.report(found);
		}
		// A run still going has calls not answered yet: its transcript is checked once it ends (the settle violation says why it did not).
		for (const found of [...(idle ? checkTranscript(agent.state.messages) : []), ...this.ledger.violations(queuesOf(agent))]) this.report(found);
		for (const found of this.invariants.violations) this.found.push({ violation: found, step: this.stepOfEvent(found.event) });
		for (const found of customViolations(this.options.check, agent)) this.report(found);
		this.detach?.();
		agent.dispose();
		await settle(2);
		if (Object.keys(agent.actor.getSnapshot().children).length) this.report(violation("settle", "child actors alive after dispose"));
	}

	/** Event indices at which each step began: an event's violation is the step's during which it was emitted. */
	private readonly eventAtStep: number[] = [];

	/** Called before each step: the event count then. */
	markStep(): void {
		this.eventAtStep[this.index] = this.invariants.count;
	}

	private stepOfEvent(event: number | undefined): number {
		if (event === undefined) return Math.max(this.performed.length - 1, 0);
		let step = 0;
		for (let i = 0; i < this.eventAtStep.length; i++) if ((this.eventAtStep[i] ?? Infinity) <= event) step = i;
		return step;
	}
}

/**
 * Runs one path of a plan against a fresh agent from `factory`.
 *
 * @example
 * const run = await runWalkPath(plan, plan.paths[0] as WalkPath, factory, { strict: false, stepTimeoutMs: 2000, settleTimeoutMs: 5000, maxReplans: 4 });
 */
export async function runWalkPath(plan: WalkPlan, route: WalkPath | Route, factory: AgentFactory, options: PathRunOptions): Promise<PathRun> {
	return new PathRunner(plan, "steps" in route ? { path: route } : route, factory, options).run();
}
