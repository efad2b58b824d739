/**
 * pi's coding agent on pi-agent-core and on agentchart, through the RPC commands of
 * `session-scenarios.ts`: new, switched, cloned and exported sessions (and a new session while a
 * tool runs), the `bash` and `abort_bash` commands, model and thinking changes between and during
 * a run, with the state and the messages read after each.
 */
import { rpcAbortBash, rpcBashCommand, rpcModelChanges, rpcNewSessionDuringTool, rpcSessionCommands } from "./session-scenarios.js";
import { describeScenario } from "./suite.js";

describeScenario(rpcSessionCommands);

describeScenario(rpcNewSessionDuringTool);

describeScenario(rpcBashCommand);

describeScenario(rpcAbortBash);

describeScenario(rpcModelChanges);
