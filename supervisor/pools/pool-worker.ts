import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { BULK_FD, isBulkToolTexts } from '../../protocol/bulk-text';
import { McpvisorError } from '../../protocol/errors';
import type { WorkerMessage } from '../../protocol/messages';
import type { DegradedReason } from '../../protocol/pool';
import type { RpcClient } from '../../protocol/rpc';
import type { ToolDescriptor } from '../../protocol/tool';
import type { ToolTexts } from '../../protocol/tool-text';
import { killTree } from '../../workers/common/kill-tree';
import { readBulk } from './bulk-reader';

/** One forked worker of a ProcessPool, as the pool keeps it. */
export interface PoolWorker {
  id: number;
  child: ChildProcess;
  rpc: RpcClient;
  ready: boolean;
  exited: Promise<void>;
  /** Why the pool killed it, when it did (a failed liveness check). */
  killedFor?: string;
  /** Set while it reports itself degraded (a `health` message): alive, but it cannot do its work. */
  degradedBy?: DegradedReason;
  /** It said it is ending (`exiting`): it is given no more calls. */
  ending?: boolean;
  /** It said why it cannot start (`fatal`), which is logged then: its exit and the failed restart are that one error. */
  failedStart?: boolean;
  /** Calls it was running when it ended (read before its RPC fails them): more than 0, its end is those calls' failure. */
  callsAtEnd?: number;
}

/** Start failures already logged where the worker reported them (its `fatal`). */
const reportedStartFailures = new WeakSet<object>();

/** Whether `error` is a worker's own `fatal`, logged when it came (not to be logged again). */
export function isReportedStartFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && reportedStartFailures.has(error);
}

/**
 * What a worker says besides call results, handled for the pool: `ready` with its tool list (a
 * large one read from its bulk pipe, protocol/bulk-text.ts), `fatal` (why it cannot start), its
 * log lines and its health. `onReady` and `fail` are the pool's start handshake; `starting()`
 * says whether that is still open.
 */
export function workerMessages(
  worker: PoolWorker,
  log: Logger,
  handshake: { starting: () => boolean; onReady: (tools: ToolDescriptor[] | ToolTexts) => void; fail: (error: McpvisorError) => void },
): (message: WorkerMessage) => void {
  const { child } = worker;
  return (message) => {
    switch (message.type) {
      case 'ready': {
        if (!handshake.starting()) return;
        if (!isBulkToolTexts(message.tools)) return void handshake.onReady(message.tools);
        const { bulk, names, spans } = message.tools;
        void readBulk(child.stdio[BULK_FD] as Readable | null, bulk).then(
          (text) => handshake.onReady({ text, names, spans }),
          (error: McpvisorError) => {
            handshake.fail(error);
            void killTree(child.pid);
          },
        );
        return;
      }
      case 'fatal': {
        log.error({ code: message.error.code }, `worker failed to start: ${message.error.message}`);
        worker.failedStart = true;
        const error = McpvisorError.fromInfo(message.error);
        reportedStartFailures.add(error);
        handshake.fail(error);
        return;
      }
      case 'exiting':
        worker.ending = true;
        return;
      case 'log':
        log[message.level]({ ...message.fields }, message.msg);
        return;
      case 'health':
        worker.degradedBy = message.health.status === 'degraded' ? message.health.reason : undefined;
        if (worker.degradedBy) log.error({ ...worker.degradedBy }, 'worker reports itself degraded');
        else log.info('worker reports itself ok again');
        return;
      default:
        return;
    }
  };
}
