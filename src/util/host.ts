/**
 * What the host runtime offers beyond the language: Node's built-in modules and its environment
 * variables. The engine runs in browsers and web workers too (see docs/browser.md), where neither
 * exists: a static `import "node:…"` would stop a bundler, and a bare `process` would throw a
 * `ReferenceError` in the page. Code that can use them, but can do without, asks here.
 */

interface NodeProcessLike {
	readonly env?: Readonly<Record<string, string | undefined>>;
	readonly versions?: { readonly node?: string };
	getBuiltinModule?(id: string): unknown;
}

interface NodeBuiltins {
	"node:fs/promises": typeof import("node:fs/promises");
	"node:http": typeof import("node:http");
	"node:module": typeof import("node:module");
	"node:path": typeof import("node:path");
	"node:url": typeof import("node:url");
	"node:util": typeof import("node:util");
}

function nodeProcess(): NodeProcessLike | undefined {
	return (globalThis as { process?: NodeProcessLike }).process;
}

/**
 * Node's built-in module `id`, loaded synchronously without an `import` a browser bundler would
 * have to resolve; `undefined` outside Node (and on Node lines before 20.16, which lack
 * `process.getBuiltinModule`).
 *
 * @example
 * const util = nodeBuiltin("node:util");
 * const shown = util ? util.inspect(value) : JSON.stringify(value);
 */
export function nodeBuiltin<Id extends keyof NodeBuiltins>(id: Id): NodeBuiltins[Id] | undefined {
	return nodeProcess()?.getBuiltinModule?.(id) as NodeBuiltins[Id] | undefined;
}

/**
 * The environment variable `name`, or `undefined` where there is no process environment (a page).
 *
 * @example
 * const apiKey = options.apiKey ?? environmentVariable("ANTHROPIC_API_KEY");
 */
export function environmentVariable(name: string): string | undefined {
	return environment()[name];
}

/**
 * The process environment, or an empty one where there is none (a page).
 *
 * @example
 * const keys = Object.keys(environment()).filter((name) => name.endsWith("_API_KEY"));
 */
export function environment(): Readonly<Record<string, string | undefined>> {
	return nodeProcess()?.env ?? {};
}

/**
 * Throws an error that names `feature` and says it needs Node, where it is called outside Node (a
 * page): for the parts that drive Node's event loop and process events, which would otherwise fail
 * deep inside with a `ReferenceError`.
 *
 * @example
 * assertNodeHost("exploreAgent (agentchart/testing)");
 */
export function assertNodeHost(feature: string): void {
	if (nodeProcess()?.versions?.node !== undefined && typeof setImmediate === "function") return;
	throw new Error(`${feature} runs on Node (under a test runner such as vitest or node --test), not in a browser; in a page, agentchart/testing offers createScriptedModel, createFaultyModel, recordAgent and checkAgentInvariants`);
}
