// M5: the official TypeScript SDK as a client of a server's tasks (protocol 2025-11-25).
// Usage: node tasks_client.mjs SDK_DIR URL. Prints one JSON object: what the client saw.
import { pathToFileURL } from 'node:url';

const [sdkDir, url] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { CallToolResultSchema, CreateTaskResultSchema } = await load('types.js');

const client = new Client({ name: 'tasks-m5', version: '0' }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const seen = { protocol: client.getNegotiatedProtocolVersion?.() ?? null };
seen.tasksCapability = client.getServerCapabilities()?.tasks ?? null;
const { tools } = await client.listTools();
seen.support = Object.fromEntries(
  tools.filter((t) => t.execution).map((t) => [t.name, t.execution.taskSupport]),
);

// A required task through the SDK's task stream: created, polled, its result.
seen.stream = [];
const stream = client.experimental.tasks.callToolStream(
  { name: 'test_task_report', arguments: { delay_ms: 300 } },
  CallToolResultSchema,
  { task: { ttl: 60000 } },
);
for await (const message of stream) {
  if (message.type === 'result') {
    seen.stream.push({ type: 'result', text: message.result.content?.[0]?.text ?? null });
  } else if (message.type === 'error') {
    seen.stream.push({ type: 'error', message: String(message.error) });
  } else {
    seen.stream.push({ type: message.type, status: message.task.status });
  }
}

// A task cancelled while it runs.
const made = await client.request(
  { method: 'tools/call', params: { name: 'test_task_report', arguments: { delay_ms: 60000 }, task: { ttl: 60000 } } },
  CreateTaskResultSchema,
);
const cancelled = await client.experimental.tasks.cancelTask(made.task.taskId);
seen.cancelled = cancelled.status;
seen.afterCancel = (await client.experimental.tasks.getTask(made.task.taskId)).status;
seen.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.status).sort();

// A plain tool through the same rewriting, unchanged.
const plain = await client.callTool({ name: 'test_simple_text', arguments: {} });
seen.plain = plain.content?.[0]?.text ?? null;

console.log(JSON.stringify(seen));
await client.close();
