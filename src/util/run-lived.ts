/**
 * What lives as long as a run (or an agent) is built where V8 cannot pretenure it.
 *
 * V8 counts, for each object or array literal in the code (an *allocation site*), how many of
 * the objects it made since the last minor collection (a scavenge) were still alive at that
 * scavenge. When nearly all were, V8 decides the site's objects live long, and from then on it
 * allocates them in the old generation ("pretenuring"). For the objects a run holds from its
 * start to its end, that decision came after some hundreds of short runs, and it was a loss:
 *
 * - A pretenured object dies with its run like the rest. The scavenger cannot tell a dead old
 *   object from a live one, so every young object it points to (an event in a mailbox, a
 *   controller in a list, a call's options) survives the next scavenges and is promoted too.
 * - The sites of those objects then look long-lived as well, and the decision spreads along
 *   the run's references, until a run's skeleton is allocated old.
 * - Measured on 1-delta runs (a new agent each, after 6,000 warm-up runs; `node
 *   --trace-gc-nvp`): 4.1 KiB promoted per run, against 1.0 KiB with V8's pretenuring turned
 *   off (`--no-allocation-site-pretenuring`). Scavenge pauses came to 3.5 times as long, and a
 *   run to 1.5 times the CPU time. pi's runs did not set it off: of pi's objects, only its
 *   messages are pretenured, and they stay in the transcript.
 *
 * V8 tracks only literals (an empty object literal `{}` excepted) and `new Array(...)`; a class
 * instance and a copy made by `slice()` or `Array.from()` are not tracked. So the engine builds
 * what lives as long as a run (or an agent) in those ways: the lean actors' mailboxes and effect
 * lists, the run's configuration and stream options, the inputs of its actors, the run's
 * lists. Two kinds stay literals: what lives for one step (the chart's context copies, which a
 * scavenge rarely finds alive) and what a user keeps (messages, which belong in the old
 * generation). test/util/run-lived.test.ts checks with V8's natives that, after many short
 * runs, none of a run's skeleton is allocated old.
 */

/** Never written to: only copied. */
const EMPTY: never[] = [];

/**
 * An empty array that V8 does not pretenure, for a list that lives as long as a run or an agent
 * (see the module comment). `[]` is a tracked literal; a copy made by `slice()` is not, and
 * costs what the literal does (`Array.of()` takes four times as long).
 *
 * @example
 * class Batch {
 *   readonly calls: Call[] = runLivedList();
 * }
 */
export function runLivedList<T>(): T[] {
	return EMPTY.slice();
}
