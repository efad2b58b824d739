/**
 * Fails a test that passed although an assertion inside it failed: an `expect` in a hook, a
 * listener or a tool whose error the engine caught and turned into a result (an error result, an
 * aborted run), which the test then expected anyway. Such a test cannot fail on what that
 * `expect` checks (three were found by reading, 2026-12-06). Retrying helpers (`vi.waitFor`,
 * `vi.waitUntil`, `expect.poll`) fail on purpose until they pass: what fails inside them is not
 * counted. An assertion that fails between tests (in code that outlived its test: a hook of a run
 * the test no longer waited for) fails the file, at its end.
 */
import { afterAll, afterEach, beforeEach, chai, vi } from "vitest";

const failed: string[] = [];
/** Failed between tests: after a test's end, before the next one's start. */
const between: string[] = [];
let inTest = false;
let retrying = 0;

type AssertFunction = (this: Chai.AssertionStatic, ...args: unknown[]) => void;
const assertion = chai.Assertion.prototype as unknown as { assert: AssertFunction };
const assert = assertion.assert;
assertion.assert = function (this: Chai.AssertionStatic, ...args: unknown[]) {
	try {
		assert.apply(this, args);
	} catch (error) {
		// `expect.poll` marks its assertions (`withContext({ poll: true })`) and retries them until they pass.
		if (retrying === 0 && chai.util.flag(this, "poll") !== true) (inTest ? failed : between).push(error instanceof Error ? error.message : String(error));
		throw error;
	}
};

function whileRetrying<F extends (...args: never[]) => unknown>(retry: F): F {
	return ((...args: Parameters<F>) => {
		retrying++;
		try {
			const result = retry(...args);
			if (result instanceof Promise) return result.finally(() => retrying--);
			retrying--;
			return result;
		} catch (error) {
			retrying--;
			throw error;
		}
	}) as F;
}
vi.waitFor = whileRetrying(vi.waitFor);
vi.waitUntil = whileRetrying(vi.waitUntil);

beforeEach(() => {
	failed.length = 0;
	inTest = true;
});

afterEach((context) => {
	inTest = false;
	const caught = failed.splice(0);
	if (caught.length === 0 || context.task.result?.state === "fail") return;
	throw new Error(`an assertion failed inside code that caught its error, and the test passed anyway: ${caught[0]}${caught.length > 1 ? ` (and ${caught.length - 1} more)` : ""}. Record what it checks and assert after the run.`);
});

afterAll(() => {
	const caught = between.splice(0);
	if (caught.length === 0) return;
	throw new Error(`an assertion failed between tests, in code that outlived its test, and nothing failed for it: ${caught[0]}${caught.length > 1 ? ` (and ${caught.length - 1} more)` : ""}. Wait for what the test started before it ends.`);
});
