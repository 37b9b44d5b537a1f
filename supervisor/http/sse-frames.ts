import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { serializeMessageBytes } from '../preserialized';

/**
 * An SSE `message` event, with an `id` line when the stream is resumable. As bytes: the stream
 * and the EventStore (which keeps it for a resume) hold this one buffer, where a string was
 * copied again by the socket beside the store's (serializeMessageBytes).
 */
export function sseEvent(message: JSONRPCMessage, id?: string): Buffer {
  return serializeMessageBytes(message, id === undefined ? 'event: message\ndata: ' : `id: ${id}\nevent: message\ndata: `, '\n\n');
}

/**
 * An event with an id and empty data (MCP 2025-11-25: "prime the client to reconnect"), so a
 * stream cut before its first message can be resumed. Decision, as the SDK's server: not for
 * earlier revisions, whose clients (the SDK's before 1.23) fail on an event without data.
 */
export function primingEvent(id: string, protocolVersion: string | undefined): string | undefined {
  return protocolVersion !== undefined && protocolVersion >= '2025-11-25' ? `id: ${id}\ndata: \n\n` : undefined;
}

/**
 * Event ids are `<tag>.<stream>.<seq>`: `tag` the session id's first 8 characters (an id of
 * another session is refused, not read as one of this session's streams), `stream` the number of
 * the POST's stream in the session, `seq` the event's number in that stream (0: the priming
 * event). MCP asks ids unique across a session's streams and naming their stream.
 */
export function eventId(tag: string, stream: number, seq: number): string {
  return `${tag}.${stream}.${seq}`;
}

/** The stream and sequence of an event id of the session tagged `tag`; undefined for any other. */
export function parseEventId(id: string, tag: string): { stream: number; seq: number } | undefined {
  const match = /^([^.]+)\.([1-9][0-9]{0,14})\.(0|[1-9][0-9]{0,14})$/.exec(id);
  if (!match || match[1] !== tag) return undefined;
  return { stream: Number(match[2]), seq: Number(match[3]) };
}

/** The JSON-RPC error that takes the place of an answer the client can no longer get. */
export function lostAnswer(id: RequestId, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: -32000, message } };
}
