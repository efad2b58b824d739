/**
 * What a browser bundle of agentchart gets in place of the file store (index.browser.ts, the
 * `browser` condition of package.json `exports`): the file store needs Node's file system, and
 * its static `node:fs` imports would stop a bundler that targets browsers even when the app never
 * calls it. `createFileStore` is still exported from `agentchart`, so one import line serves Node
 * and the page; called in a page, it throws an error that says what to use instead.
 */
import type { FileStore, FileStoreOptions } from "./file-store.js";

export type { FileStore, FileStoreOptions, FsyncPolicy } from "./file-store.js";

/**
 * In a browser bundle: throws, because there is no file system to write sessions to. Use
 * `createMemoryStore()` or an `AgentStore` of your own (IndexedDB, a server behind `fetch`).
 *
 * @example
 * const store = typeof window === "undefined" ? createFileStore("./sessions") : createMemoryStore();
 */
export function createFileStore(_root: string, _options?: FileStoreOptions): FileStore {
	throw new Error(
		"createFileStore (agentchart) needs Node's file system and is not available in a browser bundle: use createMemoryStore(), or an AgentStore of your own (IndexedDB, or a server reached with fetch)",
	);
}
