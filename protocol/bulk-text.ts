import { Socket } from 'node:net';
import type { ToolTexts } from './tool-text';

/**
 * A worker's large tool list goes to the supervisor over a pipe of its own beside IPC, as bytes.
 * Why: Node's IPC writes JSON, so the list's text (1.9 MB of JSON for GitHub's 1,226 tools) had
 * every quote escaped by JSON.stringify in the worker, then was decoded, split and parsed in the
 * supervisor: ~20-30 ms of both processes, in a row, on the way to the first tools/list.
 * supervisor/pools/spare-worker.ts opens the pipe as the worker's fd BULK_FD and names it in
 * BULK_FD_ENV; supervisor/pools/bulk-reader.ts reads it.
 */
export const BULK_FD = 4;
export const BULK_FD_ENV = 'MCPVISOR_BULK_FD';
/** Shorter lists go inline in `ready`: the pipe pays off for large ones only. */
export const BULK_MIN_CHARS = 64 * 1024;

/** A ToolTexts whose `text` was written to the bulk pipe: `bulk` bytes, latin1 (the text is ASCII). */
export interface BulkToolTexts {
  bulk: number;
  names: string[];
  spans: number[];
}

export function isBulkToolTexts(tools: unknown): tools is BulkToolTexts {
  return typeof tools === 'object' && tools !== null && typeof (tools as { bulk?: unknown }).bulk === 'number';
}

/** The pipe's fd, when claimBulkPipe found one; opened on first use. */
let pipeFd: number | undefined;
let pipe: Socket | null | undefined;

/** In a worker, at its start: takes the pipe's fd from the environment (its children get neither). */
export function claimBulkPipe(env: NodeJS.ProcessEnv = process.env): void {
  const fd = Number(env[BULK_FD_ENV]);
  delete env[BULK_FD_ENV];
  if (fd === BULK_FD) pipeFd = fd;
}

/**
 * `tools` as `ready` should carry them: a large text written to the bulk pipe and replaced by its
 * length, anything else as it is (no pipe: a worker not forked by the supervisor's pools).
 */
export function viaBulkPipe<T>(tools: T | ToolTexts): T | ToolTexts | BulkToolTexts {
  const texts = tools as ToolTexts;
  if (Array.isArray(tools) || typeof texts.text !== 'string' || texts.text.length < BULK_MIN_CHARS) return tools;
  pipe ??= openPipe();
  if (pipe === null) return tools;
  const bytes = Buffer.from(texts.text, 'latin1');
  pipe.write(bytes);
  return { bulk: bytes.length, names: texts.names, spans: texts.spans };
}

function openPipe(): Socket | null {
  if (pipeFd === undefined) return null;
  try {
    const socket = new Socket({ fd: pipeFd, readable: false, writable: true });
    // Never what keeps a worker alive; a supervisor gone is seen on the IPC channel.
    socket.unref();
    socket.on('error', () => undefined);
    return socket;
  } catch {
    return null;
  }
}
