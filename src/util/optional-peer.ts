/**
 * Loading agentchart's optional peer dependencies. npm does not install an optional peer, so an
 * application that uses an integration without installing its package would otherwise meet
 * Node's own `ERR_MODULE_NOT_FOUND`, raised from inside agentchart's `dist/`, which says neither
 * which feature needed the package nor which version to install. Every integration loads its
 * peer through {@link loadOptionalPeer}, on its first use, so the message is the same everywhere.
 */
import { nodeBuiltin } from "./host.js";

/**
 * The optional peers and the ranges `peerDependencies` declares for them (a test keeps the two in
 * step with package.json).
 *
 * @example
 * OPTIONAL_PEER_RANGES["openai"]; // "^7.57.0"
 */
export const OPTIONAL_PEER_RANGES = {
	"@mariozechner/pi-ai": "^0.73.1",
	"@modelcontextprotocol/sdk": "^1.32.2",
	"@restatedev/restate-sdk": "^1.17.2",
	"fast-check": "^4.10.2",
	openai: "^7.57.0",
} as const;

/** The name of an optional peer dependency. */
export type OptionalPeerName = keyof typeof OPTIONAL_PEER_RANGES;

/** Who needs the peer, and how it is installed. */
export interface OptionalPeerUse {
	/** The agentchart entry and feature that needs it, as the user called it: `"agentchart/mcp (connectMcpServers)"`. */
	feature: string;
	/** The peer. */
	peer: OptionalPeerName;
	/** Installed as a development dependency (a testing tool). */
	dev?: boolean | undefined;
}

/**
 * The command that installs the peer at the declared range.
 *
 * @example
 * peerInstallCommand({ feature: "agentchart/testing (fuzzAgent)", peer: "fast-check", dev: true }); // "npm install --save-dev fast-check@^4.10.2"
 */
export function peerInstallCommand(use: OptionalPeerUse): string {
	return `npm install ${use.dev ? "--save-dev " : ""}${use.peer}@${OPTIONAL_PEER_RANGES[use.peer]}`;
}

/**
 * The message for a peer that is not installed: the feature, the package and the command.
 *
 * @example
 * missingPeerMessage({ feature: "streamOpenAICompletions (agentchart)", peer: "openai" });
 * // 'streamOpenAICompletions (agentchart) needs the "openai" package, which is not installed: run `npm install openai@^7.57.0` (an optional peer dependency of agentchart)'
 */
export function missingPeerMessage(use: OptionalPeerUse): string {
	return `${use.feature} needs the "${use.peer}" package, which is not installed: run \`${peerInstallCommand(use)}\` (an optional peer dependency of agentchart)`;
}

/**
 * True when `error` says that the package `peer` itself cannot be found. A package that is
 * installed but misses a module, or one of its own dependencies, is not "missing": it is a broken
 * or incompatible install, and saying "install it" would send the user in a circle.
 *
 * @example
 * isMissingPeer(await import("openai").catch((error) => error), "openai"); // true when openai is not installed
 */
export function isMissingPeer(error: unknown, peer: string): boolean {
	const code = (error as { code?: unknown } | null)?.code;
	if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
	const message = error instanceof Error ? error.message : String(error);
	// Node: "Cannot find package 'openai' imported from ..." (ES modules), "Cannot find module 'openai'" (require).
	return message.includes(`Cannot find package '${peer}'`) || message.includes(`Cannot find module '${peer}'`) || message.includes(`Cannot find module '${peer}/`);
}

/**
 * The installed version of `peer`, as far as it can be found (for messages only): the
 * package.json above the module that `import()` would load.
 */
async function installedVersion(peer: string): Promise<string | undefined> {
	try {
		const [fs, path, url] = [nodeBuiltin("node:fs/promises"), nodeBuiltin("node:path"), nodeBuiltin("node:url")];
		// Outside Node (a bundled page) there are no installed packages to look at.
		if (!fs || !path || !url) return undefined;
		const { readFile } = fs;
		const { dirname, join } = path;
		const { fileURLToPath } = url;
		let entry: string;
		try {
			entry = import.meta.resolve(peer);
		} catch {
			// A package without a main entry ("exports" with subpaths only) may still export its manifest.
			entry = import.meta.resolve(`${peer}/package.json`);
		}
		for (let dir = dirname(fileURLToPath(entry)); ; dir = dirname(dir)) {
			const manifest = (await readFile(join(dir, "package.json"), "utf8").then(JSON.parse, () => undefined)) as { name?: unknown; version?: unknown } | undefined;
			if (manifest?.name === peer) return typeof manifest.version === "string" ? manifest.version : undefined;
			if (dirname(dir) === dir) return undefined;
		}
	} catch {
		return undefined;
	}
}

function needs(use: OptionalPeerUse, version: string | undefined): string {
	const installed = version === undefined ? "" : `version ${version} is installed; `;
	return `${installed}agentchart needs ${use.peer}@${OPTIONAL_PEER_RANGES[use.peer]}: run \`${peerInstallCommand(use)}\``;
}

/**
 * The error for a failed load of a peer: {@link missingPeerMessage} when it is not installed,
 * otherwise the load's own reason with the installed version and the range agentchart needs (a
 * peer installed at another major version often lacks a module or an export). The failed load
 * is the `cause`.
 *
 * @example
 * throw await optionalPeerError({ feature: "agentchart/mcp (connectMcpServers)", peer: "@modelcontextprotocol/sdk" }, error);
 */
export async function optionalPeerError(use: OptionalPeerUse, error: unknown): Promise<Error> {
	if (isMissingPeer(error, use.peer)) return new Error(missingPeerMessage(use), { cause: error });
	const reason = error instanceof Error ? error.message : String(error);
	return new Error(`${use.feature} could not load the "${use.peer}" package (${needs(use, await installedVersion(use.peer))}): ${reason}`, { cause: error });
}

/**
 * Runs `load` (the dynamic `import()`s of the peer) and, when it fails, rejects with
 * {@link optionalPeerError}. When the loaded module lacks one of `requiredExports` (a peer
 * installed at another major version), it rejects too, naming them, rather than letting the
 * first use fail with "x is not a function" far from the cause. Callers cache the promise
 * themselves and drop a rejected one, so that installing the package fixes the next call
 * without a restart.
 *
 * @example
 * const sdk = await loadOptionalPeer({ feature: "streamOpenAICompletions (agentchart)", peer: "openai" }, () => import("openai"), ["OpenAI"]);
 */
export async function loadOptionalPeer<T extends object>(use: OptionalPeerUse, load: () => Promise<T>, requiredExports: readonly (keyof T & string)[] = []): Promise<T> {
	let loaded: T;
	try {
		loaded = await load();
	} catch (error) {
		throw await optionalPeerError(use, error);
	}
	const missing = requiredExports.filter((name) => loaded[name] === undefined);
	if (missing.length > 0) {
		const version = await installedVersion(use.peer);
		throw new Error(`${use.feature} cannot use the installed "${use.peer}" package: it has no ${missing.join(", ")} (${needs(use, version)})`);
	}
	return loaded;
}
