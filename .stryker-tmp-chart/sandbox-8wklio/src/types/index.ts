// @ts-nocheck
export * from "./agent.js";
export * from "./content.js";
export * from "./messages.js";
export * from "./model.js";
export * from "./stream.js";
