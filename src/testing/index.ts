/**
 * `agentchart/testing`: test your own agent the way agentchart tests its chart. A scripted model
 * and a fault-scripting model; `checkAgentInvariants` over what an agent emitted and where it is;
 * `exploreAgent`, which walks the chart over your configuration with `xstate/graph` and runs every
 * path against agents from your factory; and `fuzzAgent`, seeded random runs shrunk to a minimal
 * counterexample (fast-check, an optional peer, loaded only by it). No test runner is assumed:
 * everything returns reports, which vitest, `node --test` or any other runner asserts on.
 * The guide: docs/test-your-agent.md.
 */
export { createScriptedModel, text, thinking, toolCall } from "../providers/scripted.js";
export { createFaultyModel } from "./faulty-model.js";
export type { Fault, FaultKind, FaultyModel, FaultyModelOptions, InjectedFault } from "./faulty-model.js";
export { checkAgentInvariants, idleViolations, recordAgent } from "./agent-checks.js";
export type { AgentRecording, CheckedState, CheckOptions } from "./agent-checks.js";
export type { QueueKind } from "./queue-ledger.js";
export { assertNoViolations, formatViolation } from "./violations.js";
export type { AgentRule, AgentViolation } from "./violations.js";
export { exploreAgent } from "./explore.js";
export type { ExploreOptions } from "./explore.js";
export type { ExploreReport, ExploreViolation } from "./explore-report.js";
export type { AgentFactory, AgentKit } from "./walk/cast.js";
export type { SampleCall } from "./model/fixtures.js";
export type { ModelConfig } from "./model/config.js";
export { fuzzAgent } from "./fuzz.js";
export type { FuzzCommand, FuzzOptions, FuzzReport, FuzzScenario } from "./fuzz.js";
