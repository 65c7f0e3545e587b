// M5: the official TypeScript SDK as a server whose tool runs only as a task (protocol
// 2025-11-25), over stdio. Usage: node tasks_server.mjs SDK_DIR.
import { pathToFileURL } from 'node:url';

const [sdkDir] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { McpServer } = await load('server/mcp.js');
const { StdioServerTransport } = await load('server/stdio.js');
const { InMemoryTaskStore } = await load('experimental/tasks/stores/in-memory.js');

const server = new McpServer(
  { name: 'typescript-tasks', version: '0' },
  {
    capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new InMemoryTaskStore(),
  },
);
server.experimental.tasks.registerToolTask(
  'slow_report',
  { description: 'Writes a report; it takes a while, so it runs as a task.' },
  {
    createTask: async (extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60000 });
      setTimeout(() => {
        extra.taskStore.storeTaskResult(task.taskId, 'completed', {
          content: [{ type: 'text', text: 'the report is ready' }],
        });
      }, 200);
      return { task };
    },
    getTask: async (extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (extra) => extra.taskStore.getTaskResult(extra.taskId),
  },
);
await server.connect(new StdioServerTransport());
