export * from "./agent.js";
export * from "./content.js";
export * from "./messages.js";
export * from "./model.js";
export * from "./stream.js";
// pi-agent-core's name for the agent's level ("off" included); a model's own (pi-ai's, without
// "off") stays `ThinkingLevel` inside the package and is public as `ModelThinkingLevel`.
export type { AgentThinkingLevel as ThinkingLevel } from "./agent.js";
export type { ThinkingLevel as ModelThinkingLevel } from "./model.js";
