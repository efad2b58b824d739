/**
 * A visualizer server in a process of its own, for the tests of what must not end the process
 * serving an agent: it prints its port, then serves until it is killed.
 */
import { createAgentInspector } from "../../src/inspect/inspector.js";
import { startVisualizerServer } from "../../src/inspect/visualizer-server.js";

const server = await startVisualizerServer({ inspector: createAgentInspector() });
console.log(`port ${server.port}`);
