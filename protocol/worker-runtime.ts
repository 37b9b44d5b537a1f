import { callProgress } from './call-progress';
import { parentProcessChannel, type Channel } from './channel';
import { claimBulkPipe, viaBulkPipe } from './bulk-text';
import { McpvisorError, toErrorInfo } from './errors';
import { restoreExtraCaCerts } from './extra-ca-certs';
import { unserialisableAt } from './json-safe';
import { isSupervisorMessage, type LogLevel, type SupervisorMessage, type WorkerMessage } from './messages';
import type { WorkerHealth } from './pool';
import type { ToolCall, ToolDescriptor, ToolResult } from './tool';
import type { ToolTexts } from './tool-text';

export type WorkerLogger = Record<LogLevel, (msg: string, fields?: Record<string, unknown>) => void>;

export interface CallContext {
  /** Aborted when the supervisor cancels the call (deadline or client cancel) or shuts down. */
  signal: AbortSignal;
  /** The call's budget in ms, as the supervisor counts it. */
  deadlineMs: number;
  log: WorkerLogger;
  /**
   * Tells the client how far the call has got (MCP `notifications/progress`): `progress` rises
   * with each report (a value not above the last is dropped), `total` if known, `message` for
   * people (cut at 1,000 characters). A no-op when the client asked for no progress. Cheap to
   * call in a loop: at most one report per 100 ms leaves the worker, the last one always.
   * Unusable values (NaN, a string) are dropped with one warning in the log.
   */
  progress: (progress: number, total?: number, message?: string) => void;
}

/** What a toolset's worker provides once initialised. */
export interface WorkerService {
  /** As objects, or as text for a list of megabytes (tool-text.ts). */
  tools: ToolDescriptor[] | ToolTexts;
  handle(call: ToolCall, context: CallContext): Promise<ToolResult>;
  /** Extra figures for /health (whatever the toolset finds useful). */
  stats?(): Record<string, unknown>;
  /** Release what the service holds (browsers, child processes); called before exit. */
  close?(): Promise<void>;
  /**
   * Load what the first call would otherwise wait for. The supervisor asks once the whole server
   * has started, one worker at a time (supervisor.ts), and a replacement worker at once.
   */
  warmUp?(): void | Promise<void>;
  info?: Record<string, unknown>;
}

/**
 * Builds the service from the toolset's config section (sent by the supervisor as `init`).
 * `reportHealth` tells the pool, whenever it changes, that the service cannot do its work though
 * its process is fine (WorkerHealth), for /health; cheap, send it on each change only.
 */
export type WorkerInit = (config: unknown, log: WorkerLogger, reportHealth: (health: WorkerHealth) => void) => Promise<WorkerService>;

/**
 * Runs a worker process: waits for the supervisor's `init`, initialises the service, announces `ready` with its tools, then serves
 * calls until the supervisor asks it to shut down or goes away. An init failure is sent as `fatal`
 * and the process exits 1, so the pool reports the reason instead of respawning blindly.
 */
