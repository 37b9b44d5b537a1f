/** Reading an upstream answer's body, and saying how far it came when it fails (api-client.ts). */
import type { Dispatcher } from 'undici';

/** An answer whose headers came, for a message about its body failing. */
export interface Answer {
  status: number;
  type: string | undefined;
  /** Its Content-Length, if given. */
  declared: number | undefined;
  /** Bytes of its body read so far, when counted (readCapped). */
  bytes: { count: number } | undefined;
}

/** How far an answer's body had come: `after 12 bytes`, `short of the 100 bytes its Content-Length announced`. */
function bodySoFar(answer: Answer): string {
  if (answer.bytes !== undefined) return `after ${answer.bytes.count} bytes`;
  return answer.declared === undefined ? 'part way' : `short of the ${answer.declared} bytes its Content-Length announced`;
}

function answerName(answer: Answer): string {
  return `HTTP ${answer.status}${answer.type === undefined ? '' : ` (${answer.type.slice(0, 100)})`}`;
}

/**
 * The deadline passed while the body was read. Why: "timed out" alone read as an API that never
 * answered, while an event stream (`text/event-stream`, a watch) answers at once and never ends,
 * and a POST that timed out so had been acted on.
 */
export function unendedBody(answer: Answer): string {
  const stream = /^(text\/event-stream|application\/(x-ndjson|ndjson|jsonl|x-jsonlines|jsonlines|json-seq))\b/i.test(answer.type ?? '') ? '; a stream that does not end cannot be one tool result' : '';
  return `the API answered ${answerName(answer)}, but its body had not ended ${bodySoFar(answer)}${stream}`;
}

/** The connection failed in the body: the API answered (and, for a POST, may have acted). */
export function brokenBody(answer: Answer): string {
  return `the API answered ${answerName(answer)}, then its body broke off ${bodySoFar(answer)}`;
}

/**
 * The body up to `maxBytes`, read with events: async iteration cost ~2 µs more per response.
 * `progress.count` is the bytes read so far, for a message if the read fails.
 */
export function readCapped(stream: Dispatcher.ResponseData['body'], maxBytes: number, progress: { count: number }): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (buffer: Buffer) => {
      if (size + buffer.length > maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - size));
        stream.off('data', onData);
        // undici's body emits an abort error when destroyed: the `error` listener stays to take it.
        stream.destroy();
        resolve({ body: Buffer.concat(chunks), truncated: true });
        return;
      }
      size += buffer.length;
      progress.count = size;
      chunks.push(buffer);
    };
    stream.on('data', onData);
    stream.once('end', () => resolve({ body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), truncated: false }));
    stream.on('error', reject);
  });
}
