/**
 * Why a stdio server's process exited, from what it wrote on stderr. The useful line is rarely
 * the last: Node ends a crash with the error's fields and its version (`requireStack: [] / } /
 * Node.js v20.20.2`), after the line that says what happened (`Error: Cannot find module …`).
 */

/** An exception line: `Error: …`, `TypeError: …`, `Error [ERR_MODULE_NOT_FOUND]: …`, Python's `ModuleNotFoundError: …`. */
const EXCEPTION_LINE = /^[A-Za-z_][\w.]*(?:Error|Exception)(?:\s*\[[\w-]+\])?:\s/;
/** A line that reports an error some other way (`error: unknown option`, `fatal: …`, `npm error 404 …`). */
const ERROR_WORD = /\b(?:error|fatal|panic)\b/i;
/** How many of the last lines are quoted when no line says what went wrong. */
const TAIL_LINES = 5;

/**
 * One line for a server process that exited: the line of its stderr that says what went wrong
 * (the last exception line, else the first line that mentions an error), else its last lines.
 *
 * @example
 * exitReasonFromStderr("node:internal/modules/cjs/loader:1228\n  throw err;\n\nError: Cannot find module '/srv/x.js'\n    at Module._resolveFilename\n{\n  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.20.2\n");
 * // "the server process exited: Error: Cannot find module '/srv/x.js'"
 */
export function exitReasonFromStderr(stderr: string): string {
	const lines = stderr
		.split(/\r?\n/)
		.map((line) => line.trim())
		.filter((line) => line !== "");
	if (lines.length === 0) return "the server process exited";
	const exception = lines.findLast((line) => EXCEPTION_LINE.test(line));
	const reported = exception ?? lines.find((line) => ERROR_WORD.test(line));
	if (reported) return `the server process exited: ${reported}`;
	// One line, so it reads well inside status lines and error results.
	return `the server process exited; last stderr: ${lines.slice(-TAIL_LINES).join(" / ")}`;
}