export function runWorker(init: WorkerInit, channel?: Channel<WorkerMessage, SupervisorMessage>): void {
  restoreExtraCaCerts();
  claimBulkPipe();
  const ch = channel ?? parentProcessChannel<WorkerMessage, SupervisorMessage>(unsendableAnswer);
  const log = channelLogger(ch);
  const running = new Map<number, AbortController>();
  let service: WorkerService | undefined;
  let exiting = false;
  let started = false;

  const exit = async (code: number, graceMs: number) => {
    if (exiting) return;
    exiting = true;
    const deadline = performance.now() + graceMs;
    while (running.size > 0 && performance.now() < deadline) await delay(20);
    for (const controller of running.values()) controller.abort(new McpvisorError('SHUTTING_DOWN', 'the worker is stopping'));
    try {
      await service?.close?.();
    } catch (error) {
      log.warn('closing the service failed', { error: toErrorInfo(error).message });
    }
    ch.flush();
    process.exit(code);
  };

  const serve = async (id: number, call: ToolCall, deadlineMs: number, callId?: string, wantsProgress?: boolean) => {
    if (!service || exiting) {
      ch.send({ type: 'error', id, error: { code: 'SHUTTING_DOWN', message: 'the worker is stopping' } });
      return;
    }
    const controller = new AbortController();
    running.set(id, controller);
    const callLog = callId === undefined ? log : callLogger(log, callId);
    const progress = callProgress(wantsProgress ? (report) => ch.send({ type: 'progress', id, report }) : undefined, (msg) => callLog.warn(msg, { tool: call.tool }));
    try {
      const result = await service.handle(call, { signal: controller.signal, deadlineMs, log: callLog, progress: progress.report });
      progress.finish();
      ch.send({ type: 'result', id, result });
      // A large answer goes out alone, not in one message with this turn's others: the
      // supervisor's wait for a cancelled call's answer (RpcClient) sees each arrive.
      if (textLength(result) > LARGE_ANSWER_CHARS) ch.flush();
    } catch (error) {
      const info = controller.signal.aborted && !(error instanceof McpvisorError)
        ? { code: 'CANCELLED' as const, message: 'the call was cancelled' }
        : toErrorInfo(error);
      progress.finish();
      ch.send({ type: 'error', id, error: info });
    } finally {
      running.delete(id);
    }
  };

  ch.onMessage((message) => {
    if (!isSupervisorMessage(message)) {
      log.warn('dropped a message of unknown shape');
      return;
    }
    switch (message.type) {
      case 'init':
        if (!started) {
          started = true;
          start(message.config);
        }
        return;
      case 'call':
        void serve(message.id, message.call, message.deadlineMs, message.callId, message.progress);
        return;
      case 'cancel':
        running.get(message.id)?.abort(
          new McpvisorError(message.reason === 'timeout' ? 'TIMEOUT' : 'CANCELLED', `the call was ${message.reason === 'timeout' ? 'timed out' : 'cancelled'}`),
        );
        return;
      case 'stats':
        ch.send({
          type: 'stats',
          id: message.id,
          stats: { inFlight: running.size, rssBytes: process.memoryUsage().rss, ...service?.stats?.() },
        });
        return;
      case 'warm-up':
        void warmUp(message.id);
        return;
      case 'shutdown':
        void exit(0, message.graceMs);
        return;
    }
  });
  const warmUp = async (id: number) => {
    try {
      await service?.warmUp?.();
    } catch (error) {
      log.warn('warming up failed; the first call loads what it needs', { error: toErrorInfo(error).message });
    }
    ch.send({ type: 'warmed', id });
  };

  // A throw from a timer or a rejection nobody handled ends the process, as Node would; its
  // calls are answered first, naming the error: they said "worker exited with code 1", the
  // error only in Node's report on stderr.
  process.on('uncaughtException', (error, origin) => {
    const what = origin === 'unhandledRejection' ? 'a promise rejection nobody handled' : 'an exception thrown outside a call (a timer, an event)';
    const { message } = toErrorInfo(error);
    log.error(`${what} ended the worker: ${message}`, { stack: error instanceof Error ? error.stack : undefined });
    // First, so that no call reaches us in the 50 ms left: one did, under load, and its caller
    // got WORKER_CRASHED for a call that never ran.
    ch.send({ type: 'exiting', reason: message });
    for (const id of running.keys()) ch.send({ type: 'error', id, error: { code: 'WORKER_CRASHED', message: `${what} ended the worker running this call: ${message}` } });
    running.clear();
    ch.flush();
    setTimeout(() => process.exit(1), 50);
  });

  // The supervisor is gone (even killed with -9): stop everything we started and leave.
  ch.onClose(() => void exit(0, 0));
  // The supervisor owns our lifecycle: a signal sent to the whole tree (Ctrl-C, pm2's tree kill)
  // must not end calls before the supervisor has drained them. It stops us with `shutdown`.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
  // Our stdout and stderr are the supervisor's stderr. Once its reader is gone (pm2 or a terminal
  // gone, `2> >(head)`), a `console.log` of the module, or a warning of Node's, raised EPIPE as an
  // uncaught exception: every worker crashed at its next line, a crash loop. Output is best effort.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);

  const reportHealth = (health: WorkerHealth) => ch.send({ type: 'health', health });
  const start = (config: unknown) => init(config, log, reportHealth).then(
    (ready) => {
      service = ready;
      ch.send({ type: 'ready', tools: viaBulkPipe(ready.tools), info: ready.info });
    },
    (error) => {
      ch.send({ type: 'fatal', error: toErrorInfo(error) });
      ch.flush();
      // Give the message time to leave before exiting.
      setTimeout(() => process.exit(1), 50);
    },
  );
}

function channelLogger(ch: Channel<WorkerMessage, SupervisorMessage>): WorkerLogger {
  const at = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => ch.send({ type: 'log', level, msg, fields });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A call's logger: its lines carry the supervisor's `callId`, as the supervisor's own line about the call does. */
function callLogger(log: WorkerLogger, callId: string): WorkerLogger {
  const at = (write: WorkerLogger['info']) => (msg: string, fields?: Record<string, unknown>) => write(msg, { ...fields, callId });
  return { debug: at(log.debug), info: at(log.info), warn: at(log.warn), error: at(log.error) };
}

/** Past this many characters of text, an answer is written on its own (about 1 MB). */
const LARGE_ANSWER_CHARS = 1 << 20;

/** Characters of a result's text and data items: enough to tell a large answer, without a walk. */
function textLength(result: ToolResult): number {
  let length = 0;
  if (!Array.isArray(result?.content)) return length;
  for (const item of result.content as Array<{ text?: unknown; data?: unknown }>) {
    if (typeof item?.text === 'string') length += item.text.length;
    if (typeof item?.data === 'string') length += item.data.length;
  }
  return length;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * What is sent instead of a message JSON cannot hold (a BigInt or a cycle in a tool's result,
 * error data or tool list), naming where it is (json-safe.ts): a call's result is an INTERNAL
 * error of that call, error data is dropped, a tool list fails the start, a stats answer goes
 * empty; a log line is dropped. Without it, the write threw at the turn's end and ended the
 * worker, with the other answers written in the same turn. Found only when a write fails, so
 * results cost no walk.
 */
function unsendableAnswer(message: WorkerMessage, error: Error): WorkerMessage | undefined {
  const where = (value: unknown) => unserialisableAt(value) ?? error.message;
  switch (message.type) {
    case 'result':
      return { type: 'error', id: message.id, error: { code: 'INTERNAL', message: `the tool's result cannot be written as JSON: ${where(message.result)}` } };
    case 'error':
      return { type: 'error', id: message.id, error: { code: message.error.code, message: message.error.message } };
    case 'ready':
      return { type: 'fatal', error: { code: 'BAD_INPUT', message: `the worker's tool list cannot be written as JSON: ${where(message.tools)}` } };
    case 'stats':
      return { type: 'stats', id: message.id, stats: {} };
    default:
      return undefined;
  }
}
