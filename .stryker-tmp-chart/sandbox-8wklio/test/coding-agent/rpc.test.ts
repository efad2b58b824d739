/**
 * pi's coding agent in RPC mode (`--mode rpc`, JSON lines on stdin/stdout), on pi-agent-core and
 * on agentchart: abort while streaming, abort during a tool, steer and follow-up during a tool.
 */
// @ts-nocheck

import { rpcAbortStreaming, rpcAbortTool, rpcSteerFollowUp } from "./scenarios.js";
import { describeScenario } from "./suite.js";

describeScenario(rpcAbortStreaming);

// Expected: pi without its doomed extra LLM call after the aborted tool (documented fix 1).
describeScenario(rpcAbortTool);

describeScenario(rpcSteerFollowUp);
