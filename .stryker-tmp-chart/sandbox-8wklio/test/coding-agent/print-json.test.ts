/**
 * pi's coding agent in print mode (`-p`) and JSON mode (`--mode json -p`), on pi-agent-core
 * and on agentchart: same stdout, same JSON event lines, same session file, same requests.
 */
// @ts-nocheck

import { jsonOneChunk, jsonOverflow, jsonParallelTools, jsonPlain, jsonToolError, printPlain } from "./scenarios.js";
import { describeScenario } from "./suite.js";

describeScenario(printPlain);

describeScenario(jsonPlain);

describeScenario(jsonParallelTools);

describeScenario(jsonToolError);

describeScenario(jsonOneChunk);

describeScenario(jsonOverflow);
