/**
 * Your factory, called the way both `exploreAgent` and `fuzzAgent` call it, with what it returned
 * checked: a mistake in how the factory is written (it returns a Promise, an agent it returned
 * before, or a new agent where it was given `kit.snapshot` to restore) would otherwise make
 * either run a test of nothing, or of something else, and report it as a pass or as a bug of the
 * agent. Such a mistake is thrown at the caller, the same error from both.
 */
import type { Agent } from "../agent.js";
import { describeError } from "../util/describe-error.js";
import { queuesOf } from "./agent-checks.js";
import type { AgentFactory, AgentKit } from "./walk/cast.js";

/**
 * Every agent a factory has returned to the kit. The kit disposes each one when it is done with
 * it, so one returned again is a disposed agent (or one still in use by another path): across
 * calls of `exploreAgent` and `fuzzAgent` too, since a module-level agent outlives them.
 */
const returned = new WeakSet<object>();

/** The errors {@link callFactory} throws: a mistake in the test, not a finding about the agent. */
const mistakes = new WeakSet<object>();

const BUILD = "new Agent(kit.options(yourOptions)), or Agent.restore(kit.snapshot, kit.options(yourOptions)) when kit.snapshot is set";

function mistake<E extends Error>(error: E): E {
	mistakes.add(error);
	return error;
}

/**
 * The mistake to throw when the factory built its agent without `kit.options(...)`: the kit then
 * drives neither its model nor its tools, and hears none of its events from the start, so what
 * it would report (a steering message "lost", a tool's bug never reached) is about its own
 * missing hold, not the agent.
 *
 * @example
 * if (!passedOptions) throw withoutKitOptions(factory);
 */
export function withoutKitOptions(factory: AgentFactory): Error {
	const yours = factory.name && factory.name !== "factory" ? `your factory ${factory.name}` : "your factory";
	return mistake(new TypeError(`agentchart/testing: ${yours} built the agent without kit.options(...): the kit must hold its model, tools, hooks and listeners, so build it as ${BUILD}`));
}

/**
 * Whether `error` is one {@link callFactory} threw (the factory is written wrong): `fuzzAgent`
 * throws it at its caller instead of reporting it as a failing scenario.
 *
 * @example
 * try { run(); } catch (error) { if (isFactoryMistake(error)) throw error; report(error); }
 */
export function isFactoryMistake(error: unknown): boolean {
	return typeof error === "object" && error !== null && mistakes.has(error);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
	return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function isAgent(value: unknown): value is Agent {
	const agent = value as Partial<Agent> | null;
	return typeof value === "object" && agent !== null && typeof agent.dispose === "function" && typeof agent.subscribe === "function" && typeof agent.snapshot === "function";
}

/**
 * Whether `agent` goes on from `snapshot`: a run in progress is still running, and an idle agent
 * has the snapshot's transcript and queues (a new agent made instead has neither, and the walk or
 * the fuzzer would report what it lacks as lost).
 */
function restoredFrom(snapshot: NonNullable<AgentKit["snapshot"]>, agent: Agent): boolean {
	const stored = snapshot.machine.context;
	// Mid-run too: a factory that restores a copy it trimmed (the transcript emptied) goes on from a
	// run that lost its history, and the walk would find nothing wrong with the rest. A restored run
	// may close at once what the snapshot left open, adding messages: at least the stored ones, then.
	if (stored.run) return agent.state.isStreaming && agent.state.messages.length >= stored.messages.length;
	const queues = queuesOf(agent);
	return agent.state.messages.length === stored.messages.length && queues.steering.length === stored.steeringQueue.length && queues.followUps.length === stored.followUpQueue.length;
}

/**
 * Calls `factory` with `kit` and returns the agent it made, after checking it: an Agent (not a
 * Promise of one), one the factory has not returned before, and, when `kit.snapshot` is set, one
 * that goes on from it. Otherwise it throws (a TypeError for what is not an Agent, an Error for
 * the rest), the agent made disposed, with what to write instead.
 *
 * @example
 * const agent = callFactory(factory, { streamFn, snapshot, options: (yours) => cast.options(yours) });
 */
export function callFactory(factory: AgentFactory, kit: AgentKit): Agent {
	// Named when it has a name of its own (not one inferred from a `factory` property or variable).
	const yours = factory.name && factory.name !== "factory" ? `your factory ${factory.name}` : "your factory";
	const made: unknown = factory(kit);
	if (isThenable(made)) {
		// Nobody else will: the agent it resolves to is let go, a rejection is not left unhandled.
		made.then(
			(agent) => (isAgent(agent) ? agent.dispose() : undefined),
			() => undefined,
		);
		throw mistake(new TypeError(`agentchart/testing: ${yours} returned a Promise (is it an async function?): it must return the Agent itself, synchronously, as ${BUILD}. The kit calls it for every path and every restore and gives it the snapshot to restore: load what it needs before calling exploreAgent or fuzzAgent, not in it`));
	}
	if (!isAgent(made)) throw mistake(new TypeError(`agentchart/testing: ${yours} returned ${describeError(made)} instead of an Agent: return ${BUILD}`));
	if (returned.has(made)) {
		throw mistake(new Error(`agentchart/testing: ${yours} returned an agent it had returned before (one agent made once and shared?): the kit runs every path, and every restore, on an agent of its own and disposes it afterwards, so the factory must make a new one on every call: ${BUILD}`));
	}
	returned.add(made);
	if (kit.snapshot && !restoredFrom(kit.snapshot, made)) {
		made.dispose();
		throw mistake(new Error(`agentchart/testing: ${yours} was given kit.snapshot but did not restore it: build the agent as Agent.restore(kit.snapshot, kit.options(yourOptions))`));
	}
	return made;
}

/**
 * The mistake to throw when your agent refused a prompt the kit gave it while idle, or undefined
 * when it took it (it is streaming now). A refused prompt rejects before the run starts (a
 * setting no run can use: two tools of one name, a compaction setting that is NaN, a model that
 * is not one), so nothing of the agent could be tested: without this the kit reported a pass.
 *
 * @example
 * const prompted = agent.prompt("Where is my order?");
 * const refused = await refusedPrompt(agent, prompted);
 * if (refused) throw refused;
 */
export async function refusedPrompt(agent: Agent, prompted: Promise<void>): Promise<Error | undefined> {
	if (agent.state.isStreaming) return undefined;
	const error: unknown = await prompted.then(
		() => undefined,
		(caught: unknown) => caught,
	);
	if (error === undefined) return undefined;
	return refusal(error);
}

/**
 * The mistake to throw when your agent refuses its own settings (a compaction `reserveTokens` of
 * NaN, `toolExecution: "bogus"`): its every prompt would reject, so nothing of it could be tested.
 * Asked of the configuration probe, before the walk reads a model out of settings no run can use.
 *
 * @example
 * const refused = refusedSettings(probe);
 * if (refused) throw refused;
 */
export function refusedSettings(agent: Agent): Error | undefined {
	try {
		// The agent's own check, the one its prompt makes: its actor is made only from settings a run can use.
		void agent.actor;
		return undefined;
	} catch (error) {
		return refusal(error);
	}
}

function refusal(error: unknown): Error {
	return mistake(new Error(`agentchart/testing: your agent refused the kit's prompt, so nothing of it could be tested: ${describeError(error)}`, { cause: error }));
}

