export * from "./index-shared.js";
export { createFileStore, type FileStore, type FileStoreOptions, type FsyncPolicy } from "./durable/file-store.js";
