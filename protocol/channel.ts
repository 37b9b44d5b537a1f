import type { ChildProcess } from 'node:child_process';
import type { MessagePort } from 'node:worker_threads';

/**
 * The one thing the RPC needs from a transport: send, receive, and learn that it closed. Adapters
 * below cover a forked child (supervisor side), the parent (worker side) and a MessagePort.
 */
export interface Channel<Out, In> {
  send(message: Out): void;
  onMessage(handler: (message: In) => void): () => void;
  /** Called once when the channel can carry no more messages. */
  onClose(handler: (reason: string) => void): () => void;
}

/** Supervisor side of a `fork()`ed worker: messages over IPC, closed on exit or disconnect. */
export function childProcessChannel<Out, In>(child: ChildProcess): Channel<Out, In> {
  return {
    send(message) {
      // A send after the child died is a no-op; its pending calls fail through onClose.
      if (child.connected) child.send(message as never, (error) => void error);
    },
    onMessage(handler) {
      const listener = (message: unknown) => handler(message as In);
      child.on('message', listener);
      return () => child.off('message', listener);
    },
    onClose(handler) {
      let done = false;
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        if (done) return;
        done = true;
        handler(signal ? `worker exited on signal ${signal}` : `worker exited with code ${code}`);
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

/** Worker side of a `fork()`: talks to the parent over `process.send`. */
export function parentProcessChannel<Out, In>(): Channel<Out, In> {
  if (typeof process.send !== 'function') {
    throw new Error('this module must be started by the supervisor with an IPC channel (fork)');
  }
  return {
    send(message) {
      if (process.connected) process.send?.(message as never, undefined, undefined, (error) => void error);
    },
    onMessage(handler) {
      const listener = (message: unknown) => handler(message as In);
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
