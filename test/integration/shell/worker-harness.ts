import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { childProcessChannel } from '../../../protocol/channel';
import type { SupervisorMessage, WorkerMessage } from '../../../protocol/messages';
import { errorResult } from '../../../protocol/results';
import { RpcClient } from '../../../protocol/rpc';
import type { ToolDescriptor, ToolResult } from '../../../protocol/tool';
import { ROOT } from '../../helpers/processes';

export const SHELL_WORKER = path.join(ROOT, 'dist', 'workers', 'shell', 'worker.js');

export interface ShellWorker {
  child: ChildProcess;
  rpc: RpcClient;
  tools: ToolDescriptor[];
  logs: Array<{ level: string; msg: string; fields?: Record<string, unknown> }>;
  /** Like the pool: a rejected call becomes an error result (`isError`, code under `_meta`). */
  call(tool: string, args?: Record<string, unknown>, options?: { signal?: AbortSignal; deadlineMs?: number }): Promise<ToolResult>;
  stop(): Promise<void>;
}

/**
 * Forks the built shell worker the way the process pool does (detached, IPC, stdin ignored),
 * sends `init` with `config` (the `shell` section) and waits for `ready`. Rejects with the worker's
 * `fatal` message. `spawn` sets the worker's working directory and environment (default: ours), and
 * `module` the worker file (default: the build's; a copy elsewhere finds its own package root).
 */
export function startShellWorker(config: Record<string, unknown>, spawn: { cwd?: string; env?: NodeJS.ProcessEnv; module?: string } = {}): Promise<ShellWorker> {
  const { module = SHELL_WORKER, ...options } = spawn;
  const child = fork(module, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true, ...options });
  const logs: ShellWorker['logs'] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    // Before `ready` (a no-op after): a worker that cannot even load says so here, not by a timeout.
    void exited.then(() => reject(new Error(`the shell worker exited before ready (${child.exitCode ?? child.signalCode})`)));
    const rpc = new RpcClient(childProcessChannel<SupervisorMessage, WorkerMessage>(child), (message) => {
      if (message.type === 'log') logs.push({ level: message.level, msg: message.msg, fields: message.fields });
      else if (message.type === 'fatal') reject(new Error(`${message.error.code}: ${message.error.message}`));
      else if (message.type === 'ready') {
        resolve({
          child,
          rpc,
          // The shell worker announces descriptors, not texts (only the api worker sends ToolTexts).
          tools: message.tools as ToolDescriptor[],
          logs,
          call: (tool, args = {}, options = {}) => rpc.call({ tool, arguments: args }, { deadlineMs: options.deadlineMs ?? 30_000, signal: options.signal }).catch((error: unknown) => errorResult(error)),
          async stop() {
            if (child.exitCode === null && child.signalCode === null) {
              child.send({ type: 'shutdown', graceMs: 0 } satisfies SupervisorMessage);
              const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
              await exited;
              clearTimeout(timer);
            }
          },
        });
      }
    });
    child.send({ type: 'init', config } satisfies SupervisorMessage);
  });
}
