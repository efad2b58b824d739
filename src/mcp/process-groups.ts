/**
 * The process groups of the stdio servers this process started, and what ends them when this
 * process ends without closing its sessions.
 *
 * Each server runs as the leader of a process group of its own (POSIX), so that whatever it
 * starts (a shell's child, a helper, `npx`'s node) can be signalled with it. The price: the
 * group is not the terminal's foreground group, so Ctrl+C no longer reaches the servers, and the
 * end of this process does not end them either. This module makes up for that, where a process
 * can: on `exit` it ends every live group synchronously, and on SIGINT, SIGTERM or SIGHUP that
 * nobody else listens to (the signal would end this process) it does the same and then lets the
 * signal end the process as it would have. Whenever the last other listener of such a signal is
 * removed, the hook is back at once, so that a signal sent right after (signal-exit's re-raise,
 * an application handler's own `process.kill(process.pid, signal)`, the next Ctrl+C after a
 * `process.once` handler) finds it. A SIGKILL of this process, or a crash of Node itself, leaves
 * the servers to notice the end of their input.
 */

/** How long, at exit, the servers get to end after their input is closed and SIGTERM is sent, before SIGKILL. */
const EXIT_GRACE_MS = 200;
/** How often the exit hook checks whether the groups have ended (it blocks meanwhile). */
const EXIT_POLL_MS = 10;
/** The signals whose default action ends this process, and that a terminal or a supervisor sends. */
const ENDING_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** What became of a signal sent to a process group. */
export type GroupSignalOutcome = "sent" | "gone" | "not-permitted";

/**
 * Sends `signal` to every process of the group `pgid` (0 only checks that one exists).
 *
 * @example
 * signalProcessGroup(child.pid, 0); // "sent" while any process of the group exists, "gone" after
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): GroupSignalOutcome {
	try {
		process.kill(-pgid, signal);
		return "sent";
	} catch (error) {
		// EPERM: a member changed its user; it exists, but is not ours to signal.
		return (error as NodeJS.ErrnoException).code === "ESRCH" ? "gone" : "not-permitted";
	}
}

/** The live groups, each with what closes the server's input (so it sees the end of it before SIGTERM). */
const liveGroups = new Map<number, () => void>();

/**
 * Registers a server's process group, to be ended if this process ends first; call the returned
 * function once the group has ended (or been given up on).
 *
 * @example
 * const untrack = trackProcessGroup(child.pid, () => child.stdin.destroy());
 * // ... once the group is gone:
 * untrack();
 */
export function trackProcessGroup(pgid: number, closeInput: () => void): () => void {
	liveGroups.set(pgid, closeInput);
	if (liveGroups.size === 1) installHooks();
	return () => {
		if (!liveGroups.delete(pgid)) return;
		if (liveGroups.size === 0) removeHooks();
	};
}

function sleepSync(ms: number): void {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Ends every live group now, blocking: an exiting process cannot wait asynchronously. A server
 * gets a moment to end by itself (its input closed, then SIGTERM), as `close()` would give it,
 * only shorter; whatever is left is killed.
 */
function endLiveGroupsNow(): void {
	const groups = [...liveGroups];
	liveGroups.clear();
	removeHooks();
	for (const [, closeInput] of groups) {
		try {
			closeInput();
		} catch {
			// Already closed.
		}
	}
	let left = groups.map(([pgid]) => pgid).filter((pgid) => signalProcessGroup(pgid, "SIGTERM") === "sent");
	for (let waited = 0; left.length > 0 && waited < EXIT_GRACE_MS; waited += EXIT_POLL_MS) {
		sleepSync(EXIT_POLL_MS);
		left = left.filter((pgid) => signalProcessGroup(pgid, 0) === "sent");
	}
	for (const pgid of left) signalProcessGroup(pgid, "SIGKILL");
}

function onEndingSignal(signal: NodeJS.Signals): void {
	if (process.listenerCount(signal) > 1) {
		// Someone else handles the signal (an application closing its sessions gracefully, or a
		// library like signal-exit that also acts only when alone): step aside, so the process
		// behaves as it would without this module. An exit that follows still ends the groups, and
		// `rearmWhenAlone` brings the hook back once the others are gone.
		process.removeListener(signal, onEndingSignal);
		return;
	}
	endLiveGroupsNow();
	// No listener is left: the signal's default action applies again, and ends the process.
	process.kill(process.pid, signal);
}

function isEndingSignal(event: string | symbol): event is (typeof ENDING_SIGNALS)[number] {
	return (ENDING_SIGNALS as readonly (string | symbol)[]).includes(event);
}

/**
 * Brings the hook back for a signal as soon as nobody listens to it, before the code that removed
 * the last listener goes on. Later would be too late: signal-exit removes its listeners and then,
 * in the same call, sends the process the signal again so that it dies of it; with no listener at
 * that moment the process dies inside `process.kill`, the servers still running. With the hook
 * listening, that signal is caught and comes back to `onEndingSignal` alone (the others are gone),
 * which ends the groups and then lets the signal end the process. An application handler added
 * with `process.once`, or one that removes itself, leaves the next signal to the hook the same way.
 * A signal-exit `onExit` callback that returns true (signal-exit 4: "I will exit myself") keeps the
 * process alive: the hook is then back, and the groups end when it exits.
 */
function rearmWhenAlone(event: string | symbol): void {
	if (!isEndingSignal(event) || liveGroups.size === 0 || process.listenerCount(event) > 0) return;
	process.prependListener(event, onEndingSignal);
}

function installHooks(): void {
	process.on("exit", endLiveGroupsNow);
	process.on("removeListener", rearmWhenAlone);
	// First, so that a listener that acts only when alone (signal-exit) sees this one gone.
	for (const signal of ENDING_SIGNALS) process.prependListener(signal, onEndingSignal);
}

function removeHooks(): void {
	process.removeListener("exit", endLiveGroupsNow);
	process.removeListener("removeListener", rearmWhenAlone);
	for (const signal of ENDING_SIGNALS) process.removeListener(signal, onEndingSignal);
}
