import { fdExhaustedReason, isFdExhaustion } from '../../protocol/fd-limit';

/**
 * What went wrong in a failed undici request, for messages: its code and its own words
 * (`UND_ERR_SOCKET: bad response`, `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`). Why both:
 * the code alone left users guessing (undici answers a server's stray `100 Continue` with
 * UND_ERR_SOCKET, "bad response"), the message alone is not stable enough to search for.
 */
export function networkReason(error: unknown): string {
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  const code = err?.code ?? err?.cause?.code;
  const message = (err?.cause?.code === code && err?.cause?.message) || err?.message || String(error);
  if (code === undefined) return message;
  // undici says only `EMFILE`: name the limit the worker reached, and where it is raised.
  if (isFdExhaustion({ code })) return fdExhaustedReason({ code }, { retry: true });
  return message.includes(code) || message === '' ? code : `${code}: ${message}`;
}
