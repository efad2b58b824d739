/**
 * `agentchart` as a browser bundle gets it (the `browser` condition of package.json `exports`):
 * the same exports, with a `createFileStore` that throws a clear error instead of the file store,
 * whose `node:` imports a bundler cannot resolve for a page (see docs/browser.md).
 */
export * from "./index-shared.js";
export { createFileStore, type FileStore, type FileStoreOptions, type FsyncPolicy } from "./durable/file-store.browser.js";
