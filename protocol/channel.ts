import type { ChildProcess } from 'node:child_process';
import type { MessagePort } from 'node:worker_threads';
import { outOfMemoryNote } from './exit-reason';

/**
 * The one thing the RPC needs from a transport: send, receive, and learn that it closed. Adapters
 * below cover a forked child (supervisor side), the parent (worker side) and a MessagePort.
 */
export interface Channel<Out, In> {
  send(message: Out): void;
  /** Sends at once what `send` has queued (before the process exits). */
  flush(): void;
  onMessage(handler: (message: In) => void): () => void;
  /** Called once when the channel can carry no more messages. */
  onClose(handler: (reason: string) => void): () => void;
}

/**
 * Process channels write the messages sent in one turn of the event loop as one IPC message (an
 * array when there are several), at the end of that turn. Why: on this 2-vCPU VM one IPC write
 * that wakes the idle other process held the supervisor ~60 µs per call (the woken process takes
 * its core), the largest item of its profile under 20 HTTP sessions calling one api worker; under
 * load ~5 calls of one turn now share that write. Protocol messages are objects, so an array is
 * always a batch.
 */
function batching<Out>(write: (payload: Out | Out[]) => void, unsendable?: Unsendable<Out>): Pick<Channel<Out, never>, 'send' | 'flush'> {
  let queue: Out[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    try {
      write(batch.length === 1 ? batch[0] : batch);
    } catch (error) {
      if (!unsendable) throw error;
      // One message that cannot be written (a BigInt or a cycle in a result: JSON IPC) threw from
      // this turn's end, which ended the worker and lost the batch's other answers with it.
      for (const message of batch) {
        try {
          write(message);
        } catch (cause) {
          const replacement = unsendable(message, cause as Error);
          if (replacement !== undefined) write(replacement);
        }
      }
    }
  };
  return {
    send(message) {
      queue.push(message);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/** Hands each message of an IPC payload (one message or a batch) to `handler`. */
function unbatching<In>(handler: (message: In) => void): (payload: unknown) => void {
  return (payload) => {
    if (!Array.isArray(payload)) return handler(payload as In);
    for (const message of payload) handler(message as In);
  };
}

/** Supervisor side of a `fork()`ed worker: messages over IPC, closed on exit or disconnect. */
export function childProcessChannel<Out, In>(child: ChildProcess): Channel<Out, In> {
  return {
    // A send after the child died is a no-op; its pending calls fail through onClose.
    ...batching<Out>((payload) => {
      if (child.connected) child.send(payload as never, (error) => void error);
    }),
    onMessage(handler) {
      const listener = unbatching(handler);
      child.on('message', listener);
      return () => child.off('message', listener);
    },
    onClose(handler) {
      let done = false;
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        if (done) return;
        done = true;
        handler(signal ? `worker exited on signal ${signal}${outOfMemoryNote(child, signal)}` : `worker exited with code ${code}`);
      };
      const onDisconnect = () => {
        // Exit usually follows at once and gives the better reason; wait for it briefly.
        setTimeout(() => onExit(child.exitCode, child.signalCode), 200).unref();
      };
      child.on('exit', onExit);
      child.on('disconnect', onDisconnect);
      return () => {
        child.off('exit', onExit);
        child.off('disconnect', onDisconnect);
      };
    },
  };
}

/** What to send instead of a message that cannot be written (undefined: nothing). */
export type Unsendable<Out> = (message: Out, error: Error) => Out | undefined;

/**
 * Worker side of a `fork()`: talks to the parent over `process.send`. A message that cannot be
 * written as JSON is replaced by what `unsendable` gives (without it, the write's error is thrown).
 */
export function parentProcessChannel<Out, In>(unsendable?: Unsendable<Out>): Channel<Out, In> {
  if (typeof process.send !== 'function') {
    throw new Error('this module must be started by the supervisor with an IPC channel (fork)');
  }
  return {
    ...batching<Out>((payload) => {
      if (process.connected) process.send?.(payload as never, undefined, undefined, (error) => void error);
    }, unsendable),
    onMessage(handler) {
      const listener = unbatching(handler);
      process.on('message', listener);
      return () => process.off('message', listener);
    },
    onClose(handler) {
      const listener = () => handler('supervisor disconnected');
      process.on('disconnect', listener);
      return () => process.off('disconnect', listener);
    },
  };
}

/** Either end of a `MessageChannel` (threads, and unit tests of the RPC). */
export function messagePortChannel<Out, In>(port: MessagePort): Channel<Out, In> {
  return {
    send(message) {
      port.postMessage(message);
    },
    flush() {
      // postMessage sends at once.
    },
    onMessage(handler) {
      const listener = (message: unknown) => handler(message as In);
      port.on('message', listener);
      return () => port.off('message', listener);
    },
    onClose(handler) {
      const listener = () => handler('message port closed');
      port.on('close', listener);
      return () => port.off('close', listener);
    },
  };
}
