/**
 * pi's coding agent compacting, on pi-agent-core and on agentchart (RPC mode): a context
 * overflow (Anthropic's 400 "prompt is too long") compacted then retried, and the `compact`
 * command. pi-coding-agent compacts itself (agentchart's own compaction is not enabled by it).
 */
// @ts-nocheck

import { rpcManualCompaction, rpcOverflow } from "./scenarios.js";
import { describeScenario } from "./suite.js";

describeScenario(rpcOverflow);

describeScenario(rpcManualCompaction);
