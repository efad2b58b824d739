import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

// A full collection without --expose-gc: the flag can be turned on at run time, and a new context then has `gc`.
setFlagsFromString("--expose_gc");
const gc = runInNewContext("gc") as () => void;

/**
 * A full collection now, within the current task: what a WeakRef made in this task targets (or
 * anything it holds) survives it, since the language keeps such targets until the task ends.
 *
 * @example
 * collectNow();
 * const used = process.memoryUsage().heapUsed;
 */
export function collectNow(): void {
	gc();
}

/**
 * Collects garbage fully, `rounds` times at most (10 unless told), a macrotask apart (WeakRefs
 * are cleared and finalizers run between turns): what only weak references hold is gone after it.
 * Resolves whether `ref`, when given, was collected (it stops once it is).
 *
 * @example
 * const ref = new WeakRef(thing);
 * thing = undefined;
 * expect(await collectGarbage(ref)).toBe(true);
 */
export async function collectGarbage(ref?: WeakRef<object>, rounds = 10): Promise<boolean> {
	for (let i = 0; i < rounds && (ref === undefined || ref.deref() !== undefined); i++) {
		await new Promise((resolve) => setImmediate(resolve));
		gc();
	}
	return ref === undefined || ref.deref() === undefined;
}
