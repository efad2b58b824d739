/**
 * What goes wrong beside the agent's events while the kit runs it: a promise that rejects with
 * nobody to catch it (a listener that calls `prompt` and forgets the promise), and a warning
 * XState prints when a command goes to an actor that can no longer take it. The kit takes these
 * over while it runs (the test runner's own handlers come back afterwards) and reports them as
 * violations of the run in which they happened.
 *
 * One walk at a time per process: an `unhandledRejection` event does not say whose promise it
 * was, so with two walks watching at once a rejection of one agent could only be put in the
 * wrong report, and each walk, putting back what it found at its start, would put back the
 * other's handlers. A second walk is refused while the first runs.
 */
import { describeError } from "../util/describe-error.js";
import { type AgentViolation, violation } from "./violations.js";

/** The guards of a kit run. */
export interface RunGuards {
	/** Forgets what was caught (a new run starts). */
	reset(): void;
	/** What was caught since the last `reset`, as violations. */
	take(): AgentViolation[];
	/** Gives the process its own handlers back. */
	uninstall(): void;
}

/**
 * The warnings XState 5 prints (its development build; the production build prints none), by
 * their opening words as its source writes them. Anchored and exact: a word such as "actor"
 * alone also occurs in your own warnings ("backoff factor 2", "refactor").
 */
export const XSTATE_WARNINGS: readonly RegExp[] = [
	// A command to an actor that can no longer take it: the one the agent's own use can cause.
	/^Event "[^"]*" was sent to stopped actor "/,
	/^Actor type '.*' not found in machine '/,
	/^Custom actions should not call `(assign|emit|sendTo|raise)\(\)` directly/,
	/^Missing `machine\.output` declaration/,
	/^Could not resolve StateNode for id: /,
	/^Wildcards can only be the last token of an event descriptor/,
	/^Infix wildcards in transition events are not allowed/,
	/^state\.can\(\.\.\.\) used outside of a machine-created State object/,
	/^Dynamically mapping values to individual properties is deprecated/,
	/^XState could not find a global object/,
];

/**
 * True for a warning XState printed (see {@link XSTATE_WARNINGS}).
 *
 * @example
 * isXStateWarning('Event "abort" was sent to stopped actor "x (x:1)". …'); // true
 * isXStateWarning("retrying with backoff factor 2"); // false
 */
export function isXStateWarning(text: string): boolean {
	return XSTATE_WARNINGS.some((pattern) => pattern.test(text));
}

/** The walk whose guards are installed now (see the module's comment: one at a time). */
let installedBy: string | undefined;

/**
 * Installs the guards, for the walk named `walk` (`"exploreAgent"`, `"fuzzAgent"`); throws when
 * another walk's are installed. `strictWarnings`: every `console.warn` is a violation
 * (agentchart's own walk); otherwise only XState's, and the rest are printed as usual.
 *
 * @example
 * const guards = installRunGuards({ walk: "exploreAgent", strictWarnings: false });
 * try { await runSomething(); expect(guards.take()).toEqual([]); } finally { guards.uninstall(); }
 */
export function installRunGuards(options: { walk: string; strictWarnings: boolean }): RunGuards {
	if (installedBy !== undefined) {
		throw new Error(
			`agentchart/testing: ${options.walk}: another walk (exploreAgent or fuzzAgent: ${installedBy}) is running in this process; await it first: the kit watches process-wide handlers (unhandledRejection, console.warn) and could not tell whose failure is whose (run walks one after another, not in Promise.all or test.concurrent)`,
		);
	}
	installedBy = options.walk;
	let caught: AgentViolation[] = [];
	const previous = process.listeners("unhandledRejection");
	process.removeAllListeners("unhandledRejection");
	const onUnhandled = (reason: unknown) => caught.push(violation("unhandled-rejection", `a promise rejected with nobody to catch it: ${describeError(reason)}`));
	process.on("unhandledRejection", onUnhandled);
	const warn = console.warn;
	console.warn = (...args: unknown[]) => {
		const text = args.map((arg) => (typeof arg === "string" ? arg : describeError(arg))).join(" ");
		if (options.strictWarnings || isXStateWarning(text)) caught.push(violation("console-warning", `console.warn: ${text.slice(0, 300)}`));
		else warn(...args);
	};
	let uninstalled = false;
	return {
		reset: () => {
			caught = [];
		},
		take: () => {
			const taken = caught;
			caught = [];
			return taken;
		},
		uninstall: () => {
			// Twice would put the process's handlers back twice, or take another walk's place.
			if (uninstalled) return;
			uninstalled = true;
			installedBy = undefined;
			process.off("unhandledRejection", onUnhandled);
			for (const listener of previous) process.on("unhandledRejection", listener);
			console.warn = warn;
		},
	};
}
